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
 * The commands git accepted: those whose ref now holds the proposed value, and the updates of a
 * chain leading there (the repository API's batched commits push one update per commit, each from
 * the commit before it, and move the branch once to the last).
 */
export function acceptedCommands(commands: RefCommand[], refs: Map<string, string>): RefCommand[] {
  const accepted: RefCommand[] = [];
  // Per ref, where the accepted updates after this one start: an update ending there is accepted too.
  const chainStart = new Map<string, string>();
  for (let i = commands.length - 1; i >= 0; i--) {
    const c = commands[i];
    const start = chainStart.get(c.ref);
    const holds = start === undefined && (isZero(c.after) ? !refs.has(c.ref) : refs.get(c.ref) === c.after);
    if (holds || (start !== undefined && !isZero(c.after) && start === c.after)) {
      accepted.unshift(c);
      chainStart.set(c.ref, c.before);
    }
  }
  return accepted;
}

/**
 * Works out, after receive-pack has finished, what a push did: which of the commands were
 * accepted (the ref now holds the new value), and for each what GitLab's push hook shows (read
 * through the git port). The first push into an empty project also names its default branch.
 */
@Injectable()
export class PushInspector {
  constructor(private readonly git: GitRepositories) {}

  async inspect(repo: RepoRef, commands: RefCommand[], projectDefaultBranch: string | null): Promise<InspectedPush> {
    const refs = await this.git.refs(repo);
    const accepted = acceptedCommands(commands, refs);
    const defaultBranch = await this.chooseDefaultBranch(repo, accepted, projectDefaultBranch, refs);
    // New branches are compared with the default branch as it is after this push (GitLab's heuristic).
    const base = defaultBranch ?? projectDefaultBranch;
    const existingBase = base !== null && refs.has(`refs/heads/${base}`) ? base : null;
    // Side by side: neither reads what the other computes, and the statistics' git processes then
    // add nothing to the push's time beyond the describing ones.
    const [updates, statistics] = await Promise.all([
      this.git.describeRefUpdates(repo, accepted, existingBase),
      this.git.statistics(repo, base),
    ]);
    return { updates, defaultBranch, statistics };
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
