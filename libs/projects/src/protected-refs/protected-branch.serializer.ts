import { ACCESS_LEVEL_DESCRIPTIONS, type ProtectedBranchRule } from './protected-branch';

/** GitLab 10.x's ProtectedRefAccess entity. */
const serializeAccess = (level: number) => ({
  access_level: level,
  access_level_description: ACCESS_LEVEL_DESCRIPTIONS[level],
});

/**
 * GitLab 10.x's ProtectedBranch entity: no `id` (added in 11.x), one push and one merge level each;
 * and 13.x's `allow_force_push`, which Terraform's `gitlab_branch_protection` reads back.
 */
export const serializeProtectedBranch = (r: ProtectedBranchRule) => ({
  name: r.name,
  push_access_levels: [serializeAccess(r.pushAccessLevel)],
  merge_access_levels: [serializeAccess(r.mergeAccessLevel)],
  allow_force_push: r.allowForcePush ?? false,
});
