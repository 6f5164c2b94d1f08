import { dispatch, handledTypes, type EventHandlers, type Projector, type Recorded } from '@app/platform';
import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { ProjectEvent } from '../projects/project';

export const PROTECTED_BRANCH_TABLES = ['protected_branches'] as const;

type Projected = Extract<ProjectEvent, { type: `ProtectedBranch${string}` }>;

const on: EventHandlers<Projected> = {
  ProtectedBranchCreated: async (e, db) => {
    const d = e.data;
    await db.query(
      `insert into protected_branches (project_id, name, push_access_level, merge_access_level, allow_force_push,
                                       position, created_at, updated_at)
           values ($1, $2, $3, $4, $5, $6, $7, $7)`,
      [d.projectId, d.name, d.pushAccessLevel, d.mergeAccessLevel, d.allowForcePush ?? false, e.globalPosition, d.at],
    );
  },
  ProtectedBranchUpdated: async ({ data: d }, db) => {
    await db.query(
      `update protected_branches set push_access_level = coalesce($3, push_access_level),
                  merge_access_level = coalesce($4, merge_access_level),
                  allow_force_push = coalesce($5, allow_force_push), updated_at = $6
            where project_id = $1 and name = $2`,
      [d.projectId, d.name, d.pushAccessLevel ?? null, d.mergeAccessLevel ?? null, d.allowForcePush ?? null, d.at],
    );
  },
  ProtectedBranchRemoved: async ({ data: d }, db) => {
    await db.query(`delete from protected_branches where project_id = $1 and name = $2`, [d.projectId, d.name]);
  },
};

/** A project's protected-branch rules. A project's deletion takes them by the foreign key's cascade. */
@Injectable()
export class ProtectedBranchProjection implements Projector<Projected> {
  readonly name = 'protected-branches';
  readonly tables = PROTECTED_BRANCH_TABLES;
  readonly eventTypes = handledTypes(on);

  apply(e: Recorded<Projected>, db: EntityManager): Promise<void> {
    return dispatch(on, e, db);
  }
}
