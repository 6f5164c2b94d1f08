/**
 * The port the repository read API uses (ARCHITECTURE.md: reads through libgit2, behind
 * `GitRepositories`). Every method takes the bare repository's path; `undefined` or an empty answer
 * means "not there", which the controllers turn into GitLab's 404s.
 */

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

export abstract class GitRepositories {
  /** The commit a branch, tag or sha names; undefined when it names none. */
  abstract resolveCommit(repo: string, ref: string): Promise<CommitInfo | undefined>;
  /** The branch HEAD names, or undefined in an empty repository. */
  abstract headBranch(repo: string): Promise<string | undefined>;
  /** Entries under `path` at `ref` (trees first, then blobs, then submodules); undefined when the ref or path is unknown. */
  abstract tree(repo: string, ref: string, path: string, recursive: boolean): Promise<TreeEntry[] | undefined>;
  abstract blob(repo: string, sha: string): Promise<BlobInfo | undefined>;
  abstract branches(repo: string, defaultBranch: string | undefined): Promise<Branch[]>;
  /** GitLab's compare: commits reachable from `to` and not from `from`, diffs from their merge base to `to`. */
  abstract compare(repo: string, from: string, to: string, limits: CompareLimits): Promise<Comparison>;
  /** Authors of the non-merge commits reachable from `ref`, by e-mail, with their added and deleted lines. */
  abstract contributors(repo: string, ref: string): Promise<Contributor[]>;
}
