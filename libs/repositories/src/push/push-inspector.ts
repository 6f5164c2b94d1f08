import { GitCli } from '@app/platform';
import { isBranchRef, isTagRef, type PushedCommit, type RefUpdate, type RepositoryStatistics } from '@app/projects';
import type { PushCommand } from './push-commands';

/** GitLab's push payload shows at most this many commits (`data_builder/push.rb`). */
export const PAYLOAD_COMMITS = 20;

const isZero = (sha: string) => /^0+$/.test(sha);
const RECORD = '\x01';
const FIELD = '\x02';

export interface InspectedPush {
  updates: RefUpdate[];
  /** The branch that became the project's default, when it had none. */
  defaultBranch: string | null;
  statistics: RepositoryStatistics;
}

/**
 * Works out, after receive-pack has finished, what a push did: which of the commands were
 * accepted (the ref now holds the new value), and for each what GitLab's push hook shows.
 * Runs git's plumbing in the bare repository: this is part of the transport, not a read API.
 */
export class PushInspector {
  constructor(private readonly repo: string) {}

  async inspect(commands: PushCommand[], projectDefaultBranch: string | null): Promise<InspectedPush> {
    const refs = await this.refs();
    const accepted = commands.filter((c) => (isZero(c.after) ? !refs.has(c.ref) : refs.get(c.ref) === c.after));
    const defaultBranch = await this.chooseDefaultBranch(accepted, projectDefaultBranch, refs);
    // New branches are compared with the default branch as it is after this push (GitLab's heuristic).
    const base = defaultBranch ?? projectDefaultBranch;
    const updates: RefUpdate[] = [];
    for (const c of accepted) updates.push(await this.update(c, base, refs));
    const statistics = await GitCli.statistics(this.repo, base);
    return { updates, defaultBranch, statistics };
  }

  private async refs(): Promise<Map<string, string>> {
    const out = await GitCli.read(this.repo, ['for-each-ref', '--format=%(objectname) %(refname)']);
    const refs = new Map<string, string>();
    for (const line of out.split('\n')) {
      const sp = line.indexOf(' ');
      if (sp > 0) refs.set(line.slice(sp + 1), line.slice(0, sp));
    }
    return refs;
  }

  /**
   * The first push into an empty project names its default branch: the branch HEAD already names
   * when it was pushed, otherwise the first branch created. HEAD is moved there so clones check it out.
   */
  private async chooseDefaultBranch(
    accepted: PushCommand[],
    current: string | null,
    refs: Map<string, string>,
  ): Promise<string | null> {
    if (current !== null) return null;
    const created = accepted
      .filter((c) => isBranchRef(c.ref) && isZero(c.before) && !isZero(c.after))
      .map((c) => c.ref.slice('refs/heads/'.length));
    if (!created.length) return null;
    const head = await GitCli.headBranch(this.repo);
    if (head && refs.has(`refs/heads/${head}`)) return head;
    const chosen = created[0];
    await GitCli.setHeadBranch(this.repo, chosen);
    return chosen;
  }

  private async update(c: PushCommand, base: string | null, refs: Map<string, string>): Promise<RefUpdate> {
    const update: RefUpdate = {
      ref: c.ref,
      before: c.before,
      after: c.after,
      checkoutSha: null,
      commits: [],
      totalCommitsCount: 0,
      message: null,
    };
    if (isZero(c.after)) return update;
    if (isTagRef(c.ref)) {
      // GitLab's tag push: the tagged commit is the one commit shown, the tag's message is `message`.
      const target = (
        await GitCli.read(this.repo, ['rev-parse', '--verify', '-q', `${c.after}^{commit}`]).catch(() => '')
      ).trim();
      update.checkoutSha = target || null;
      if (target) {
        update.commits = await this.commits([target, '--no-walk']);
        update.totalCommitsCount = update.commits.length;
      }
      const type = (await GitCli.read(this.repo, ['cat-file', '-t', c.after]).catch(() => '')).trim();
      if (type === 'tag')
        update.message =
          (await GitCli.read(this.repo, ['for-each-ref', '--format=%(contents)', c.ref]).catch(() => '')).replace(
            /\n+$/,
            '',
          ) || null;
      return update;
    }
    update.checkoutSha = c.after;
    // A branch update shows the commits it added; a new branch those the default branch lacks
    // (all of them for the first branch).
    const range = [c.after];
    if (!isZero(c.before)) range.push(`^${c.before}`);
    else if (base && `refs/heads/${base}` !== c.ref && refs.has(`refs/heads/${base}`))
      range.push(`^refs/heads/${base}`);
    const count = await GitCli.read(this.repo, ['rev-list', '--count', ...range, '--']);
    update.totalCommitsCount = parseInt(count.trim(), 10) || 0;
    if (update.totalCommitsCount > 0)
      update.commits = (await this.commits([`--max-count=${PAYLOAD_COMMITS}`, ...range])).reverse();
    return update;
  }

  /** Commits newest first with the files each added, modified and removed against its first parent. */
  private async commits(args: string[]): Promise<PushedCommit[]> {
    const out = await GitCli.read(this.repo, [
      'log',
      '-z',
      `--format=${RECORD}%H${FIELD}%an${FIELD}%ae${FIELD}%cI${FIELD}%B${FIELD}`,
      '--name-status',
      '--no-renames',
      '--diff-merges=first-parent',
      ...args,
      '--',
    ]);
    return out.split(RECORD).filter(Boolean).map(parseCommit);
  }
}

function parseCommit(record: string): PushedCommit {
  const [id, name, email, timestamp, message, rest = ''] = record.split(FIELD);
  const commit: PushedCommit = {
    id,
    message,
    timestamp,
    author: { name, email },
    added: [],
    modified: [],
    removed: [],
  };
  const tokens = rest
    .split('\0')
    .map((t) => t.replace(/^\n/, ''))
    .filter((t) => t !== '');
  for (let i = 0; i + 1 < tokens.length; i += 2) {
    const [status, path] = [tokens[i], tokens[i + 1]];
    if (status === 'A') commit.added.push(path);
    else if (status === 'D') commit.removed.push(path);
    else commit.modified.push(path);
  }
  return commit;
}
