import { isZeroSha, read, readRefListing } from './git-cli';
import type { PushedCommit, RefCommand, RefUpdate } from './git-repositories';

/** GitLab's push payload shows at most this many commits (`data_builder/push.rb`). */
export const PAYLOAD_COMMITS = 20;

const RECORD = '\x01';
const FIELD = '\x02';

/** Every ref of the repository at `path` and the object it holds (`git for-each-ref`). */
export async function listRefs(path: string): Promise<Map<string, string>> {
  const out = await readRefListing(path, ['--format=%(objectname) %(refname)']);
  const refs = new Map<string, string>();
  for (const line of out.split('\n')) {
    const sp = line.indexOf(' ');
    if (sp > 0) refs.set(line.slice(sp + 1), line.slice(0, sp));
  }
  return refs;
}

/**
 * What each accepted ref update brought, as GitLab's push and tag push hooks show it. Runs git's
 * plumbing in the bare repository after receive-pack has finished. `base` is an existing branch new
 * branches are compared with (GitLab's heuristic), or null.
 */
export async function describeRefUpdates(
  path: string,
  updates: RefCommand[],
  base: string | null,
): Promise<RefUpdate[]> {
  const described: RefUpdate[] = [];
  for (let i = 0; i < updates.length;) {
    const chain = chainAt(updates, i);
    const commits = chain.length > 1 ? await chainCommits(path, chain) : undefined;
    if (commits) {
      chain.forEach((c, k) =>
        described.push({ ...c, checkoutSha: c.after, commits: [commits[k]], totalCommitsCount: 1, message: null }),
      );
      i += chain.length;
    } else described.push(await describe(path, updates[i++], base));
  }
  return described;
}

/**
 * The updates from `i` on that chain on one branch, each from the one before it (the repository API's
 * batched commits push one update per commit): at least the update at `i`.
 */
function chainAt(updates: RefCommand[], i: number): RefCommand[] {
  const chain = [updates[i]];
  for (let j = i + 1; j < updates.length; j++) {
    const [prev, next] = [updates[j - 1], updates[j]];
    if (next.ref !== prev.ref || next.before !== prev.after) break;
    chain.push(next);
  }
  const branch = chain[0].ref.startsWith('refs/heads/');
  return branch && !isZeroSha(chain[0].before) && chain.every((c) => !isZeroSha(c.after)) ? chain : chain.slice(0, 1);
}

/**
 * A chain whose every update brought one commit (its `after`, whose only parent is its `before`),
 * read with one `git log` of the whole range instead of two git processes per update: the commits in
 * the chain's order, or undefined when the chain is not that (then each update is described alone).
 */
async function chainCommits(path: string, chain: RefCommand[]): Promise<PushedCommit[] | undefined> {
  const out = await read(path, [
    'log',
    '-z',
    `--format=${RECORD}%H${FIELD}%P${FIELD}%an${FIELD}%ae${FIELD}%cI${FIELD}%B${FIELD}`,
    '--name-status',
    '--no-renames',
    '--diff-merges=first-parent',
    `--max-count=${chain.length + 1}`,
    chain[chain.length - 1].after,
    `^${chain[0].before}`,
    '--',
  ]);
  const byId = new Map<string, { parents: string; commit: PushedCommit }>();
  for (const record of commitRecords(out)) {
    const cut = record.indexOf(FIELD, record.indexOf(FIELD) + 1);
    const commit = parseCommit(record.slice(0, record.indexOf(FIELD)) + record.slice(cut));
    byId.set(commit.id, { parents: record.slice(record.indexOf(FIELD) + 1, cut), commit });
  }
  if (byId.size !== chain.length) return undefined;
  const commits: PushedCommit[] = [];
  for (const c of chain) {
    const found = byId.get(c.after);
    if (!found || found.parents !== c.before) return undefined;
    commits.push(found.commit);
  }
  return commits;
}

async function describe(path: string, c: RefCommand, base: string | null): Promise<RefUpdate> {
  const update: RefUpdate = {
    ref: c.ref,
    before: c.before,
    after: c.after,
    checkoutSha: null,
    commits: [],
    totalCommitsCount: 0,
    message: null,
  };
  if (isZeroSha(c.after)) return update;
  if (c.ref.startsWith('refs/tags/')) {
    // GitLab's tag push: the tagged commit is the one commit shown, the tag's message is `message`.
    const target = (await read(path, ['rev-parse', '--verify', '-q', `${c.after}^{commit}`]).catch(() => '')).trim();
    update.checkoutSha = target || null;
    if (target) {
      update.commits = await commits(path, [target, '--no-walk']);
      update.totalCommitsCount = update.commits.length;
    }
    const type = (await read(path, ['cat-file', '-t', c.after]).catch(() => '')).trim();
    if (type === 'tag')
      update.message =
        (await read(path, ['for-each-ref', '--format=%(contents)', c.ref]).catch(() => '')).replace(/\n+$/, '') || null;
    return update;
  }
  update.checkoutSha = c.after;
  // A branch update shows the commits it added; a new branch those the default branch lacks
  // (all of them for the first branch).
  const range = [c.after];
  if (!isZeroSha(c.before)) range.push(`^${c.before}`);
  else if (base && `refs/heads/${base}` !== c.ref) range.push(`^refs/heads/${base}`);
  // The shown commits first: fewer than the payload's 20 are all of them, and their number is the
  // total (a push of a few commits costs one git process, not two); 20 may be a part of more.
  update.commits = (await commits(path, [`--max-count=${PAYLOAD_COMMITS}`, ...range])).reverse();
  update.totalCommitsCount = update.commits.length;
  if (update.commits.length === PAYLOAD_COMMITS) {
    const count = await read(path, ['rev-list', '--count', ...range, '--']);
    update.totalCommitsCount = parseInt(count.trim(), 10) || 0;
  }
  return update;
}

/** Commits newest first with the files each added, modified and removed against its first parent. */
async function commits(path: string, args: string[]): Promise<PushedCommit[]> {
  const out = await read(path, [
    'log',
    '-z',
    `--format=${RECORD}%H${FIELD}%an${FIELD}%ae${FIELD}%cI${FIELD}%B${FIELD}`,
    '--name-status',
    '--no-renames',
    '--diff-merges=first-parent',
    ...args,
    '--',
  ]);
  return commitRecords(out).map(parseCommit);
}

/**
 * `git log`'s records, each starting at RECORD and a commit id: a RECORD byte inside a commit
 * message (git keeps control bytes) does not start a record, so it neither splits a commit nor
 * counts as one more (a push's total is the number of records when it is under 20).
 */
function commitRecords(out: string): string[] {
  return out.split(new RegExp(`${RECORD}(?=[0-9a-f]{40,64}${FIELD})`)).filter(Boolean);
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
