import { Conflict } from '@app/platform';
import type { RepositoryStatistics } from '../pushes/repository-push';
import { existing, type ProjectWith } from '../projects/existing-project';

/*
 * Housekeeping (`POST /projects/:id/housekeeping`): a request on the project's stream, run by the
 * `housekeeping` git job, which records its end (and the repository's statistics after it).
 */

export type HousekeepingEvent =
  | { type: 'ProjectHousekeepingRequested'; data: { projectId: number; at: string } }
  | { type: 'ProjectHousekeepingFinished'; data: { projectId: number; at: string; statistics?: RepositoryStatistics } };

type WithHousekeeping = ProjectWith<{ housekeepingPending: boolean }>;

export const housekeepingPending = (e: HousekeepingEvent): boolean => e.type === 'ProjectHousekeepingRequested';

/** One housekeeping at a time per project: a second request while one is pending is 409. */
export function requestHousekeeping(s: WithHousekeeping, now: Date): HousekeepingEvent[] {
  const p = existing(s);
  if (p.housekeepingPending) throw new Conflict('Housekeeping is already pending for this project');
  return [{ type: 'ProjectHousekeepingRequested', data: { projectId: p.projectId, at: now.toISOString() } }];
}

export function finishHousekeeping(
  s: WithHousekeeping,
  now: Date,
  statistics?: RepositoryStatistics,
): HousekeepingEvent[] {
  if (!s.exists || !s.housekeepingPending) return [];
  return [
    {
      type: 'ProjectHousekeepingFinished',
      data: { projectId: s.projectId, at: now.toISOString(), ...(statistics ? { statistics } : {}) },
    },
  ];
}
