import { createHash, randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { statSync, type Dirent } from 'node:fs';
import { dirname, join } from 'node:path';
import { CommandFailed, runCommand } from './command-runner';
import { validRefName } from './ref-names';
import { ownerGone, ownerTag, parseOwnerTag } from '@app/platform';

/*
 * The git command line, run from the command helper, for the work libgit2 lacks or does slower:
 * creating, cloning, collecting and measuring repositories, and the plumbing that describes a push.
 * Every function takes the bare repository's path; LocalGitRepositories resolves it from the project.
 */

/**
 * Where a project's bare repository lives: `@hashed/ab/cd/<sha256 of the id>.git`, as GitLab's hashed
 * storage, so a rename or a transfer never moves a directory.
 */
export function repositoryPath(dataDir: string, projectId: number): string {
  const hash = createHash('sha256').update(String(projectId)).digest('hex');
  return join(dataDir, 'repositories', '@hashed', hash.slice(0, 2), hash.slice(2, 4), `${hash}.git`);
}

/**
 * Whether the repository at `path` (as `repositoryPath` names it) is not on disk yet, a fork still
 * being copied, rather than lost: its directory does not exist while the repositories' root
 * (`<dataDir>/repositories/@hashed`) does. A missing root (a data volume not mounted) or any error
 * other than "no such entry" (permissions) is not this: reads then fail loudly instead of finding an
 * empty repository.
 */
export function notOnDiskYet(path: string): boolean {
  try {
    if (statSync(path, { throwIfNoEntry: false })) return false;
    return statSync(dirname(dirname(dirname(path))), { throwIfNoEntry: false })?.isDirectory() ?? false;
  } catch {
    return false;
  }
}

/** Where a project's cached repository archives live; removed with its repository. */
export function archiveCachePath(dataDir: string, projectId: number): string {
  return join(dataDir, 'cache', 'archives', String(projectId));
}

/** A branch name git accepts for HEAD (checked by the project's validation too). */
const BRANCH = /^[^\s~^:?*[\\]+$/;

/** git's standard output; run from the command helper, so the server's event loop never forks. */
async function git(args: string[], cwd?: string): Promise<string> {
  const { stdout } = await runCommand('git', args, cwd);
  return stdout.toString();
}

export async function exists(path: string): Promise<boolean> {
  return stat(join(path, 'HEAD')).then(
    () => true,
    () => false,
  );
}

/**
 * What `git init --bare --template=` writes on Linux, plus `http.receivepack` (pushes over HTTP): the
 * format version, the file-mode probe's answer and the bare flag. git's template adds only samples
 * (hooks/*.sample, info/exclude, description) that a bare repository behind Lode never reads.
 */
const BARE_CONFIG = `[core]
\trepositoryformatversion = 0
\tfilemode = true
\tbare = true
[http]
\treceivepack = true
`;
const BARE_DIRECTORIES = ['objects/info', 'objects/pack', 'refs/heads', 'refs/tags'];

/**
 * An empty bare repository whose HEAD names the project's default branch; a no-op when it exists.
 * Written here rather than by `git init` and `git config`: those two processes cost some 40 ms of CPU
 * a project (the template's files included), the whole of a creation's cost at 100 creations a second.
 */
export async function initBare(path: string, defaultBranch = 'master'): Promise<void> {
  if (await exists(path)) return;
  if (!validRefName(defaultBranch)) throw new Error(`bad branch name ${defaultBranch}`);
  await mkdir(dirname(path), { recursive: true });
  // Built beside the target and renamed in: a crash never leaves a half-made repository under the real name.
  const tmp = temporaryFor(path);
  try {
    for (const dir of BARE_DIRECTORIES) await mkdir(join(tmp, dir), { recursive: true });
    await writeFile(join(tmp, 'config'), BARE_CONFIG);
    await writeFile(join(tmp, 'HEAD'), `ref: refs/heads/${defaultBranch}\n`);
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    if (!(await exists(path))) throw err;
  }
}

/**
 * A fork's repository: a local bare clone sharing the source's objects by hard link. A copy an
 * earlier attempt landed (its recording failed after) is kept: it lands by one rename, so it is
 * whole, and it may already hold the fork's own pushes, which a fresh copy would lose.
 */
export async function cloneBare(source: string, target: string): Promise<void> {
  if (await exists(target)) return;
  await mkdir(dirname(target), { recursive: true });
  const tmp = temporaryFor(target);
  try {
    await git(['clone', '--quiet', '--bare', '--local', source, tmp]);
    await git(['config', 'http.receivepack', 'true'], tmp);
    await rm(target, { recursive: true, force: true });
    await rename(tmp, target);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

/** Housekeeping: `git gc` and `pack-refs`. */
export async function gc(path: string): Promise<void> {
  // gc would write its one-file commit-graph without the chain's lock, so a graph write from another
  // process (the API's after a push, beside a worker's gc) could leave a chain naming files gc
  // removed. gc leaves the graph alone; it is rewritten whole under the chain's lock after.
  await git(['-c', 'gc.writeCommitGraph=false', 'gc', '--quiet'], path);
  await git(['pack-refs', '--all'], path);
  await writeCommitGraph(path, { replace: true });
}

/**
 * A repository being built beside its real name by initBare or cloneBare: `<name>.git.tmp-<owner>-<random>`,
 * the owner being the building process (see process-owner.ts); older Lodes wrote no owner.
 */
const TEMPORARY = /\.git\.tmp-(?:o\d+-\d+-[0-9a-f]{8}-)?[0-9a-f]+$/;
const temporaryFor = (path: string) => `${path}.tmp-${ownerTag()}-${randomBytes(4).toString('hex')}`;

/** The newest modification time of anything under `path` (the directory itself included). */
async function newestChange(path: string): Promise<number> {
  let newest = (await stat(path)).mtimeMs;
  const entries = await readdir(path, { withFileTypes: true }).catch(() => []);
  for (const e of entries) {
    const p = join(path, e.name);
    const t = e.isDirectory() ? await newestChange(p) : (await stat(p).catch(() => undefined))?.mtimeMs;
    if (t !== undefined && t > newest) newest = t;
  }
  return newest;
}

/**
 * Removes the `*.git.tmp-*` directories a crash left mid-init or mid-fork: at once when its name says
 * its builder is a process of this machine that is gone (a start after `kill -9`), else once it has not
 * changed for `quietMs`: another process sharing the data directory may be building it right now (a
 * clone links files into it continuously until it is renamed into place).
 */
export async function removeStaleTemporaries(dataDir: string, quietMs: number): Promise<string[]> {
  const removed: string[] = [];
  for await (const { dir, entry } of hashedEntries(dataDir)) {
    if (!entry.isDirectory() || !TEMPORARY.test(entry.name)) continue;
    const path = join(dir, entry.name);
    const owner = parseOwnerTag(entry.name.slice(entry.name.lastIndexOf('.tmp-')));
    const changed = await newestChange(path).catch(() => undefined);
    if (changed === undefined) continue;
    if (!(owner && ownerGone(owner)) && Date.now() - changed < quietMs) continue;
    await rm(path, { recursive: true, force: true });
    removed.push(path);
  }
  return removed;
}

/**
 * Repositories made for a project whose event is not written yet: one file per project id under
 * `repositories/.creating`, naming the process that made it. A process killed between the two leaves
 * its marker, and a later start removes the repository when no project got the id.
 */
const creatingDir = (dataDir: string) => join(dataDir, 'repositories', '.creating');

export async function markCreating(dataDir: string, projectId: number): Promise<void> {
  await mkdir(creatingDir(dataDir), { recursive: true });
  await writeFile(join(creatingDir(dataDir), String(projectId)), `${ownerTag()}\n`);
}

export async function unmarkCreating(dataDir: string, projectId: number): Promise<void> {
  await rm(join(creatingDir(dataDir), String(projectId)), { force: true });
}

/**
 * The project ids whose creation was left unfinished: their maker is a process of this machine that
 * is gone, or (another machine's, or unreadable) the marker has not changed for `quietMs`.
 */
export async function abandonedCreations(dataDir: string, quietMs: number): Promise<number[]> {
  const ids: number[] = [];
  for (const name of await readdir(creatingDir(dataDir)).catch(() => [] as string[])) {
    if (!/^\d+$/.test(name)) continue;
    const path = join(creatingDir(dataDir), name);
    const [text, info] = await Promise.all([readFile(path, 'utf8').catch(() => ''), stat(path).catch(() => undefined)]);
    if (!info) continue;
    const owner = parseOwnerTag(text);
    if ((owner && ownerGone(owner)) || Date.now() - info.mtimeMs >= quietMs) ids.push(Number(name));
  }
  return ids.sort((a, b) => a - b);
}

/** Every entry of the storage's `@hashed/ab/cd` directories, with the directory it is in. */
async function* hashedEntries(dataDir: string): AsyncGenerator<{ dir: string; entry: Dirent }> {
  const root = join(dataDir, 'repositories', '@hashed');
  const list = (dir: string) => readdir(dir, { withFileTypes: true }).catch(() => [] as Dirent[]);
  for (const a of await list(root)) {
    if (!a.isDirectory()) continue;
    for (const b of await list(join(root, a.name))) {
      if (!b.isDirectory()) continue;
      const dir = join(root, a.name, b.name);
      for (const entry of await list(dir)) yield { dir, entry };
    }
  }
}

/** Every bare repository under the storage (`@hashed/ab/cd/<hash>.git`), half-built ones left out. */
export async function storedRepositories(dataDir: string): Promise<string[]> {
  const found: string[] = [];
  for await (const { dir, entry } of hashedEntries(dataDir))
    if (entry.isDirectory() && entry.name.endsWith('.git')) found.push(join(dir, entry.name));
  return found.sort();
}

/**
 * What a crash left half-written under the data directory's git parts, untouched for `olderThanMs`:
 * repositories mid-create or mid-fork (`*.git.tmp-*`), archives mid-write (`cache/archives/<id>/*.tmp-*`)
 * and a pre-receive script mid-install (`hooks/.pre-receive-*`).
 */
export async function leftoverTemporaries(dataDir: string, olderThanMs: number): Promise<string[]> {
  const candidates: string[] = [];
  const list = (dir: string) => readdir(dir, { withFileTypes: true }).catch(() => []);
  const hashed = join(dataDir, 'repositories', '@hashed');
  for (const a of await list(hashed))
    for (const b of a.isDirectory() ? await list(join(hashed, a.name)) : [])
      for (const e of b.isDirectory() ? await list(join(hashed, a.name, b.name)) : [])
        if (TEMPORARY.test(e.name)) candidates.push(join(hashed, a.name, b.name, e.name));
  const archives = join(dataDir, 'cache', 'archives');
  for (const project of await list(archives))
    for (const e of project.isDirectory() ? await list(join(archives, project.name)) : [])
      if (/\.tmp-[0-9a-f]+$/.test(e.name)) candidates.push(join(archives, project.name, e.name));
  for (const e of await list(join(dataDir, 'hooks')))
    if (e.name.startsWith('.pre-receive-')) candidates.push(join(dataDir, 'hooks', e.name));
  const left: string[] = [];
  for (const path of candidates) {
    const changed = await newestChange(path).catch(() => undefined);
    if (changed !== undefined && Date.now() - changed >= olderThanMs) left.push(path);
  }
  return left;
}

/**
 * `git fsck` (full: every object read and checked, every link followed): the lines that say what is
 * wrong when it fails, none when the repository is sound. Notices (an empty repository's unborn
 * HEAD) and dangling objects (left by force pushes, removed by gc) are no fault.
 */
export async function fsck(path: string): Promise<string[]> {
  try {
    await runCommand('git', ['fsck', '--no-progress', '--no-dangling'], path);
    return [];
  } catch (err) {
    if (!(err instanceof CommandFailed)) throw err;
    const lines = `${err.result.stdout.toString()}\n${err.result.stderr.toString()}`
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('notice:'));
    return lines.length ? lines : [err.message];
  }
}

export async function removeRepository(path: string): Promise<void> {
  await rm(path, { recursive: true, force: true });
}

/** What `git count-objects -v` tells of the object store: its bytes, and how many loose objects and packs it holds. */
export interface ObjectStore {
  bytes: number;
  loose: number;
  packs: number;
}

/**
 * The object store's size on disk, from `git count-objects -v` (loose objects, packs, and garbage;
 * reported in KiB), with its loose object and pack counts. One git process at C speed, instead of a
 * walk of every loose object file from Node, which grew with every push (70-100 ms at 1,800 loose
 * objects, under load). The few kilobytes of refs, config and hooks are left out: the figure is the
 * weight of the history.
 */
export async function objectStore(path: string): Promise<ObjectStore> {
  const out = await git(['count-objects', '-v'], path).catch(() => '');
  const store = { bytes: 0, loose: 0, packs: 0 };
  for (const line of out.split('\n')) {
    const [key, value] = line.split(': ');
    const n = parseInt(value, 10) || 0;
    if (key === 'size' || key === 'size-pack' || key === 'size-garbage') store.bytes += n * 1024;
    else if (key === 'count') store.loose = n;
    else if (key === 'packs') store.packs = n;
  }
  return store;
}

/**
 * Packs the loose objects and rolls small packs into bigger ones (`git repack --geometric=2 -d`), so
 * that neither pile up with pushes: each API commit leaves three or four loose objects and a small
 * push a pack, and every later object lookup and `count-objects` pays for each. Loose objects go
 * into the new pack whether reachable or not (nothing is pruned), packs it did not roll up (one a
 * push is writing meanwhile) are left alone, and readers that miss a removed loose object find it
 * in the pack (git and libgit2 re-read the pack list on a miss): safe beside pushes and reads.
 */
export async function repackIncrementally(path: string): Promise<void> {
  await git(['-c', 'pack.writeBitmaps=false', 'repack', '-d', '-l', '-q', '--geometric=2'], path);
}

/** A commit-graph file: how many commits it holds. */
export interface CommitGraphFile {
  commits: number;
  /** Whether it carries changed-path Bloom filters (Lode writes none; another git may have). */
  bloom: boolean;
}

/**
 * The commit-graph files git reads, as it picks them: the one file `objects/info/commit-graph` (what
 * `git gc` writes) when it is there, else the layers its split chain names; [] without a graph.
 * Read from git's format: an 8-byte header (`CGPH`, versions, the chunk count), a table of 12-byte
 * chunk entries (id, offset), and the OID fanout's last entry, which counts the file's commits.
 */
export async function commitGraphFiles(path: string): Promise<CommitGraphFile[]> {
  const info = join(path, 'objects', 'info');
  const single = await commitGraphFile(join(info, 'commit-graph')).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  if (single) return [single];
  const chain = await readFile(join(info, 'commit-graphs', 'commit-graph-chain'), 'utf8').catch(() => '');
  const files: CommitGraphFile[] = [];
  for (const hash of chain.split('\n').filter(Boolean))
    files.push(await commitGraphFile(join(info, 'commit-graphs', `graph-${hash}.graph`)));
  return files;
}

/** One commit-graph file's commit count and chunks, from its first bytes and one fanout entry (a graph of 1M commits weighs 40 MB and more). */
async function commitGraphFile(file: string): Promise<CommitGraphFile> {
  const handle = await open(file, 'r');
  try {
    const header = Buffer.alloc(8);
    await handle.read(header, 0, 8, 0);
    if (header.subarray(0, 4).toString('latin1') !== 'CGPH') throw new Error(`${file} is no commit-graph file`);
    const table = Buffer.alloc(header[6] * 12);
    await handle.read(table, 0, table.length, 8);
    const chunks = new Map<string, number>();
    for (let i = 0; i < header[6]; i++)
      chunks.set(table.subarray(i * 12, i * 12 + 4).toString('latin1'), Number(table.readBigUInt64BE(i * 12 + 4)));
    const fanout = chunks.get('OIDF');
    if (fanout === undefined) throw new Error(`${file} has no fanout`);
    const last = Buffer.alloc(4);
    await handle.read(last, 0, 4, fanout + 255 * 4);
    return { commits: last.readUInt32BE(0), bloom: chunks.has('BIDX') && chunks.has('BDAT') };
  } finally {
    await handle.close();
  }
}

/** The commits the repository's commit-graph holds (0 without one, or when it cannot be read). */
export async function commitGraphCommits(path: string): Promise<number> {
  const files = await commitGraphFiles(path).catch(() => []);
  return files.reduce((n, f) => n + f.commits, 0);
}

/**
 * How old a commit-graph lock file must be to count as left by a writer that was killed: a write
 * adds what is new to the graph, which takes well under a second at 20,000 commits.
 */
const STALE_GRAPH_LOCK_MS = 10 * 60_000;

/** The lock files of the commit-graph: the split chain's (Lode's writes) and the one file's (`git gc`'s). */
const graphLocks = (path: string) => [
  join(path, 'objects', 'info', 'commit-graphs', 'commit-graph-chain.lock'),
  join(path, 'objects', 'info', 'commit-graph.lock'),
];

/**
 * Removes the commit-graph lock files a writer killed mid-write left behind (older than
 * STALE_GRAPH_LOCK_MS): the chain's would refuse every later write, and the one file's (an older
 * Lode's gc, or another git's) would make a `git gc` that writes the graph fail.
 */
async function removeStaleGraphLocks(path: string): Promise<void> {
  for (const lock of graphLocks(path)) {
    const locked = await stat(lock).catch(() => undefined);
    if (locked && Date.now() - locked.mtimeMs >= STALE_GRAPH_LOCK_MS) await rm(lock, { force: true });
  }
}

/**
 * Adds the commits the refs reach to the repository's commit-graph, to its split chain (a layer
 * of what is new, merged with the layers below as they grow, so a write costs about what is new);
 * with `replace`, the chain is written anew from what the refs reach (after gc, which may have
 * pruned commits older layers hold). receive-pack writes none, and
 * without one every history walk parses each commit from the object store: the commits API's id
 * list per tip (the first page after a push), `rev-list --count`, a path's history. Measured on a
 * 20,000-commit history: the whole walk 130 -> 10-20 ms, a path's history 100-170 -> 50-70 ms.
 *
 * No changed-path Bloom filters (they would take a path's history to 10-20 ms): git 2.39's filters
 * hash non-ASCII path bytes differently on x86-64 and arm64, so a data directory moved between the
 * two would miss commits in a path's history (git 2.46 fixed it with a second filter version). git
 * copies the filters an existing graph has into what it writes unless told not to read them, so
 * filters another git wrote go as the layers holding them are merged or replaced.
 *
 * Answers false, writing nothing, while another writer holds the chain's lock (another process; what
 * it leaves out, the next write adds).
 */
export async function writeCommitGraph(path: string, { replace = false } = {}): Promise<boolean> {
  await removeStaleGraphLocks(path);
  if (
    await stat(graphLocks(path)[0]).then(
      () => true,
      () => false,
    )
  )
    return false;
  try {
    await git(
      [
        '-c',
        'commitGraph.readChangedPaths=false',
        'commit-graph',
        'write',
        '--reachable',
        replace ? '--split=replace' : '--split',
        '--no-progress',
      ],
      path,
    );
    return true;
  } catch (err) {
    // Lost the race for the lock to a writer that started meanwhile (the path is in git's message in
    // every language).
    if (err instanceof CommandFailed && err.message.includes('commit-graph-chain.lock')) return false;
    throw err;
  }
}

/** The commit a branch points at, or undefined when it does not exist (or the name is not a branch name). */
export async function branchTip(path: string, branch: string): Promise<string | undefined> {
  if (!BRANCH.test(branch)) return undefined;
  const out = await git(['rev-parse', '--verify', '-q', `refs/heads/${branch}^{commit}`], path).catch(() => '');
  return out.trim() || undefined;
}

/** Commits reachable from `tip`: a walk of the whole history (GitLab 10.x counts the same way). */
export async function countCommits(path: string, tip: string): Promise<number> {
  const out = await git(['rev-list', '--count', tip, '--'], path).catch(() => '0');
  return parseInt(out.trim(), 10) || 0;
}

/**
 * How many commits `tip` has that `ancestor` lacks, when `ancestor` is an ancestor of `tip` (a
 * fast-forward); undefined otherwise (or when `ancestor` is gone). One walk of what lies between.
 */
export async function commitsAhead(path: string, ancestor: string, tip: string): Promise<number | undefined> {
  const out = await git(['rev-list', '--count', '--left-right', `${ancestor}...${tip}`, '--'], path).catch(() => '');
  const [behind, ahead] = out
    .trim()
    .split('\t')
    .map((n) => parseInt(n, 10));
  return behind === 0 && Number.isInteger(ahead) ? ahead : undefined;
}

/** The branch HEAD names (`git symbolic-ref`), or undefined when HEAD is detached or unreadable. */
export async function headBranch(path: string): Promise<string | undefined> {
  const out = await git(['symbolic-ref', '-q', 'HEAD'], path).catch(() => '');
  const ref = out.trim();
  return ref.startsWith('refs/heads/') ? ref.slice('refs/heads/'.length) : undefined;
}

/** Points HEAD at a branch, so clones check it out (the project's default branch). */
export async function setHeadBranch(path: string, branch: string): Promise<void> {
  if (!BRANCH.test(branch)) throw new Error(`bad branch name ${branch}`);
  await git(['symbolic-ref', 'HEAD', `refs/heads/${branch}`], path);
}

/** Runs git in a repository and answers its standard output (for read-only plumbing such as rev-list and log). */
export async function read(path: string, args: string[]): Promise<string> {
  return git(args, path);
}

/** A `for-each-ref` listing (`args` after it): nothing for a repository not on disk yet, which has no refs. */
export async function readRefListing(path: string, args: string[]): Promise<string> {
  return git(['for-each-ref', ...args], path).catch((err: unknown) => {
    if (notOnDiskYet(path)) return '';
    throw err;
  });
}

/** Git's zero object id: the `before` of a ref created, the `after` of one deleted. */
export const isZeroSha = (sha: string): boolean => /^0+$/.test(sha);

/**
 * Moves a ref by compare-and-swap (`git update-ref <ref> <new> <old>`, or `-d <ref> <old>`): true when
 * it moved, false when the ref no longer held `before` (another writer won). Other failures throw.
 */
export async function moveRef(path: string, ref: string, before: string, after: string): Promise<boolean> {
  if (!/^refs\/(heads|tags)\/[^\s~^:?*[\\]+$/.test(ref) || ref.includes('..')) throw new Error(`bad ref ${ref}`);
  const args = isZeroSha(after) ? ['update-ref', '-d', ref, before] : ['update-ref', ref, after, before];
  const { code, stderr } = await runCommand('git', args, path).then(
    (r) => ({ code: r.code, stderr: r.stderr.toString() }),
    (err: unknown) => {
      if (err instanceof CommandFailed) return { code: err.result.code, stderr: err.result.stderr.toString() };
      throw err;
    },
  );
  if (code === 0) return true;
  const now = (await git(['for-each-ref', '--format=%(objectname)', ref], path)).trim();
  if (now !== (isZeroSha(before) ? '' : before)) return false;
  throw new Error(`git update-ref ${ref} failed: ${stderr.trim()}`);
}
