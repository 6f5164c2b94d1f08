import type { Socket } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable, Writable } from 'node:stream';
import type { SizedFile } from './repository-contents';

/*
 * The one door to git (docs/architecture.md, Layers): every git operation Lode does goes through
 * `GitRepositories`, which names a repository by its project (`RepoRef`) and knows where
 * `$LODE_DATA_DIR` keeps it, so no caller builds a path. `undefined` or an empty answer means "not
 * there", which the controllers turn into GitLab's 404s.
 */

/**
 * A project's repository. An object rather than the bare id so that a storage name (GitLab's
 * `repository_storage`) can join it without touching callers.
 */
export interface RepoRef {
  readonly projectId: number;
}

/** The repository of project `projectId`. */
export const projectRepo = (projectId: number): RepoRef => ({ projectId });

export interface TreeEntry {
  id: string;
  name: string;
  type: 'tree' | 'blob' | 'commit';
  path: string;
  /** Six octal digits: `040000`, `100644`, `100755`, `120000`, `160000`. */
  mode: string;
}

export interface CommitInfo {
  id: string;
  shortId: string;
  title: string;
  message: string;
  parentIds: string[];
  authorName: string;
  authorEmail: string;
  authoredDate: string;
  committerName: string;
  committerEmail: string;
  committedDate: string;
}

/** Lines a commit added and deleted against its first parent (GitLab's CommitStats). */
export interface CommitStats {
  additions: number;
  deletions: number;
  total: number;
}

/** A page of a history walk, newest first (GitLab's commit list). */
export interface CommitLogQuery {
  /** A branch, tag or sha; ignored with `all`. */
  ref?: string;
  /** Commits reachable from every ref. */
  all: boolean;
  /** Only commits that changed this path. */
  path?: string;
  /** Only commits committed at or after this time. */
  since?: Date;
  /** Only commits committed at or before this time. */
  until?: Date;
  offset: number;
  limit: number;
  withStats: boolean;
}

/** One page of commits and how many the whole walk holds; an unknown ref walks nothing. */
export interface CommitLogPage {
  commits: (CommitInfo & { stats?: CommitStats })[];
  total: number;
}

/** A branch or a tag by name (GitLab's BasicRef). */
export interface RefName {
  type: 'branch' | 'tag';
  name: string;
}

export interface Tag {
  name: string;
  /** The tag object of an annotated tag, the commit of a lightweight one. */
  target: string;
  /** An annotated tag's message; null for a lightweight tag. */
  message: string | null;
  /** The commit the tag points at, peeled. */
  commit: CommitInfo;
}

/** A blob in a commit's tree, by its path (GitLab's `blob_at`). */
export interface FileEntry {
  blobId: string;
  /** The path as the tree holds it, without leading slashes. */
  path: string;
  name: string;
}

/** A file read at a ref: the commit the ref names, and the blob when the path is a file there. */
export interface FileAtRef {
  commitId: string;
  file?: FileEntry & { content: Buffer };
}

/** Consecutive lines last changed by one commit (GitLab's blame range). */
export interface BlameRange {
  commit: CommitInfo;
  lines: string[];
}

export interface BlobInfo {
  sha: string;
  size: number;
  content: Buffer;
  binary: boolean;
}

export interface Branch {
  name: string;
  commit: CommitInfo;
  /** The default branch contains this branch's tip. */
  merged: boolean;
}

export interface FileDiff {
  oldPath: string;
  newPath: string;
  aMode: string;
  bMode: string;
  newFile: boolean;
  renamedFile: boolean;
  deletedFile: boolean;
  diff: string;
}

export interface Comparison {
  commits: CommitInfo[];
  diffs: FileDiff[];
  /** The diff was cut at the configured limits. */
  overflow: boolean;
  same: boolean;
}

export interface CompareLimits {
  maxFiles: number;
  maxLines: number;
  maxBytes: number;
}

export interface Contributor {
  name: string;
  email: string;
  commits: number;
  additions: number;
  deletions: number;
}

/** Commits reachable from the default branch and bytes on disk: GitLab's repository statistics. */
export interface RepositoryStatistics {
  commitCount: number;
  repositorySize: number;
}

/** One ref update a push asked for: `<before> <after> <ref>`, forty zeros for a missing side. */
export interface RefCommand {
  ref: string;
  before: string;
  after: string;
}

