import type { Branch } from '@app/git';
import { serializeCommit } from './commit.serializer';

/** What protected branches say about one branch, in GitLab's Branch entity's words. */
export interface BranchProtection {
  protected: boolean;
  developers_can_push: boolean;
  developers_can_merge: boolean;
}

/**
 * Lode has no protected branches yet, so every branch answers as GitLab answers an unprotected one:
 * not protected, and `developers_can_push`/`developers_can_merge` false (GitLab's
 * `protected_branches.developers_can?` finds no rule and says no). The protected-branch work replaces
 * this one function with a lookup of the project's rules (wildcards included).
 */
export function branchProtection(_projectId: number, _branch: string): BranchProtection {
  return { protected: false, developers_can_push: false, developers_can_merge: false };
}

/**
 * GitLab's Branch entity: `merged` as `merged_branch_names` (the default branch's tip descends from the
 * branch's tip and is another commit), `default` as later GitLab adds it (10.x has no such key).
 */
export const serializeBranch = (b: Branch, defaultBranch: string | undefined, protection: BranchProtection) => ({
  name: b.name,
  commit: serializeCommit(b.commit),
  merged: b.merged,
  ...protection,
  default: b.name === defaultBranch,
});
