import type {
  FileAction,
  NewCherryPick,
  NewCommit,
  NewRevert,
  NewTagObject,
  Person,
  RevertOutcome,
} from './git-repositories';
import { CommitRefused } from './git-repositories';
import { lazyNodegit } from './nodegit-repositories';

/*
 * The parts of nodegit 0.28 that build objects (it ships no types): blobs from buffers, trees edited
 * through tree builders, commits written without moving any ref. Loaded through the reads' loader,
 * so the library is evaluated once per process.
 */
interface Oid {
  tostrS(): string;
}
interface Entry {
  id(): Oid;
  filemode(): number;
  isTree(): boolean;
  isBlob(): boolean;
}
interface Tree {
  id(): Oid;
  getEntry(path: string): Promise<Entry>;
}
interface Treebuilder {
  get(name: string): Entry | undefined;
  insert(name: string, oid: Oid, mode: number): unknown;
  remove(name: string): number;
  entrycount(): number;
  write(): Promise<Oid>;
}
interface Commit {
  id(): Oid;
  getTree(): Promise<Tree>;
  author(): Signature;
  parentcount(): number;
}
interface Signature {
  readonly brand?: 'signature';
}
interface GitObject {
  id(): Oid;
}
interface Index {
  hasConflicts(): boolean;
  writeTreeTo(repo: Repo): Promise<Oid>;
}
interface Repo {
  getCommit(sha: string): Promise<Commit>;
  getTree(oid: Oid): Promise<Tree>;
}
interface NodegitWriteApi {
  Repository: { openBare(path: string): Promise<Repo> };
  Blob: { createFromBuffer(repo: Repo, buffer: Buffer, length: number): Promise<Oid> };
  Treebuilder: { create(repo: Repo, source: Tree | null): Promise<Treebuilder> };
  Signature: { create(name: string, email: string, time: number, offset: number): Signature };
  Object: { lookup(repo: Repo, oid: Oid, type: number): Promise<GitObject>; TYPE: { COMMIT: number } };
  Tag: {
    annotationCreate(repo: Repo, name: string, target: GitObject, tagger: Signature, message: string): Promise<Oid>;
  };
  Cherrypick: { commit(repo: Repo, pick: Commit, ours: Commit, mainline: number): Promise<Index> };
  Revert: { commit(repo: Repo, revert: Commit, ours: Commit, mainline: number): Promise<Index> };
  Commit: {
    create(
      repo: Repo,
      updateRef: null,
      author: Signature,
      committer: Signature,
      encoding: string,
      message: string,
      tree: Tree,
      parentCount: number,
      parents: Commit[],
    ): Promise<Oid>;
  };
}

const NodeGit = lazyNodegit<NodegitWriteApi>();

const FILE = 0o100644;
const EXECUTABLE = 0o100755;
const DIRECTORY = 0o040000;

/** The longest file name a checkout can create (NAME_MAX on Linux, macOS and Windows' NTFS), in bytes. */
const MAX_NAME_BYTES = 255;
/** The longest path a checkout can open, relative to its work tree (PATH_MAX 4096 with its NUL). */
const MAX_PATH_BYTES = 4095;

/**
 * A path as GitLab's `Gitlab::Git::Index` normalises it: no leading `/`, no empty or `.` parts; `..` is
 * refused. Beyond GitLab, which stores whatever it is given: a name no checkout can create (a part over
 * 255 bytes, a path over 4095, `.git` in any case, which git's `verify_path` refuses with the
 * `core.protectNTFS` default) is refused too, as a commit with it would break every clone of the branch.
 */
export function normalizePath(path: string): string {
  const parts = path.split('/').filter((p) => p !== '' && p !== '.');
  if (!parts.length || parts.includes('..') || parts.some((p) => p.toLowerCase() === '.git'))
    throw new CommitRefused('Invalid path');
  const normalized = parts.join('/');
  if (parts.some((p) => Buffer.byteLength(p) > MAX_NAME_BYTES) || Buffer.byteLength(normalized) > MAX_PATH_BYTES)
    throw new CommitRefused(`Invalid path: a name longer than ${MAX_NAME_BYTES} bytes cannot be checked out`);
  return normalized;
}

