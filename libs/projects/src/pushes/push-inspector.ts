import { GitRepositories, type RefCommand, type RepoRef } from '@app/git';
import { Injectable } from '@nestjs/common';
import { isBranchRef, isZeroSha as isZero, type RefUpdate, type RepositoryStatistics } from './repository-push';

export interface InspectedPush {
  updates: RefUpdate[];
  /** The branch that became the project's default, when it had none. */
  defaultBranch: string | null;
  statistics: RepositoryStatistics;
}

/**
 * How old a repository size a push's statistics may take over from an earlier push, instead of
 * measuring the object store again (a git process per push). GitLab refreshes a project's statistics
 * after pushes at most once in 15 minutes (`ProjectCacheWorker`'s lease). Lode's commit count is
 * always exact; the size recorded may leave out what pushes within this long after a measured one
 * added, until the next push past it or housekeeping measures again.
 */
export const PUSH_SIZE_MAX_AGE_MS = 10_000;

/**
 * Works out, after receive-pack has finished, what a push did: for each update that moved its ref
 * (`moved`, see `planChain`), and each earlier move recorded ahead of it (`gaps`), what GitLab's push
 * hook shows (read through the git port). The first push into an empty project also names its
 * default branch.
 */
@Injectable()
export class PushInspector {
  constructor(private readonly git: GitRepositories) {}

  async inspect(
    repo: RepoRef,
    moved: RefCommand[],
    projectDefaultBranch: string | null,
    /** The refs as they stand: at least the pushed ones and the default branch; every one while there is no default branch. */
    refs: Map<string, string>,
    gaps: RefCommand[] = [],
    /** Whether an update of `moved` is a fast-forward (the pre-receive check saw it unforced). */
    isFastForward: (update: RefCommand) => boolean = () => false,
  ): Promise<{ own: InspectedPush; gaps: RefUpdate[] }> {
    const defaultBranch = await this.chooseDefaultBranch(repo, [...gaps, ...moved], projectDefaultBranch, refs);
    // New branches are compared with the default branch as it is after this push (GitLab's heuristic).
    const base = defaultBranch ?? projectDefaultBranch;
    const existingBase = base !== null && refs.has(`refs/heads/${base}`) ? base : null;
    const [updates, described] = await Promise.all([
      this.git.describeRefUpdates(repo, moved, existingBase),
      gaps.length ? this.git.describeRefUpdates(repo, gaps, existingBase) : Promise.resolve([]),
    ]);
    // After the descriptions: a fast-forward of the default branch has had its commits counted
    // there, so the statistics' commit count steps forward by them instead of asking git.
    const baseRef = `refs/heads/${base}`;
    const fastForwards = updates
      .filter((u) => u.ref === baseRef && !isZero(u.before) && !isZero(u.after) && isFastForward(u))
      .map((u) => ({ from: u.before, to: u.after, commits: u.totalCommitsCount }));
    const statistics = await this.git.statistics(repo, base, refs, fastForwards, PUSH_SIZE_MAX_AGE_MS);
    return { own: { updates, defaultBranch, statistics }, gaps: described };
  }

  /**
   * The first push into an empty project names its default branch: the branch HEAD already names
   * when it was pushed, otherwise the first branch created. HEAD is moved there so clones check it out.
   */
  private async chooseDefaultBranch(
    repo: RepoRef,
    accepted: RefCommand[],
    current: string | null,
    refs: Map<string, string>,
  ): Promise<string | null> {
    if (current !== null) return null;
    const created = accepted
      .filter((c) => isBranchRef(c.ref) && isZero(c.before) && !isZero(c.after))
      .map((c) => c.ref.slice('refs/heads/'.length));
    if (!created.length) return null;
    const head = await this.git.headBranch(repo);
    if (head && refs.has(`refs/heads/${head}`)) return head;
    const chosen = created[0];
    await this.git.setHeadBranch(repo, chosen);
    return chosen;
  }
}
