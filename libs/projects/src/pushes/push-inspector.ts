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
    refs: Map<string, string>,
    gaps: RefCommand[] = [],
  ): Promise<{ own: InspectedPush; gaps: RefUpdate[] }> {
    const defaultBranch = await this.chooseDefaultBranch(repo, [...gaps, ...moved], projectDefaultBranch, refs);
    // New branches are compared with the default branch as it is after this push (GitLab's heuristic).
    const base = defaultBranch ?? projectDefaultBranch;
    const existingBase = base !== null && refs.has(`refs/heads/${base}`) ? base : null;
    // Side by side: none reads what another computes, and the statistics' git processes then add
    // nothing to the push's time beyond the describing ones.
    const [updates, described, statistics] = await Promise.all([
      this.git.describeRefUpdates(repo, moved, existingBase),
      gaps.length ? this.git.describeRefUpdates(repo, gaps, existingBase) : Promise.resolve([]),
      this.git.statistics(repo, base, refs),
    ]);
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
