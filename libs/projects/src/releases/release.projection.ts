import { dispatch, handledTypes, type EventHandlers, type Projector, type Recorded } from '@app/platform';
import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { ProjectEvent } from '../projects/project';

export const RELEASE_TABLES = ['releases'] as const;

type Projected = Extract<ProjectEvent, { type: `ProjectRelease${string}` }>;

const on: EventHandlers<Projected> = {
  ProjectReleaseCreated: async ({ data: d }, db) => {
    await db.query(
      `insert into releases (project_id, tag, description, created_at, updated_at) values ($1, $2, $3, $4, $4)`,
      [d.projectId, d.tagName, d.description, d.at],
    );
  },
  ProjectReleaseUpdated: async ({ data: d }, db) => {
    await db.query(`update releases set description = $3, updated_at = $4 where project_id = $1 and tag = $2`, [
      d.projectId,
      d.tagName,
      d.description,
      d.at,
    ]);
  },
  ProjectReleaseRemoved: async ({ data: d }, db) => {
    await db.query(`delete from releases where project_id = $1 and tag = $2`, [d.projectId, d.tagName]);
  },
};

/** Release notes of tags. A project's deletion takes them by the foreign key's cascade. */
@Injectable()
export class ReleaseProjection implements Projector<Projected> {
  readonly name = 'releases';
  readonly tables = RELEASE_TABLES;
  readonly eventTypes = handledTypes(on);

  apply(e: Recorded<Projected>, db: EntityManager): Promise<void> {
    return dispatch(on, e, db);
  }
}
