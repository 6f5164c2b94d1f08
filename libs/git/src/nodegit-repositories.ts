import { loadPackage } from '@app/platform';
import { existsSync } from 'node:fs';
import { notOnDiskYet } from './git-cli';
import { CommitInfoCache } from './commit-lists';
import { contributorsFromLog } from './contributors-log';
import { TreeListingCache } from './tree-cache';
import type {
  BlobInfo,
  Branch,
  CommitInfo,
  CommitSignature,
  CommitStats,
  CompareLimits,
  Comparison,
  Contributor,
  FileDiff,
  FileEntry,
  PushedCommit,
  TreeEntry,
} from './git-repositories';

/*
 * nodegit ships no types; these are the few shapes this adapter relies on (nodegit 0.28's API),
 * declared once where the library is loaded so that no `any` flows on from it.
 */
interface Oid {
  tostrS(): string;
}
interface GitObject {
  id(): Oid;
  peel(type: number): Promise<GitObject>;
}
interface Signature {
  name(): string;
  email(): string;
  when(): { time(): number; offset(): number };
}
interface Commit {
  id(): Oid;
  sha(): string;
  message(): string;
  author(): Signature;
  committer(): Signature;
  parents(): Oid[];
  /** The `encoding` header, when the commit has one. */
  messageEncoding(): string | null;
  getTree(): Promise<Tree>;
}
interface Tree {
  id(): Oid;
  entries(): NodegitTreeEntry[];
  getEntry(path: string): Promise<NodegitTreeEntry>;
}
interface NodegitTreeEntry {
  id(): Oid;
  name(): string;
  sha(): string;
  path(): string;
  filemode(): number;
  isTree(): boolean;
  isBlob(): boolean;
  isSubmodule(): boolean;
  getTree(): Promise<Tree>;
}
interface Blob {
  id(): Oid;
  rawsize(): number;
  content(): Buffer;
  isBinary(): number | boolean;
}
interface Revwalk {
  sorting(mode: number): void;
  push(oid: Oid): void;
  hide(oid: Oid): void;
  fastWalk(max: number): Promise<Oid[]>;
}
interface DiffFile {
  path(): string;
  mode(): number;
}
interface DiffStats {
  insertions(): number;
  deletions(): number;
}
interface DiffDelta {
  status(): number;
  oldFile(): DiffFile;
  newFile(): DiffFile;
}
interface Diff {
  numDeltas(): number;
  getDelta(index: number): DiffDelta;
  findSimilar(options: { flags: number }): Promise<void>;
  toBuf(format: number): Promise<string>;
  getStats(): Promise<DiffStats>;
}
interface Odb {
  addDiskAlternate(objectsDir: string): Promise<number>;
}
interface Repo {
  getCommit(oid: Oid): Promise<Commit>;
  getBlob(oid: Oid): Promise<Blob>;
  getReferenceNames(type: number): Promise<string[]>;
  createRevWalk(): Revwalk;
}
interface NodegitApi {
  Repository: {
    openBare(path: string): Promise<Repo>;
    init(path: string, isBare: number): Promise<Repo>;
    wrapOdb(odb: Odb): Promise<Repo>;
  };
  Odb: { open(objectsDir: string): Promise<Odb> };
  Revparse: { single(repo: Repo, spec: string): Promise<GitObject> };
  Object: {
    TYPE: { ANY: number; COMMIT: number; BLOB: number };
    lookupPrefix(repo: Repo, oid: Oid, length: number, type: number): Promise<GitObject>;
  };
  Oid: { fromString(sha: string): Oid };
  Commit: {
    extractSignature(repo: Repo, oid: Oid, field: string): Promise<{ signature: string; signedData: string }>;
  };
  Reference: { TYPE: { ALL: number }; nameToId(repo: Repo, name: string): Promise<Oid> };
  Error: { CODE: { ENOTFOUND: number; EINVALIDSPEC: number } };
  Graph: { descendantOf(repo: Repo, commit: Oid, ancestor: Oid): Promise<number | boolean> };
  Revwalk: { SORT: { TOPOLOGICAL: number; TIME: number } };
  Merge: { base(repo: Repo, one: Oid, two: Oid): Promise<Oid> };
  Diff: {
    FIND: { RENAMES: number };
    OPTION: { INCLUDE_TYPECHANGE: number };
    DELTA: { ADDED: number; DELETED: number; RENAMED: number };
    FORMAT: { PATCH: number };
    treeToTree(repo: Repo, from: Tree | null, to: Tree, options: { flags: number } | null): Promise<Diff>;
  };
}

