import type { Branch } from '@app/git';
import type { BranchProtectionFlags } from '@app/projects';
import { serializeCommit } from './commit.serializer';

/**
 * GitLab's Branch entity: `merged` as `merged_branch_names` (the default branch's tip descends from the
 * branch's tip and is another commit), `default` as later GitLab adds it (10.x has no such key), and
 * `protected`, `developers_can_push`, `developers_can_merge` from the project's rules
 * (`ProtectedBranchPolicy.branchFlags`).
 */
export const serializeBranch = (b: Branch, defaultBranch: string | undefined, protection: BranchProtectionFlags) => ({
  name: b.name,
  commit: serializeCommit(b.commit),
  merged: b.merged,
  ...protection,
  default: b.name === defaultBranch,
});
