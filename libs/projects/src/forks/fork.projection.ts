import type { EventHandlers, Recorded } from '@app/platform';
import type { EntityManager } from 'typeorm';
import { insertProjectRow, recountForks, setStatistics } from '../projects/project-rows';
import type { ProjectForkEvent } from './fork';
import type { StarEvent } from './star';

/** The forks and stars part of the `projects` read model: fork rows and counts, `project_stars` and `star_count`. */
async function relateFork(
  e: Recorded<Extract<ProjectForkEvent, { type: 'ProjectForkRelationCreated' | 'ProjectForkRelationRemoved' }>>,
  db: EntityManager,
): Promise<void> {
  const created = e.type === 'ProjectForkRelationCreated';
  await db.query(`update projects set forked_from_id = $2 where id = $1`, [
    e.data.projectId,
    created ? e.data.forkedFromId : null,
  ]);
  await recountForks(db, e.data.forkedFromId);
}

async function recountStars(db: EntityManager, projectId: number): Promise<void> {
  await db.query(
    `update projects set star_count = (select count(*) from project_stars where project_id = $1) where id = $1`,
    [projectId],
  );
}

export const forkHandlers: EventHandlers<ProjectForkEvent | StarEvent> = {
  ProjectForked: async ({ data: d }, db) => {
    await insertProjectRow(db, d, d.forkedFromId);
    await recountForks(db, d.forkedFromId);
  },
  ProjectImportStatusChanged: async ({ data: d }, db) => {
    await db.query(`update projects set import_status = $2, import_error = $3 where id = $1`, [
      d.projectId,
      d.status,
      d.error,
    ]);
    if (d.statistics) await setStatistics(db, d.projectId, d.statistics);
  },
  ProjectForkRelationCreated: relateFork,
  ProjectForkRelationRemoved: relateFork,
  ProjectStarred: async ({ data: d }, db) => {
    await db.query(
      `insert into project_stars (project_id, user_id, created_at) values ($1, $2, $3) on conflict do nothing`,
      [d.projectId, d.userId, d.at],
    );
    await recountStars(db, d.projectId);
  },
  ProjectUnstarred: async ({ data: d }, db) => {
    await db.query(`delete from project_stars where project_id = $1 and user_id = $2`, [d.projectId, d.userId]);
    await recountStars(db, d.projectId);
  },
};
