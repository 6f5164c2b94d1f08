import { dispatch, handledTypes, type EventHandlers, type Projector, type Recorded } from '@app/platform';
import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { ProjectEvent } from '../projects/project';

export const PROTECTED_TAG_TABLES = ['protected_tags'] as const;

type Projected = Extract<ProjectEvent, { type: `ProtectedTag${string}` }>;

const on: EventHandlers<Projected> = {
  ProtectedTagCreated: async (e, db) => {
    const d = e.data;
    await db.query(
      `insert into protected_tags (project_id, name, create_access_level, position, created_at)
           values ($1, $2, $3, $4, $5)`,
      [d.projectId, d.name, d.createAccessLevel, e.globalPosition, d.at],
    );
  },
  ProtectedTagRemoved: async ({ data: d }, db) => {
    await db.query(`delete from protected_tags where project_id = $1 and name = $2`, [d.projectId, d.name]);
  },
};

/** A project's protected-tag rules. A project's deletion takes them by the foreign key's cascade. */
@Injectable()
export class ProtectedTagProjection implements Projector<Projected> {
  readonly name = 'protected-tags';
  readonly tables = PROTECTED_TAG_TABLES;
  readonly eventTypes = handledTypes(on);

  apply(e: Recorded<Projected>, db: EntityManager): Promise<void> {
    return dispatch(on, e, db);
  }
}
