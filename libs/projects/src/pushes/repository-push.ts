import type { RefUpdate, RepositoryStatistics } from '@app/git';

/*
 * What a push did to a project's repository, recorded as `RepositoryPushed` on a stream of its own
 * (`push-<id>`, see `pushStream`), or on the project's stream when the push gave the project its
 * default branch (it changed the project, and the project's fold needs it). It carries what
 * GitLab's push hook payload needs, computed once at push time, so webhook delivery and a projection
 * rebuild never have to read the repository again.
 */

export const ZERO_SHA = '0000000000000000000000000000000000000000';

/** The missing side of a ref update: all zeros, forty of them (SHA-1) or sixty-four (SHA-256). */
export const isZeroSha = (sha: string) => /^0+$/.test(sha);

/*
 * A push's vocabulary is declared once, by the git port that computes it (`PushedCommit`, `RefUpdate`,
 * `RepositoryStatistics` in libs/git): the event stores exactly what the port answered. They are
 * part of a stored event's shape, so a field is only ever added, never renamed or removed.
 */
export type { PushedCommit, RefUpdate, RepositoryStatistics } from '@app/git';

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

/**
 * A push's own stream: one event, so recording a push costs the same on a project's first day and
 * after its ten-thousandth push, and no project command folds the project's push history.
 */
export const pushStream = (pushId: number) => `push-${pushId}`;
export const PUSH_ID_SEQUENCE = 'push_id_seq';
export const pushDecider = {
  initial: (): null => null,
  evolve: (s: null, _e: { type: 'RepositoryPushed'; data: RepositoryPushedData }): null => s,
};

/** Whether a recorded push belongs on the project's stream: only the push that named the default branch. */
export const changesProject = (push: RepositoryPushedData) => push.defaultBranch !== null;
