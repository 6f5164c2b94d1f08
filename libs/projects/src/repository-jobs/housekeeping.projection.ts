import type { EventHandlers } from '@app/platform';
import { setStatistics } from '../projects/project-rows';
import type { HousekeepingEvent } from './housekeeping';

/** Housekeeping's part of the `projects` read model: the statistics after a run (a request changes no row). */
export const housekeepingHandlers: EventHandlers<Extract<HousekeepingEvent, { type: 'ProjectHousekeepingFinished' }>> =
  {
    ProjectHousekeepingFinished: async ({ data: d }, db) => {
      if (d.statistics) await setStatistics(db, d.projectId, d.statistics);
    },
  };