/*
 * nodegit's JavaScript wraps native methods when it loads (`const raw = DiffLine.prototype.content;
 * DiffLine.prototype.content = ...`). The native classes are shared by the whole process, so a second
 * evaluation of that JavaScript (Jest gives every test file its own module registry) wraps the
 * wrappers and they recurse without end. The loaded library is therefore kept on a native prototype,
 * which every registry sees, and loaded only once.
 */
let loaded: NodegitApi | undefined;
/** Why loading failed: kept, so a broken install fails every use alike and nodegit's JavaScript is never run twice. */
let loadFailure: unknown;
/**
 * nodegit as loaded once for the process, with libgit2's pack windows set (below); nodegit-commits.ts
 * declares the parts it writes with. Loaded by the first repository read or write, not at start:
 * libgit2, its OpenSSL and nodegit's JavaScript are some 40 MB of the process's memory (6 MB of it
 * V8's heap), which a process that touches no repository (an API serving only the database's reads,
 * a worker between jobs) never needs (issue 23's memory target). A broken build therefore shows at
 * the first repository request (500), not at start.
 */
function loadNodegit(): NodegitApi {
  if (loaded) return loaded;
  if (loadFailure !== undefined) throw loadFailure;
  try {
    const native = loadPackage<{ Repository: { prototype: object } }>('nodegit/build/Release/nodegit.node');
    const holder = native.Repository.prototype as { __lodeNodegit?: unknown };
    if (!holder.__lodeNodegit)
      Object.defineProperty(holder, '__lodeNodegit', { value: loadPackage('nodegit'), enumerable: false });
    const nodegit = holder.__lodeNodegit as NodegitApi;
    const lib = (
      nodegit as unknown as { Libgit2?: { opts(option: number, value: number): unknown; OPT: Record<string, number> } }
    ).Libgit2;
    lib?.opts(lib.OPT.SET_MWINDOW_SIZE, PACK_WINDOW_BYTES);
    lib?.opts(lib.OPT.SET_MWINDOW_MAPPED_LIMIT, PACK_MAPPED_LIMIT_BYTES);
    loaded = nodegit;
    return loaded;
  } catch (err) {
    loadFailure = err;
    throw err;
  }
}

/** `loadNodegit()` behind each use: nodegit loads at the first property read, not when this module does. */
export function lazyNodegit<T extends object = NodegitApi>(): T {
  return new Proxy({} as T, { get: (_target, key) => Reflect.get(loadNodegit(), key) as unknown });
}
const NodeGit = lazyNodegit();

/**
 * How much of the pack files libgit2 keeps mapped, in all and per window. Its defaults (1 GB windows,
 * 8 GB in all) map a whole pack at its first read, and every page a read touches stays in the
 * server's resident memory while the window lives: reads across a 100 MB pack left that much in RSS
 * (issue 23's 633 MB after the read workloads). Windows of 16 MB, 64 MB in all (git's own
 * `core.packedGitWindowSize` / `packedGitLimit` at their 32-bit sizes) cost a remap per 16 MB of
 * pack walked, and bound what reads of any number of repositories map. Set when nodegit loads.
 */
const PACK_WINDOW_BYTES = 16 * 1024 * 1024;
const PACK_MAPPED_LIMIT_BYTES = 64 * 1024 * 1024;

const SHA = /^[0-9a-f]{4,64}$/i;
/** Open repositories kept: opening is cheap (0.1-0.2 ms) but a handle caches objects across reads. */
const OPEN_REPOSITORIES = 64;
/** Contributors are a `git log --numstat` over up to 2,000 commits: kept per repository and head. */
const CONTRIBUTOR_CACHE = 128;
/** GitLab 10.x reads contributors from at most 2,000 commits (non-merge ones). */
const CONTRIBUTOR_COMMITS = 2000;

const modeString = (mode: number) => mode.toString(8).padStart(6, '0');

