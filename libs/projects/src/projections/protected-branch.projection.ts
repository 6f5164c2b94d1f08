import { assertNever, type Handled, type Projector, type Recorded } from '@app/platform';
import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { ProjectEvent } from '../domain/project';

export const PROTECTED_BRANCH_TABLES = ['protected_branches'] as const;

const HANDLED = ['ProtectedBranchCreated', 'ProtectedBranchUpdated', 'ProtectedBranchRemoved'] as const;
type Projected = Handled<ProjectEvent, typeof HANDLED>;

/** A project's protected-branch rules. A project's deletion takes them by the foreign key's cascade. */
@Injectable()
export class ProtectedBranchProjection implements Projector<Projected> {
  readonly name = 'protected-branches';
  readonly tables = PROTECTED_BRANCH_TABLES;
  readonly eventTypes = HANDLED;

  async apply(e: Recorded<Projected>, db: EntityManager): Promise<void> {
    switch (e.type) {
      case 'ProtectedBranchCreated': {
        const d = e.data;
        await db.query(
          `insert into protected_branches (project_id, name, push_access_level, merge_access_level, position, created_at, updated_at)
           values ($1, $2, $3, $4, $5, $6, $6)`,
          [d.projectId, d.name, d.pushAccessLevel, d.mergeAccessLevel, e.globalPosition, d.at],
        );
        return;
      }
      case 'ProtectedBranchUpdated': {
        const d = e.data;
        await db.query(
          `update protected_branches set push_access_level = coalesce($3, push_access_level),
                  merge_access_level = coalesce($4, merge_access_level), updated_at = $5
            where project_id = $1 and name = $2`,
          [d.projectId, d.name, d.pushAccessLevel ?? null, d.mergeAccessLevel ?? null, d.at],
        );
        return;
      }
      case 'ProtectedBranchRemoved':
        await db.query(`delete from protected_branches where project_id = $1 and name = $2`, [
          e.data.projectId,
          e.data.name,
        ]);
        return;
      default:
        return assertNever(e);
    }
  }
}