/** A commit as GitLab's push hook shows it, with the paths it added, modified and removed against its first parent. */
export interface PushedCommit {
  id: string;
  message: string;
  /** ISO 8601 committer date with its offset. */
  timestamp: string;
  author: { name: string; email: string };
  added: string[];
  modified: string[];
  removed: string[];
}

/** What an accepted ref update brought, as GitLab's push and tag push hooks show it. */
export interface RefUpdate extends RefCommand {
  /** The commit the ref now points at (a tag is peeled); null when it was deleted. */
  checkoutSha: string | null;
  /** The newest commits the update brought (at most PAYLOAD_COMMITS), oldest first. */
  commits: PushedCommit[];
  totalCommitsCount: number;
  /** An annotated tag's message; null otherwise. */
  message: string | null;
}

/** A raw blob whose bytes stream from git (a large one: never held in memory). */
export interface RawBlob {
  sha: string;
  size: number;
  binary: boolean;
  /** The blob's bytes, exactly `size` of them. */
  stream: Readable;
  /** Ends the git process when the client goes away. */
  cancel: () => void;
}

/** A small raw blob, read whole. */
export interface HeldBlob {
  sha: string;
  size: number;
  binary: boolean;
  content: Buffer;
}

/** GitLab's archive formats as the files they make. */
export type ArchiveExtension = 'tar.gz' | 'tar.bz2' | 'tar' | 'zip';

/** A complete archive file, streamed with its length. */
export interface Archive {
  /** The whole archive (its cache file, opened when called). */
  read(): Readable;
  /**
   * Answers the HTTP request on `socket`: `head` (the status line and headers), then the archive,
   * sent from outside this process (GitWorkBudget.sendFile). False, the connection untouched,
   * where that cannot be done: the caller sends `read()` itself. Resolves once it is sent off;
   * `handedOver` is called when the connection is about to leave this process.
   */
  sendTo(socket: Socket, head: string, handedOver: () => void): Promise<boolean>;
  size: number;
  etag: string;
  /** Served from the cache rather than made for this request. */
  cached: boolean;
}

/** A branch's move from `from` to `to` that is a fast-forward bringing `commits` commits. */
export interface FastForward {
  from: string;
  to: string;
  commits: number;
}

/** A ref update a push proposes, before git applies it. */
export interface ProposedRefUpdate extends RefCommand {
  /** Neither side is zero and the old tip is not an ancestor of the new one (a force push). */
  forced: boolean;
}

/**
 * Asked once per push, after the pack is received and before any ref moves (git's pre-receive):
 * undefined lets every update happen, a message refuses them all (git moves nothing and shows the
 * message to its user). A check that throws refuses the push too.
 */
export type RefUpdateCheck = (updates: ProposedRefUpdate[]) => Promise<string | undefined>;

/** Hooks of one smart-HTTP exchange. */
export interface GitHttpOptions {
  /** For `git-receive-pack`: the check the ref updates must pass. */
  checkRefUpdates?: RefUpdateCheck;
  /**
   * Runs after the CGI exited, before the response ends (so a push is recorded before git's client
   * sees the end of its answer and can read the API). `succeeded`: the CGI exited with status 0.
   */
  beforeEnd?: (succeeded: boolean) => Promise<void>;
}

/** The services git over SSH runs (the command a client's `exec` names). */
export type GitPackService = 'git-upload-pack' | 'git-receive-pack' | 'git-upload-archive';

/** The byte streams of one git-over-SSH exchange: the channel's input, output and error output. */
export interface GitPackIo {
  stdin: Readable;
  stdout: Writable;
  stderr: Writable;
}

export interface GitPackOptions {
  /** The client's `GIT_PROTOCOL` (`version=2`), passed on to git. */
  protocol?: string;
  /** For `git-receive-pack`: the check the ref updates must pass. */
  checkRefUpdates?: RefUpdateCheck;
  /** As in `GitHttpOptions`: runs after git exited, before the exit status is reported. */
  beforeEnd?: (succeeded: boolean) => Promise<void>;
}

/** A running git service. */
export interface GitPackSession {
  /** git's exit status, once it has exited, its output has been handed on and `beforeEnd` has run. */
  done: Promise<number>;
  /** Ends git at once (the client went away); leaves no process behind. */
  cancel: () => void;
}