/**
 * A printed patch cut into its files, in the diff's order: each starts at its `diff --git` line, which
 * no other line of a patch can start with (content lines begin with ' ', '+', '-' or '\\', and a
 * path with a newline is printed quoted). Cut at newlines only: a lone carriage return inside a
 * line is content, not a line's end.
 */
const filePatches = (printed: string): string[] => {
  const files: string[] = [];
  if (!printed.startsWith('diff --git ')) return files;
  for (let at = 0; at < printed.length;) {
    const next = printed.indexOf('\ndiff --git ', at);
    const end = next < 0 ? printed.length : next + 1;
    files.push(printed.slice(at, end));
    at = end;
  }
  return files;
};

/**
 * A file's patch from its first hunk on: GitLab's `diff` field, without the file's header lines
 * (`diff --git`, `index`, `---`/`+++`, modes, renames), none of which starts with `@@`. A file with
 * no hunk (a binary one, a rename alone, a mode change) has an empty `diff`, as in GitLab.
 */
const hunksOf = (file: string): string => {
  const at = file.indexOf('\n@@');
  return at < 0 ? '' : file.slice(at + 1);
};

/** A patch's lines other than its hunks' headers: what the compare limits count. */
const lineCount = (hunks: string): number => {
  let count = 0;
  for (const line of hunks.split('\n')) if (line && !line.startsWith('@@')) count++;
  return count;
};

