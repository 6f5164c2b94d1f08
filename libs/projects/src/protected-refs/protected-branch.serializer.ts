import { ACCESS_LEVEL_DESCRIPTIONS, type ProtectedBranchRule } from './protected-branch';

/** GitLab 10.x's ProtectedRefAccess entity. */
const serializeAccess = (level: number) => ({
  access_level: level,
  access_level_description: ACCESS_LEVEL_DESCRIPTIONS[level],
});

/** GitLab 10.x's ProtectedBranch entity: no `id` (added in 11.x), one push and one merge level each. */
export const serializeProtectedBranch = (r: ProtectedBranchRule) => ({
  name: r.name,
  push_access_levels: [serializeAccess(r.pushAccessLevel)],
  merge_access_levels: [serializeAccess(r.mergeAccessLevel)],
});