/** Someone in a commit: its author or committer, at a moment. */
export interface Person {
  name: string;
  email: string;
  when: Date;
}

/** One change of a commit written through the API (GitLab's commit actions). */
export interface FileAction {
  action: 'create' | 'update' | 'delete' | 'move' | 'chmod';
  filePath: string;
  /** `move`: where the file was. */
  previousPath?: string;
  /** The new bytes (`create`, `update`; `move` keeps the old ones when absent). */
  content?: Buffer;
  /** `chmod` (and `create`): the execute bit. */
  executable?: boolean;
}

/** A commit to write: its parent (null in an empty repository), its changes and its people. */
export interface NewCommit {
  parent: string | null;
  actions: FileAction[];
  message: string;
  author: Person;
  committer: Person;
}

/** An annotated tag object to write (GitLab's `add_tag` with a message): no ref moves. */
export interface NewTagObject {
  name: string;
  /** The commit it tags. */
  target: string;
  message: string;
  tagger: Person;
}

/** Commit `commit` applied on top of `onto` (GitLab's cherry-pick): the original author, `committer` the caller. */
export interface NewCherryPick {
  commit: string;
  onto: string;
  message: string;
  committer: Person;
}

/** A revert to write: `commit` undone on top of `onto` by `person` (author and committer). */
export interface NewRevert {
  commit: string;
  onto: string;
  message: string;
  person: Person;
}

/** A revert's commit, or why it cannot be made: its changes clash with `onto`, or `onto` has none of them. */
export type RevertOutcome = { sha: string } | { refused: 'conflict' | 'empty' };

/** An API write that cannot be made as asked, in GitLab's words (a 400 `{"message": ...}`). */
/** A signed commit's signature (ASCII-armored) and the exact bytes it signs. */
export interface CommitSignature {
  signature: string;
  signedData: Buffer;
}

export class CommitRefused extends Error {}

/**
 * Everything git, for every context. No method may be called inside a database transaction: git
 * work is slow and cannot be rolled back, so callers do it before or after theirs.
 */
