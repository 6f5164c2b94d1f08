/*
 * What a push did to a project's repository, recorded as `RepositoryPushed` on the project's stream
 * (`project-<id>`). It carries what GitLab's push hook payload needs, computed once at push time, so
 * webhook delivery and a projection rebuild never have to read the repository again.
 */

export const ZERO_SHA = '0000000000000000000000000000000000000000';

/** The missing side of a ref update: all zeros, forty of them (SHA-1) or sixty-four (SHA-256). */
export const isZeroSha = (sha: string) => /^0+$/.test(sha);

/** A commit as the push hook shows it (`data_builder/push.rb`). */
export interface PushedCommit {
  id: string;
  message: string;
  /** ISO 8601 committer date with its offset: GitLab's `timestamp` (`committed_date.xmlschema`). */
  timestamp: string;
  author: { name: string; email: string };
  added: string[];
  modified: string[];
  removed: string[];
}

/** One accepted ref update of a push. */
export interface RefUpdate {
  /** Full ref name: `refs/heads/<branch>` or `refs/tags/<tag>`. */
  ref: string;
  /** Forty zeros when the ref was created. */
  before: string;
  /** Forty zeros when the ref was deleted. */
  after: string;
  /** The commit the ref now points at (a tag is peeled); null when it was deleted. */
  checkoutSha: string | null;
  /** The newest 20 commits the push brought to this ref, oldest first (GitLab's `commits.last(20)`). */
  commits: PushedCommit[];
  /** How many commits the push brought to this ref in all. */
  totalCommitsCount: number;
  /** An annotated tag's message (GitLab's `message`); null otherwise. */
  message: string | null;
}

/** Repository figures after the push (or housekeeping): GitLab's project statistics. */
export interface RepositoryStatistics {
  /** Commits reachable from the default branch. */
  commitCount: number;
  /** Bytes on disk under the bare repository. */
  repositorySize: number;
}

export interface RepositoryPushedData {
  projectId: number;
  /** The pusher. */
  userId: number;
  updates: RefUpdate[];
  /** Set when this push gave an empty repository its first branch and the project had none yet. */
  defaultBranch: string | null;
  statistics: RepositoryStatistics;
  at: string;
}

export const isTagRef = (ref: string) => ref.startsWith('refs/tags/');
export const isBranchRef = (ref: string) => ref.startsWith('refs/heads/');