/** What a path holds after the actions so far: a blob and its mode, or nothing. */
type Slot = { oid: Oid; mode: number } | null;

/**
 * Writes a commit of `spec.actions` on top of `spec.parent` (null: the first commit of an empty
 * repository) with libgit2: blobs, trees and the commit object, in process, no work tree and no git
 * process. No ref moves: the caller moves the branch by compare-and-swap. The actions are checked
 * as GitLab's `Gitlab::Git::Index` does, in order, each seeing the ones before it; a refused one
 * throws `CommitRefused` with GitLab's words before anything is written that a ref could reach.
 */
export async function writeCommit(repoPath: string, spec: NewCommit): Promise<string> {
  const repo = await NodeGit.Repository.openBare(repoPath);
  const parent = spec.parent === null ? null : await repo.getCommit(spec.parent);
  const base = parent ? await parent.getTree() : null;
  const slots = new Map<string, Slot>();

  const current = async (path: string): Promise<Slot | 'directory'> => {
    if (slots.has(path)) return slots.get(path) ?? null;
    // A directory made or emptied by an earlier action counts as what the actions left there.
    for (const [p, slot] of slots) if (slot && p.startsWith(`${path}/`)) return 'directory';
    if (!base) return null;
    const entry = await base.getEntry(path).catch(() => undefined);
    if (!entry) return null;
    if (entry.isTree()) return 'directory';
    return { oid: entry.id(), mode: entry.filemode() };
  };
  const blob = (content: Buffer) => NodeGit.Blob.createFromBuffer(repo, content, content.length);

  for (const action of spec.actions) await apply(action);

  async function apply(action: FileAction): Promise<void> {
    const path = normalizePath(action.filePath);
    const existing = await current(path);
    const file = existing !== 'directory' ? existing : null;
    switch (action.action) {
      case 'create':
        if (existing !== null) throw new CommitRefused('A file with this name already exists');
        slots.set(path, { oid: await blob(action.content ?? Buffer.alloc(0)), mode: modeOf(action, FILE) });
        return;
      case 'update':
        if (!file) throw new CommitRefused("A file with this name doesn't exist");
        slots.set(path, { oid: await blob(action.content ?? Buffer.alloc(0)), mode: file.mode });
        return;
      case 'delete':
        if (!file) throw new CommitRefused("A file with this name doesn't exist");
        slots.set(path, null);
        return;
      case 'chmod':
        if (!file) throw new CommitRefused("A file with this name doesn't exist");
        slots.set(path, { oid: file.oid, mode: action.executable ? EXECUTABLE : FILE });
        return;
      case 'move': {
        const from = normalizePath(action.previousPath ?? '');
        const previous = await current(from);
        if (!previous || previous === 'directory') throw new CommitRefused("A file with this name doesn't exist");
        if (existing !== null && from !== path) throw new CommitRefused('A file with this name already exists');
        slots.set(from, null);
        const oid = action.content === undefined ? previous.oid : await blob(action.content);
        slots.set(path, { oid, mode: previous.mode });
        return;
      }
    }
  }

  const tree = await repo.getTree((await buildTree(repo, base, nest(slots))).oid);
  return (
    await NodeGit.Commit.create(
      repo,
      null,
      signature(spec.author),
      signature(spec.committer),
      'UTF-8',
      spec.message,
      tree,
      parent ? 1 : 0,
      parent ? [parent] : [],
    )
  ).tostrS();
}

const modeOf = (action: FileAction, fallback: number) =>
  action.executable === undefined ? fallback : action.executable ? EXECUTABLE : FILE;

/** The edits as nested directories: a name holds a slot (a file's new state) or the edits beneath it. */
type Edits = Map<string, Slot | Edits>;

function nest(slots: Map<string, Slot>): Edits {
  const root: Edits = new Map();
  for (const [path, slot] of slots) {
    const parts = path.split('/');
    let dir = root;
    for (const part of parts.slice(0, -1)) {
      let next = dir.get(part);
      if (!(next instanceof Map)) {
        next = new Map();
        dir.set(part, next);
      }
      dir = next;
    }
    const name = parts[parts.length - 1];
    // A file set where an earlier action's directory was: the file wins (that directory's edits go).
    dir.set(name, slot);
  }
  return root;
}