const iso = (sig: Signature) => {
  const when = sig.when();
  const offset = when.offset();
  const local = new Date((when.time() + offset * 60) * 1000).toISOString().slice(0, 19);
  const sign = offset < 0 ? '-' : '+';
  const abs = Math.abs(offset);
  return `${local}${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
};

function commitInfo(c: Commit): CommitInfo {
  const message = c.message();
  const author = c.author();
  const committer = c.committer();
  const id = c.sha();
  return {
    id,
    shortId: id.slice(0, 8),
    title: message.split('\n', 1)[0],
    message,
    parentIds: c.parents().map((p) => p.tostrS()),
    authorName: author.name(),
    authorEmail: author.email(),
    authoredDate: iso(author),
    committerName: committer.name(),
    committerEmail: committer.email(),
    committedDate: iso(committer),
  };
}

/**
 * Repository reads on libgit2 through nodegit, by the bare repository's path: no process per read.
 * nodegit's calls run on libuv's thread pool (apps size it with UV_THREADPOOL_SIZE), so reads do not
 * block the event loop. The one file that loads nodegit; LocalGitRepositories puts it behind the port.
 */
export class NodegitRepositories {
  private readonly open = new Map<string, Promise<Repo>>();
  private empty?: Promise<Repo>;
  private readonly commitCache: CommitInfoCache;
  private readonly treeCache: TreeListingCache;
  private readonly contributorCache = new Map<string, Promise<Contributor[]>>();

  /**
   * `commitCacheBytes`: the bound of the commits kept for commit lists and blame (LODE_COMMIT_CACHE_BYTES);
   * `coldWalk` runs a contributors' cold history walk: in the work budget's slots, at its nice level;
   * `treeCacheBytes`: the bound of the tree listings kept (LODE_TREE_CACHE_BYTES);
   * `emptyRepositoryPath`: where the empty repository read in place of one not on disk yet is made
   * (without it, such a read fails).
   */
  constructor(
    commitCacheBytes = 0,
    private readonly coldWalk: (walk: (nice: number) => Promise<Contributor[]>) => Promise<Contributor[]> = (walk) =>
      walk(0),
    treeCacheBytes = 0,
    private readonly emptyRepositoryPath?: string,
  ) {
    this.commitCache = new CommitInfoCache(commitCacheBytes);
    this.treeCache = new TreeListingCache(treeCacheBytes);
  }

  private repository(path: string): Promise<Repo> {
    let repo = this.open.get(path);
    if (repo) {
      this.open.delete(path);
      this.open.set(path, repo);
      return repo;
    }
    repo = NodeGit.Repository.openBare(path).catch(async (err: unknown) => {
      this.open.delete(path);
      // A project whose repository is not on disk yet (a fork still being copied) reads as an empty
      // one, as GitLab's does while it imports: every read finds nothing (404 Commit Not Found and
      // the like), never a 500. Not kept: the next read opens the real one once it is there.
      if (this.emptyRepositoryPath && notOnDiskYet(path)) return this.emptyRepository(this.emptyRepositoryPath);
      // Renamed into place between the failed open and the look: open it.
      if (existsSync(path)) return NodeGit.Repository.openBare(path);
      throw err;
    });
    this.open.set(path, repo);
    while (this.open.size > OPEN_REPOSITORIES) this.open.delete(this.open.keys().next().value as string);
    return repo;
  }

  /**
   * The empty bare repository reads find where a project's repository is not on disk yet, made once
   * at `emptyRepositoryPath` (under the data directory: Lode's own, never another user's) and opened
   * once. Made again by any process is harmless: git init of an existing repository changes nothing.
   */
  private emptyRepository(at: string): Promise<Repo> {
    this.empty ??= NodeGit.Repository.init(at, 1);
    this.empty.catch(() => (this.empty = undefined));
    return this.empty;
  }

  /** Forgets a repository's handle (after a push, refs are re-read from disk anyway; after removal it must go). */
  forget(path: string): void {
    this.open.delete(path);
  }

  private async commit(repo: Repo, ref: string): Promise<Commit | undefined> {
    if (!ref || ref.startsWith('-') || /[\s\0]/.test(ref) || ref.includes('..')) return undefined;
    try {
      const obj = await NodeGit.Revparse.single(repo, ref);
      const peeled = await obj.peel(NodeGit.Object.TYPE.COMMIT);
      return await repo.getCommit(peeled.id());
    } catch {
      return undefined;
    }
  }

  async resolveCommit(path: string, ref: string): Promise<CommitInfo | undefined> {
    const c = await this.commit(await this.repository(path), ref);
    return c && commitInfo(c);
  }

  /** libgit2's `git_commit_extract_signature`: the `gpgsig` header and the commit object without it. */
  async commitSignature(path: string, sha: string): Promise<CommitSignature | undefined> {
    if (!/^[0-9a-f]{40}$/.test(sha)) return undefined;
    const repo = await this.repository(path);
    try {
      const { signature, signedData } = await NodeGit.Commit.extractSignature(
        repo,
        NodeGit.Oid.fromString(sha),
        'gpgsig',
      );
      return { signature: String(signature), signedData: Buffer.from(String(signedData), 'utf8') };
    } catch {
      // Not signed, or no such commit.
      return undefined;
    }
  }

  /** Commits by full id, in the order asked; an id that names no commit is left out. Kept ones cost no read. */
  async commitsBySha(path: string, shas: string[]): Promise<CommitInfo[]> {
    const kept = shas.map((sha) => this.commitCache.get(path, sha));
    const missing = shas.filter((_, i) => !kept[i]);
    if (missing.length) {
      const repo = await this.repository(path);
      const read = await Promise.all(
        missing.map((sha) => repo.getCommit(NodeGit.Oid.fromString(sha)).then(commitInfo, () => undefined)),
      );
      const found = new Map<string, CommitInfo>();
      for (const c of read) {
        if (!c) continue;
        found.set(c.id, c);
        this.commitCache.set(path, c);
      }
      for (const [i, sha] of shas.entries()) kept[i] ??= found.get(sha);
    }
    return kept.filter((c): c is CommitInfo => c !== undefined);
  }

  /** The first parent's tree, or none for a root commit: what GitLab's `diff_from_parent` compares with. */
  private async parentTree(repo: Repo, commit: Commit): Promise<Tree | null> {
    const [parent] = commit.parents();
    return parent ? (await repo.getCommit(parent)).getTree() : null;
  }

  async commitStats(path: string, sha: string): Promise<CommitStats> {
    const repo = await this.repository(path);
    const commit = await repo.getCommit(NodeGit.Oid.fromString(sha));
    const diff = await NodeGit.Diff.treeToTree(repo, await this.parentTree(repo, commit), await commit.getTree(), null);
    await diff.findSimilar({ flags: NodeGit.Diff.FIND.RENAMES });
    const stats = await diff.getStats();
    const additions = Number(stats.insertions());
    const deletions = Number(stats.deletions());
    return { additions, deletions, total: additions + deletions };
  }

  async commitDiff(
    path: string,
    sha: string,
    limits: CompareLimits,
  ): Promise<{ diffs: FileDiff[]; overflow: boolean }> {
    const repo = await this.repository(path);
    const commit = await repo.getCommit(NodeGit.Oid.fromString(sha));
    const [parent] = commit.parents();
    return this.diff(repo, parent ? await repo.getCommit(parent) : undefined, commit, limits);
  }

  async fileEntry(path: string, sha: string, file: string): Promise<FileEntry | undefined> {
    return (await this.file(path, sha, file))?.file;
  }

  /** The file and its bytes in one pass over commit, tree and blob (the files API's hot path). */
  async readFile(path: string, sha: string, file: string): Promise<(FileEntry & { content: Buffer }) | undefined> {
    const found = await this.file(path, sha, file);
    if (!found) return undefined;
    const blob = await found.repo.getBlob(found.entry.id());
    return { ...found.file, content: blob.content() };
  }

  private async file(
    path: string,
    sha: string,
    file: string,
  ): Promise<{ repo: Repo; entry: NodegitTreeEntry; file: FileEntry } | undefined> {
    // GitLab's `blob_at` drops leading slashes; an empty path names the root tree, which is no file.
    const wanted = file.replace(/^\/+/, '');
    if (!wanted || !SHA.test(sha)) return undefined;
    const repo = await this.repository(path);
    try {
      const commit = await repo.getCommit(NodeGit.Oid.fromString(sha));
      const entry = await (await commit.getTree()).getEntry(wanted);
      if (!entry.isBlob()) return undefined;
      return { repo, entry, file: { blobId: entry.sha(), path: wanted, name: entry.name() } };
    } catch {
      return undefined;
    }
  }

  async tree(path: string, ref: string, dir: string, recursive: boolean): Promise<TreeEntry[] | undefined> {
    const repo = await this.repository(path);
    const commit = await this.commit(repo, ref);
    if (!commit) return undefined;
    const prefix = dir.replace(/^\/+|\/+$/g, '');
    // A commit's id names its tree too: a listing kept for it is answered without reading the tree.
    // Each read of a large tree is native memory V8 does not see (libgit2 caches no tree over 4 KB,
    // and the parsed tree lives until its wrapper is collected): the 1,800-entry directory read
    // thousands of times a second left the server's RSS at 396 MB (PERF-7).
    const byCommit = `commit ${commit.id().tostrS()}\0${prefix}\0${recursive ? 1 : 0}`;
    const known = this.treeCache.get(byCommit);
    if (known) return known;
    let tree = await commit.getTree();
    if (prefix) {
      try {
        const entry = await tree.getEntry(prefix);
        if (!entry.isTree()) return undefined;
        tree = await entry.getTree();
      } catch {
        return undefined;
      }
    }
    // A tree's id names its content, so its listing never changes: kept, answered from memory.
    const key = `${tree.id().tostrS()}\0${prefix}\0${recursive ? 1 : 0}`;
    const cached = this.treeCache.get(key);
    if (cached) {
      this.treeCache.alias(byCommit, key);
      return cached;
    }
    const entries: TreeEntry[] = [];
    const walk = async (t: Tree, base: string) => {
      for (const e of t.entries()) {
        const name = e.name();
        const entryPath = base ? `${base}/${name}` : name;
        const type = e.isTree() ? 'tree' : e.isSubmodule() ? 'commit' : 'blob';
        entries.push({ id: e.sha(), name, type, path: entryPath, mode: modeString(e.filemode()) });
        if (recursive && type === 'tree') await walk(await e.getTree(), entryPath);
      }
    };
    await walk(tree, prefix);
    // GitLab's `sorted_entries`: trees, then blobs, then submodules, each in git's order.
    const rank = { tree: 0, blob: 1, commit: 2 } as const;
    const sorted = entries
      .map((e, i) => ({ e, i }))
      .sort((a, b) => rank[a.e.type] - rank[b.e.type] || a.i - b.i)
      .map(({ e }) => e);
    this.treeCache.set(key, sorted);
    this.treeCache.alias(byCommit, key);
    return sorted;
  }

  async blob(path: string, sha: string): Promise<BlobInfo | undefined> {
    if (!SHA.test(sha)) return undefined;
    const repo = await this.repository(path);
    try {
      const obj = await NodeGit.Object.lookupPrefix(
        repo,
        NodeGit.Oid.fromString(sha.padEnd(40, '0')),
        sha.length,
        NodeGit.Object.TYPE.BLOB,
      );
      const blob = await repo.getBlob(obj.id());
      return {
        sha: blob.id().tostrS(),
        size: Number(blob.rawsize()),
        content: blob.content(),
        binary: Boolean(blob.isBinary()),
      };
    } catch {
      return undefined;
    }
  }

  /**
   * Each of `names` that exists and the object it holds (a tag's own object, not the commit it tags,
   * as `for-each-ref` shows it). libgit2 reads a loose ref's file at every lookup and the packed refs
   * again once their file changed, so a ref git has just moved reads as moved.
   */
  async refsNamed(path: string, names: readonly string[]): Promise<Map<string, string>> {
    const repo = await this.repository(path);
    const found = await Promise.all(
      names.map((name) =>
        NodeGit.Reference.nameToId(repo, name).then(
          (id) => [name, id.tostrS()] as const,
          (err: unknown) => {
            // Missing, or not a ref name at all: not there. Anything else (unreadable) fails the read.
            const errno = (err as { errno?: number }).errno;
            if (errno === NodeGit.Error.CODE.ENOTFOUND || errno === NodeGit.Error.CODE.EINVALIDSPEC) return undefined;
            throw err;
          },
        ),
      ),
    );
    return new Map(found.filter((entry): entry is readonly [string, string] => entry !== undefined));
  }

  /**
   * The commits a fast-forward from `before` to `after` brought, oldest first, each with the files it
   * added, modified and removed against its parent, as `git log --name-status --no-renames` shows them
   * (GitLab's push hook commits): when they are a plain line of at most `max` commits of one parent
   * each, from `before`. Undefined for anything else (a merge, a longer line, a rewrite, an object
   * missing), which git describes. A push of a few commits then starts no git process here.
   */
  async commitLine(path: string, before: string, after: string, max: number): Promise<PushedCommit[] | undefined> {
    const repo = await this.repository(path);
    const line: Commit[] = [];
    for (let id = after; id !== before;) {
      if (line.length >= max) return undefined;
      const commit = await repo.getCommit(NodeGit.Oid.fromString(id)).catch(() => undefined);
      const parents = commit?.parents();
      if (!commit || parents?.length !== 1) return undefined;
      // git log re-encodes a commit written in another encoding to UTF-8; libgit2 answers its bytes.
      const encoding = commit.messageEncoding();
      if (encoding && !/^utf-?8$/i.test(encoding)) return undefined;
      line.push(commit);
      id = parents[0].tostrS();
    }
    if (!line.length) return undefined;
    // The parent of each is the next one in the line (the last one's is `before`): trees read once.
    const parentOf = async (i: number) =>
      i + 1 < line.length ? line[i + 1] : repo.getCommit(NodeGit.Oid.fromString(before)).catch(() => undefined);
    const commits = await Promise.all(
      line.map(async (commit, i) => {
        const parent = await parentOf(i);
        return parent ? this.pushedCommit(repo, commit, parent) : undefined;
      }),
    );
    return commits.some((c) => c === undefined) ? undefined : (commits as PushedCommit[]).reverse();
  }

  private async pushedCommit(repo: Repo, commit: Commit, parent: Commit): Promise<PushedCommit> {
    const [from, to] = await Promise.all([parent.getTree(), commit.getTree()]);
    // A file that became a symlink (or back) is one change, as git's `T`, which the hook counts as modified.
    const diff = await NodeGit.Diff.treeToTree(repo, from, to, { flags: NodeGit.Diff.OPTION.INCLUDE_TYPECHANGE });
    const pushed: PushedCommit = {
      id: commit.sha(),
      message: commit.message(),
      timestamp: iso(commit.committer()),
      author: { name: commit.author().name(), email: commit.author().email() },
      added: [],
      modified: [],
      removed: [],
    };
    for (let i = 0, n = diff.numDeltas(); i < n; i++) {
      const delta = diff.getDelta(i);
      const status = delta.status();
      if (status === NodeGit.Diff.DELTA.ADDED) pushed.added.push(delta.newFile().path());
      else if (status === NodeGit.Diff.DELTA.DELETED) pushed.removed.push(delta.oldFile().path());
      else pushed.modified.push(delta.newFile().path());
    }
    return pushed;
  }

  /**
   * RefUpdateHooks' `QuarantineAncestry`: a repository of the object stores alone (the push's
   * quarantine first, the repository's own behind it), opened for this one question and not kept:
   * the quarantine is gone once the push ends.
   */
  async ancestry(
    objects: string,
    quarantine: string | undefined,
    pairs: readonly (readonly [string, string])[],
  ): Promise<boolean[]> {
    const odb = await NodeGit.Odb.open(quarantine ?? objects);
    if (quarantine) await odb.addDiskAlternate(objects);
    const repo = await NodeGit.Repository.wrapOdb(odb);
    const commitOf = (sha: string) =>
      NodeGit.Object.lookupPrefix(repo, NodeGit.Oid.fromString(sha), sha.length, NodeGit.Object.TYPE.ANY)
        .then((o) => o.peel(NodeGit.Object.TYPE.COMMIT))
        .then((o) => o.id().tostrS())
        .catch(() => undefined);
    return Promise.all(
      pairs.map(async ([ancestor, descendant]) => {
        const [from, to] = await Promise.all([commitOf(ancestor), commitOf(descendant)]);
        if (!from || !to) return false;
        if (from === to) return true;
        return Boolean(
          await NodeGit.Graph.descendantOf(repo, NodeGit.Oid.fromString(to), NodeGit.Oid.fromString(from)).catch(
            () => false,
          ),
        );
      }),
    );
  }

  /**
   * Every ref under `refs/` and the object it holds (as `refsNamed`), in no particular order;
   * undefined when there are more than `max` (one lookup each: git lists many faster).
   */
  async refsUnder(path: string, max: number): Promise<[string, string][] | undefined> {
    const repo = await this.repository(path);
    const names = (await repo.getReferenceNames(NodeGit.Reference.TYPE.ALL)).filter((n) => n.startsWith('refs/'));
    if (names.length > max) return undefined;
    return [...(await this.refsNamed(path, names))];
  }

  async branches(path: string, defaultBranch: string | undefined): Promise<Branch[]> {
    const repo = await this.repository(path);
    const names = await repo.getReferenceNames(NodeGit.Reference.TYPE.ALL);
    const main = defaultBranch ? await this.commit(repo, `refs/heads/${defaultBranch}`) : undefined;
    const branches: Branch[] = [];
    for (const name of names.filter((n) => n.startsWith('refs/heads/')).sort()) {
      const commit = await this.commit(repo, name);
      if (!commit) continue;
      const short = name.slice('refs/heads/'.length);
      // GitLab's `merged` (`merged_branch_names`, `merged_to_root_ref?`): the default branch's tip descends
      // from the branch's tip and is not that tip; so never the default branch, nor a branch level with it.
      const merged =
        main !== undefined &&
        commit.sha() !== main.sha() &&
        Boolean(await NodeGit.Graph.descendantOf(repo, main.id(), commit.id()));
      branches.push({ name: short, commit: commitInfo(commit), merged });
    }
    return branches;
  }

  /**
   * The best common ancestor of the first commit and any of the others: each pair's merge base, then
   * the one no other candidate descends from (git's `merge-base A B C` is A against a merge of B and C).
   */
  async mergeBase(path: string, shas: string[]): Promise<string | undefined> {
    const repo = await this.repository(path);
    const [first, ...others] = shas.map((sha) => NodeGit.Oid.fromString(sha));
    const candidates: Oid[] = [];
    for (const other of others) {
      try {
        candidates.push(await NodeGit.Merge.base(repo, first, other));
      } catch {
        // unrelated histories: no base from this pair
      }
    }
    for (const c of candidates) {
      let beaten = false;
      for (const d of candidates)
        if (d.tostrS() !== c.tostrS() && (await NodeGit.Graph.descendantOf(repo, d, c))) beaten = true;
      if (!beaten) return c.tostrS();
    }
    return undefined;
  }

  async compare(path: string, from: string, to: string, limits: CompareLimits): Promise<Comparison> {
    const repo = await this.repository(path);
    const [base, head] = await Promise.all([this.commit(repo, from), this.commit(repo, to)]);
    // GitLab 10.x (Gitlab::Git::Compare): an unknown side gives an empty comparison, not a 404.
    if (!base || !head) return { commits: [], diffs: [], overflow: false, same: false };
    if (base.sha() === head.sha()) return { commits: [], diffs: [], overflow: false, same: true };
    const walk = repo.createRevWalk();
    walk.sorting(NodeGit.Revwalk.SORT.TOPOLOGICAL | NodeGit.Revwalk.SORT.TIME);
    walk.push(head.id());
    walk.hide(base.id());
    const oids = await walk.fastWalk(100_000);
    const commits: CommitInfo[] = [];
    for (const oid of oids.reverse()) commits.push(commitInfo(await repo.getCommit(oid)));
    let mergeBase: Commit | undefined;
    try {
      mergeBase = await repo.getCommit(await NodeGit.Merge.base(repo, base.id(), head.id()));
    } catch {
      mergeBase = undefined; // unrelated histories: the diff is against nothing
    }
    const { diffs, overflow } = await this.diff(repo, mergeBase, head, limits);
    return { commits, diffs, overflow, same: false };
  }

  private async diff(
    repo: Repo,
    from: Commit | undefined,
    to: Commit,
    limits: CompareLimits,
  ): Promise<{ diffs: FileDiff[]; overflow: boolean }> {
    const diff = await NodeGit.Diff.treeToTree(repo, from ? await from.getTree() : null, await to.getTree(), null);
    await diff.findSimilar({ flags: NodeGit.Diff.FIND.RENAMES });
    // The patch as libgit2 prints it (git's own format), in one call, cut per file. Not nodegit's
    // `patches()` / `hunks()` / `lines()`: every line `lines()` hands out is a copy nodegit never frees
    // (ConvenientHunk's), so the server grew with every compare and commit diff until a restart (75-88
    // MB per 300 diffs of 50 files, compare-memory.int-spec), and a line not valid UTF-8 lost its
    // newline there. Like those, the whole diff is computed before the limits cut it.
    const files = filePatches(await diff.toBuf(NodeGit.Diff.FORMAT.PATCH));
    if (files.length !== diff.numDeltas())
      throw new Error(`libgit2 printed ${files.length} file patches for ${diff.numDeltas()} changed files`);
    const diffs: FileDiff[] = [];
    let lines = 0;
    let bytes = 0;
    for (const [index, printed] of files.entries()) {
      if (diffs.length >= limits.maxFiles) return { diffs, overflow: true };
      const text = hunksOf(printed);
      lines += lineCount(text);
      bytes += Buffer.byteLength(text);
      if (lines > limits.maxLines || bytes > limits.maxBytes) return { diffs, overflow: true };
      const delta = diff.getDelta(index);
      const status = delta.status();
      const added = status === NodeGit.Diff.DELTA.ADDED;
      const deleted = status === NodeGit.Diff.DELTA.DELETED;
      diffs.push({
        oldPath: delta.oldFile().path(),
        newPath: delta.newFile().path(),
        aMode: added ? '0' : modeString(delta.oldFile().mode()),
        bMode: deleted ? '0' : modeString(delta.newFile().mode()),
        newFile: added,
        renamedFile: status === NodeGit.Diff.DELTA.RENAMED,
        deletedFile: deleted,
        diff: text,
      });
    }
    return { diffs, overflow: false };
  }

  async contributors(path: string, ref: string): Promise<Contributor[]> {
    const repo = await this.repository(path);
    const head = await this.commit(repo, ref);
    if (!head) return [];
    const key = `${path}\0${head.sha()}`;
    let list = this.contributorCache.get(key);
    if (!list) {
      // The promise is kept, so callers arriving while git is still reading share its one walk.
      list = this.coldWalk((nice) => contributorsFromLog(path, head.sha(), CONTRIBUTOR_COMMITS, nice));
      list.catch(() => this.contributorCache.delete(key));
      this.contributorCache.set(key, list);
      while (this.contributorCache.size > CONTRIBUTOR_CACHE)
        this.contributorCache.delete(this.contributorCache.keys().next().value as string);
    }
    return list;
  }
}
