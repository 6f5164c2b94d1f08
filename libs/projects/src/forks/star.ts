import { NotModified } from '@app/platform';

/* Stars: one tiny stream per (project, user), `star-<project>-<user>`, so they never lengthen the project's. */

export type StarEvent =
  | { type: 'ProjectStarred'; data: { projectId: number; userId: number; at: string } }
  | { type: 'ProjectUnstarred'; data: { projectId: number; userId: number; at: string } };

export const starDecider = {
  initial: (): { starred: boolean } => ({ starred: false }),
  evolve: (_: { starred: boolean }, e: StarEvent) => ({ starred: e.type === 'ProjectStarred' }),
};

/** GitLab answers 304 with no body when starring a starred project. */
export function star(s: { starred: boolean }, projectId: number, userId: number, now: Date): StarEvent[] {
  if (s.starred) throw new NotModified();
  return [{ type: 'ProjectStarred', data: { projectId, userId, at: now.toISOString() } }];
}

/** ... and when unstarring a project the caller has not starred. */
export function unstar(s: { starred: boolean }, projectId: number, userId: number, now: Date): StarEvent[] {
  if (!s.starred) throw new NotModified();
  return [{ type: 'ProjectUnstarred', data: { projectId, userId, at: now.toISOString() } }];
}