/** Writes `source` with `edits` applied, bottom up; an emptied directory disappears, as in git. */
async function buildTree(repo: Repo, source: Tree | null, edits: Edits): Promise<{ oid: Oid; entries: number }> {
  const builder = await NodeGit.Treebuilder.create(repo, source);
  for (const [name, edit] of edits) {
    if (edit instanceof Map) {
      const entry = builder.get(name);
      if (entry && !entry.isTree()) throw new CommitRefused('A file with this name already exists');
      const sub = await buildTree(repo, entry ? await repo.getTree(entry.id()) : null, edit);
      if (sub.entries === 0) builder.remove(name);
      else builder.insert(name, sub.oid, DIRECTORY);
    } else if (edit === null) {
      builder.remove(name);
    } else {
      builder.insert(name, edit.oid, edit.mode);
    }
  }
  const entries = builder.entrycount();
  return { oid: await builder.write(), entries };
}

/** An annotated tag object naming `tag.target` (a commit), `tag.tagger` its tagger; no ref moves. */
export async function writeTagObject(repoPath: string, tag: NewTagObject): Promise<string> {
  const repo = await NodeGit.Repository.openBare(repoPath);
  const target = await repo.getCommit(tag.target);
  const object = await NodeGit.Object.lookup(repo, target.id(), NodeGit.Object.TYPE.COMMIT);
  return (await NodeGit.Tag.annotationCreate(repo, tag.name, object, signature(tag.tagger), tag.message)).tostrS();
}

/**
 * GitLab's `check_cherry_pick_content` and `cherry_pick`: libgit2's cherry-pick of `pick.commit` onto
 * `pick.onto` (a merge commit against its first parent, GitLab's mainline 1) as an index, refused
 * (undefined) when it conflicts or leaves the tree as it was; else a commit by the original author
 * (name, e-mail, date and offset as written) with `pick.committer` as its committer.
 */
export async function writeCherryPick(repoPath: string, pick: NewCherryPick): Promise<string | undefined> {
  const repo = await NodeGit.Repository.openBare(repoPath);
  const [commit, onto] = await Promise.all([repo.getCommit(pick.commit), repo.getCommit(pick.onto)]);
  const index = await NodeGit.Cherrypick.commit(repo, commit, onto, commit.parentcount() > 1 ? 1 : 0);
  if (index.hasConflicts()) return undefined;
  const treeId = await index.writeTreeTo(repo);
  if (treeId.tostrS() === (await onto.getTree()).id().tostrS()) return undefined;
  const tree = await repo.getTree(treeId);
  return (
    await NodeGit.Commit.create(
      repo,
      null,
      commit.author(),
      signature(pick.committer),
      'UTF-8',
      pick.message,
      tree,
      1,
      [onto],
    )
  ).tostrS();
}

/**
 * GitLab's `Commits::RevertService` through Gitaly's UserRevert: libgit2's revert of `revert.commit`
 * on `revert.onto` (a merge commit against its first parent) as an index; `conflict` when it does not
 * apply, `empty` when the tree stays as it was (already reverted); else a commit by `revert.person`.
 */
export async function writeRevert(repoPath: string, revert: NewRevert): Promise<RevertOutcome> {
  const repo = await NodeGit.Repository.openBare(repoPath);
  const [commit, onto] = await Promise.all([repo.getCommit(revert.commit), repo.getCommit(revert.onto)]);
  const index = await NodeGit.Revert.commit(repo, commit, onto, commit.parentcount() > 1 ? 1 : 0);
  if (index.hasConflicts()) return { refused: 'conflict' };
  const treeId = await index.writeTreeTo(repo);
  if (treeId.tostrS() === (await onto.getTree()).id().tostrS()) return { refused: 'empty' };
  const person = signature(revert.person);
  const tree = await repo.getTree(treeId);
  const sha = await NodeGit.Commit.create(repo, null, person, person, 'UTF-8', revert.message, tree, 1, [onto]);
  return { sha: sha.tostrS() };
}

/** A person at a moment, with the moment's offset as the person gave it (UTC when none). */
function signature(person: Person): Signature {
  return NodeGit.Signature.create(person.name, person.email, Math.floor(person.when.getTime() / 1000), 0);
}
