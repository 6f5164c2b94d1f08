import { CommitIdList } from './commit-lists';
import { read, readRefListing } from './git-cli';
import type { CommitStats, RefName } from './git-repositories';

/*
 * History walks on the git command line (run from the command helper, off the server's loop): a page
 * of a log, commit counts, the refs containing a commit, tags with their messages, blame. libgit2 has
 * no path-limited or date-limited walk with skipping, and git's own walk is the one GitLab runs.
 * Commits are then read one by one through libgit2 (NodegitRepositories), so every answer carries
 * the same commit fields. Paths are taken as written (`--literal-pathspecs`): a `*` or `:(glob)` in a
 * requested path is no pathspec magic.
 */

/** A walk's selection: from one commit or from every ref, limited to a path and a commit-date range. */
export interface WalkFilter {
  /** The resolved commit to walk from; ignored with `all`. */
  sha?: string;
  all: boolean;
  path?: string;
  since?: Date;
  until?: Date;
}

const RECORD = '\x1e';

/** The earliest date git's date parsing reads as it is: it misreads dates before 1970 (1960 came out later than 2021). */
const EARLIEST = Date.UTC(1970, 0, 2);

/**
 * `--since`/`--until` for git: ISO 8601 in UTC (milliseconds dropped; git has none), except from the
 * year 2100 on, which git 2.39's ISO parsing misreads (`--until=2100-01-01T00:00:00Z` matched
 * nothing): there git's raw `<seconds> +0000`, which it reads as a timestamp (above 10^8 seconds).
 * Dates before 1970 are taken as 1970-01-02, where nothing was committed with git.
 */