export abstract class GitRepositories {
  /** Creates an empty bare repository whose HEAD names `defaultBranch`; a no-op when it exists. */
  abstract init(repo: RepoRef, defaultBranch: string): Promise<void>;
  /** The project that `init` made the repository for is written (or its creation undone): forget the marker. */
  abstract settled(repo: RepoRef): Promise<void>;
  /** Project ids whose repository `init` made but whose creation a dead process never settled. */
  abstract abandonedCreations(): Promise<number[]>;
  /** A fork's repository: a local bare clone of `source` (hard-linked objects); a copy an earlier attempt landed is kept. */
  abstract cloneBare(source: RepoRef, target: RepoRef): Promise<void>;
  /** Housekeeping: `git gc` and `pack-refs`. */
  abstract gc(repo: RepoRef): Promise<void>;
  /** Removes the repository and its archive cache; a no-op when they are gone. */
  abstract remove(repo: RepoRef): Promise<void>;
  /** The repository exists on disk. */
  abstract exists(repo: RepoRef): Promise<boolean>;
  /** What `git fsck` finds wrong in the repository, one line each; empty when it is sound. */
  abstract fsck(repo: RepoRef): Promise<string[]>;
  /**
   * The repositories on disk that belong to none of `projectIds`, as `{ path, projectId }`: the id is
   * known when it is among `formerProjectIds` (the storage names repositories by a hash of the id).
   */
  abstract strayRepositories(
    projectIds: readonly number[],
    formerProjectIds: readonly number[],
  ): Promise<{ path: string; projectId?: number }[]>;
  /** Files and directories half-written by a process that died, untouched for `olderThanMs` (paths). */
  abstract leftoverTemporaries(olderThanMs: number): Promise<string[]>;
  /**
   * Commits reachable from `branch` (0 when it does not exist) and the repository's size on disk.
   * `refs`: the repository's refs as just read (`refs()`), where the caller has them: the branch's
   * tip is then taken from them instead of asked of git again. `fastForwards`: moves of the branch
   * known to be fast-forwards (a push's updates the pre-receive check saw were not forced, with the
   * commits each brought), which let a count step forward without asking git. `sizeMaxAgeMs`: a
   * size this process measured of the repository at most that long ago is answered again instead of
   * measured anew (0, the default: measured now).
   */
  abstract statistics(
    repo: RepoRef,
    branch: string | null,
    refs?: Map<string, string>,
    fastForwards?: FastForward[],
    sizeMaxAgeMs?: number,
  ): Promise<RepositoryStatistics>;
  /** The branch HEAD names, or undefined when HEAD is detached or the repository is unreadable. */
  abstract headBranch(repo: RepoRef): Promise<string | undefined>;
  /** Points HEAD at `branch`, so clones check it out. */
  abstract setHeadBranch(repo: RepoRef, branch: string): Promise<void>;
  /** The commit a branch, tag or sha names; undefined when it names none. */
  abstract resolveCommit(repo: RepoRef, ref: string): Promise<CommitInfo | undefined>;
  /**
   * A commit's (full id) `gpgsig` header and the data it signs (the commit object without that header),
   * as git's `verify-commit` reads them; undefined when the commit carries no signature.
   */
  abstract commitSignature(repo: RepoRef, sha: string): Promise<CommitSignature | undefined>;
  /**
   * git's `merge-base` of commits (full ids): the best common ancestor of the first and any of the
   * others (a merge of them); undefined when they share no history.
   */
  abstract mergeBase(repo: RepoRef, shas: string[]): Promise<string | undefined>;
  /** Entries under `path` at `ref` (trees first, then blobs, then submodules); undefined when the ref or path is unknown. */
  abstract tree(repo: RepoRef, ref: string, path: string, recursive: boolean): Promise<TreeEntry[] | undefined>;
  /** A blob read whole (the API's base64 blob). */
  abstract blob(repo: RepoRef, sha: string): Promise<BlobInfo | undefined>;
  /** A blob's bytes for a raw download: small ones whole, large ones streamed. */
  abstract rawBlob(repo: RepoRef, sha: string): Promise<HeldBlob | RawBlob | undefined>;
  /**
   * The small blob `sha` (a full object id) when this process keeps it in memory (LODE_BLOB_CACHE_BYTES),
   * at once and without git; undefined otherwise (not kept, abbreviated, large), and `rawBlob` reads it.
   */
  abstract keptBlob(repo: RepoRef, sha: string): HeldBlob | undefined;
  /** The bytes of small blobs kept in memory, and how many reads they answered. */
  abstract blobCache(): { bytes: number; hits: number };
  /** Branches by name, each with its tip and whether `defaultBranch` contains it. */
  abstract branches(repo: RepoRef, defaultBranch: string | undefined): Promise<Branch[]>;
  /** GitLab's compare: commits reachable from `to` and not from `from`, diffs from their merge base to `to`. */
  abstract compare(repo: RepoRef, from: string, to: string, limits: CompareLimits): Promise<Comparison>;
  /** Authors of the non-merge commits reachable from `ref`, by e-mail, with their added and deleted lines. */
  abstract contributors(repo: RepoRef, ref: string): Promise<Contributor[]>;
  /** The blobs of the tree of commit `sha` with their sizes, at most `limit` (GitLab's language statistics). */
  abstract sizedFiles(repo: RepoRef, sha: string, limit: number): Promise<SizedFile[]>;
  /** The bare repository as a tar stream (GitLab's snapshot); undefined when it does not exist. */
  abstract snapshot(repo: RepoRef): Promise<Readable | undefined>;
  /** The archive of commit `sha` under the top directory `prefix`, made by `git archive` once and then cached. */
  abstract archive(repo: RepoRef, sha: string, ext: ArchiveExtension, prefix: string): Promise<Archive>;
  /** One page of commits, newest first, and how many the walk holds; costs the commits before the page, not the whole history. */
  abstract commitLog(repo: RepoRef, query: CommitLogQuery): Promise<CommitLogPage>;
  /** Lines the commit `sha` added and deleted against its first parent. */
  abstract commitStats(repo: RepoRef, sha: string): Promise<CommitStats>;
  /** The changes of commit `sha` against its first parent (every file against nothing for a root commit). */
  abstract commitDiff(
    repo: RepoRef,
    sha: string,
    limits: CompareLimits,
  ): Promise<{ diffs: FileDiff[]; overflow: boolean }>;
  /** Branches, then tags, whose history contains commit `sha`, each by name. */
  abstract refsContaining(repo: RepoRef, sha: string): Promise<RefName[]>;
  /** Every tag, by name, with the commit it points at. */
  abstract tags(repo: RepoRef): Promise<Tag[]>;
  /** The tag `name` with the commit it points at; undefined when there is none. */
  abstract tag(repo: RepoRef, name: string): Promise<Tag | undefined>;
  /** The blob at `path` in commit `sha`; undefined for a missing path, a directory or a submodule. */
  abstract fileEntry(repo: RepoRef, sha: string, path: string): Promise<FileEntry | undefined>;
  /** The blob at `path` in commit `sha` with its bytes, read whole; undefined as for fileEntry. */
  abstract readFile(repo: RepoRef, sha: string, path: string): Promise<(FileEntry & { content: Buffer }) | undefined>;
  /**
   * The commit `ref` names and the blob at `path` in it with its bytes, read whole (the files API);
   * undefined when the ref names no commit, `file` undefined as for fileEntry.
   */
  abstract fileAtRef(repo: RepoRef, ref: string, path: string): Promise<FileAtRef | undefined>;
  /** The newest commit reachable from `sha` that changed `path`. */
  abstract lastCommitFor(repo: RepoRef, sha: string, path: string): Promise<string | undefined>;
  /** Who last changed each line of `path` at commit `sha`, as ranges of consecutive lines from one commit. */
  abstract blame(repo: RepoRef, sha: string, path: string): Promise<BlameRange[]>;
  /** Every ref and the object it holds (`refs/heads/...`, `refs/tags/...`). */
  abstract refs(repo: RepoRef): Promise<Map<string, string>>;
  /**
   * The refs among `names` (full names) that exist and the object each holds, as `refs` shows them,
   * read from the ref store without listing every ref (no git process).
   */
  abstract refsNamed(repo: RepoRef, names: readonly string[]): Promise<Map<string, string>>;
  /**
   * What accepted ref updates brought: commits and tag messages as GitLab's push hooks show them. A
   * new branch shows the commits `baseBranch` (an existing branch, or null) lacks.
   */
  abstract describeRefUpdates(repo: RepoRef, updates: RefCommand[], baseBranch: string | null): Promise<RefUpdate[]>;
  /**
   * Serves one smart-HTTP request (`service`: `info/refs`, `git-upload-pack` or `git-receive-pack`)
   * with `git http-backend`, streaming both ways. The caller has decided access already.
   */
  abstract serveHttp(
    req: IncomingMessage,
    res: ServerResponse,
    repo: RepoRef,
    service: string,
    remoteUser: string,
    options?: GitHttpOptions,
  ): void;
  /**
   * Writes a commit (blobs, trees, the commit object) with libgit2 in process and answers its sha;
   * no ref moves. Throws `CommitRefused` for an action that cannot be made (GitLab's words).
   */
  abstract writeCommit(repo: RepoRef, commit: NewCommit): Promise<string>;
  /** Writes an annotated tag object with libgit2 and answers its sha; no ref moves. */
  abstract writeTagObject(repo: RepoRef, tag: NewTagObject): Promise<string>;
  /**
   * Writes the cherry-pick of `pick.commit` onto `pick.onto` (a merge commit against its first parent)
   * with libgit2 and answers the new commit's sha; no ref moves. Undefined when it does not apply: a
   * conflict, or nothing left to change (GitLab's `CreateTreeError`).
   */
  abstract writeCherryPick(repo: RepoRef, pick: NewCherryPick): Promise<string | undefined>;
  /**
   * Writes the revert of `revert.commit` on top of `revert.onto` (a merge commit against its first
   * parent) with libgit2; no ref moves. Refused when it conflicts or changes nothing.
   */
  abstract writeRevert(repo: RepoRef, revert: NewRevert): Promise<RevertOutcome>;
  /**
   * Moves `ref` from `before` to `after` only if it still holds `before` (forty zeros: it must not
   * exist yet; `after` zeros: delete it). False when another writer moved it first.
   */
  abstract moveRef(repo: RepoRef, ref: string, before: string, after: string): Promise<boolean>;
  /**
   * Runs `service` on the repository over the given streams (git over SSH), streaming both ways.
   * The caller has decided access already.
   */
  abstract servePack(repo: RepoRef, service: GitPackService, io: GitPackIo, options?: GitPackOptions): GitPackSession;
}