function gitDate(d: Date): string {
  if (d.getUTCFullYear() >= 2100) return `${Math.floor(d.getTime() / 1000)} +0000`;
  return new Date(Math.max(d.getTime(), EARLIEST)).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function walkArgs(f: WalkFilter): string[] {
  const args: string[] = [];
  if (f.since) args.push(`--since=${gitDate(f.since)}`);
  if (f.until) args.push(`--until=${gitDate(f.until)}`);
  args.push(f.all ? '--all' : f.sha!, '--');
  if (f.path) args.push(f.path);
  return args;
}

/**
 * The ids of one page of the walk, newest first, and each commit's line counts when asked. `--skip`
 * stops git's walk at the page's end, so page N costs the commits before it and no more, never the
 * whole history (bench: page 40 of 100 over 5,000 commits reads 4,000 commits).
 */
export async function logPage(
  path: string,
  f: WalkFilter,
  offset: number,
  limit: number,
  withStats: boolean,
): Promise<{ sha: string; stats?: CommitStats }[]> {
  const args = [
    '--literal-pathspecs',
    '-c',
    'diff.renames=true',
    '-c',
    'log.showRoot=true',
    'log',
    `--skip=${offset}`,
    `--max-count=${limit}`,
  ];
  // A merge's stats are against its first parent, as GitLab's `diff_from_parent`.
  if (withStats) args.push('--numstat', '--no-ext-diff', '--diff-merges=first-parent', `--format=${RECORD}%H`);
  else args.push('--format=%H');
  const out = await read(path, [...args, ...walkArgs(f)]);
  if (!withStats)
    return out
      .split('\n')
      .filter(Boolean)
      .map((sha) => ({ sha }));
  return out
    .split(RECORD)
    .filter(Boolean)
    .map((record) => {
      const [sha, ...lines] = record.split('\n');
      const stats = { additions: 0, deletions: 0, total: 0 };
      for (const line of lines) {
        // `<added>\t<deleted>\t<path>`, or `-\t-\t<path>` for a binary file (no lines, as GitLab counts it).
        const [added, deleted] = line.split('\t', 2).map((n) => parseInt(n, 10));
        if (added > 0) stats.additions += added;
        if (deleted > 0) stats.deletions += deleted;
      }
      stats.total = stats.additions + stats.deletions;
      return { sha, stats };
    });
}

/**
 * Every commit id of the walk, newest first (`git rev-list`, the order `git log` pages through),
 * or undefined when it holds more than `max`: the walk stops there, so a huge history costs no more
 * than the cap before the caller pages through git instead.
 */
export async function commitIds(path: string, f: WalkFilter, max: number): Promise<CommitIdList | undefined> {
  if (max <= 0) return undefined;
  const out = await read(path, ['--literal-pathspecs', 'rev-list', `--max-count=${max + 1}`, ...walkArgs(f)]);
  const list = CommitIdList.parse(out);
  return list.length > max ? undefined : list;
}

/** How many commits the walk holds (`git rev-list --count`). */
export async function countCommits(path: string, f: WalkFilter): Promise<number> {
  const out = await read(path, ['--literal-pathspecs', 'rev-list', '--count', ...walkArgs(f)]);
  return parseInt(out.trim(), 10) || 0;
}

/** The newest commit reachable from `sha` that changed `file` (GitLab's `last_commit_id_for_path`). */
export async function lastCommitFor(path: string, sha: string, file: string): Promise<string | undefined> {
  const out = await read(path, ['--literal-pathspecs', 'rev-list', '--max-count=1', sha, '--', file]);
  return out.trim() || undefined;
}

/** Branches, then tags, whose history contains `sha`, each by name (`git for-each-ref --contains`). */
export async function refsContaining(path: string, sha: string): Promise<RefName[]> {
  const out = await read(path, [
    'for-each-ref',
    `--contains=${sha}`,
    '--format=%(refname)',
    'refs/heads/',
    'refs/tags/',
  ]);
  const refs: RefName[] = [];
  for (const ref of out.split('\n')) {
    if (ref.startsWith('refs/heads/')) refs.push({ type: 'branch', name: ref.slice('refs/heads/'.length) });
    else if (ref.startsWith('refs/tags/')) refs.push({ type: 'tag', name: ref.slice('refs/tags/'.length) });
  }
  return [...refs.filter((r) => r.type === 'branch'), ...refs.filter((r) => r.type === 'tag')];
}

/** A tag as `git for-each-ref` reads it: the object it holds, and an annotated tag's message. */
export interface TagRef {
  name: string;
  /** The tag object of an annotated tag, the commit of a lightweight one. */
  target: string;
  /** An annotated tag's message without its last newline (GitLab's `chomp`); null for a lightweight tag. */
  message: string | null;
}

/** Every tag by name, or only the tag `name` (a pattern for-each-ref may widen, so the caller compares names). */
export async function listTags(path: string, name?: string): Promise<TagRef[]> {
  const out = await readRefListing(path, [
    `--format=${RECORD}%(refname)%00%(objectname)%00%(objecttype)%00%(contents)`,
    name === undefined ? 'refs/tags/' : `refs/tags/${name}`,
  ]);
  return out
    .split(RECORD)
    .filter(Boolean)
    .map((record) => {
      const [ref, target, type, ...rest] = record.split('\0');
      // for-each-ref ends every record with a newline of its own, after the message's.
      const contents = rest.join('\0').replace(/\n$/, '');
      return {
        name: ref.slice('refs/tags/'.length),
        target,
        message: type === 'tag' ? contents.replace(/\r?\n$/, '') : null,
      };
    });
}

/** One line of a blame: the commit that last changed it and its text without the newline. */
export interface BlameLine {
  sha: string;
  line: string;
}

/** `git blame --porcelain` of `file` at commit `sha`, line by line. */
export async function blameLines(path: string, sha: string, file: string): Promise<BlameLine[]> {
  const out = await read(path, ['--literal-pathspecs', 'blame', '--porcelain', sha, '--', file]);
  const lines: BlameLine[] = [];
  let current = '';
  for (const row of out.split('\n')) {
    if (row.startsWith('\t')) lines.push({ sha: current, line: row.slice(1) });
    else if (/^[0-9a-f]{40,64} \d+ \d+/.test(row)) current = row.slice(0, row.indexOf(' '));
  }
  return lines;
}
