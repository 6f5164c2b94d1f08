import { assertNever, type Handled, type Projector, type Recorded } from '@app/platform';
import type { GroupEvent } from '@app/groups';
import type { UserEvent } from '@app/users';
import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { DeployKeyEvent } from '../domain/deploy-key';
import type { ProjectEvent } from '../domain/project';

export const DEPLOY_KEY_TABLES = ['deploy_keys', 'deploy_keys_projects'] as const;

const HANDLED = [
  'DeployKeyAdded',
  'DeployKeyEnabled',
  'DeployKeyUpdated',
  'DeployKeyDisabled',
  'DeployKeyRemoved',
  'ProjectDeleted',
  'GroupDeleted',
  'UserDeleted',
] as const;
type Projected = Handled<DeployKeyEvent | ProjectEvent | GroupEvent | UserEvent, typeof HANDLED>;

/** GitLab destroys a private deploy key left on no project; every key made through the API is private. */
const DROP_ORPHANS = `delete from deploy_keys k
  where not exists (select 1 from deploy_keys_projects l where l.deploy_key_id = k.id)`;

/** Deploy keys and the projects they are enabled on. */
@Injectable()
export class DeployKeyProjection implements Projector<Projected> {
  readonly name = 'deploy-keys';
  readonly tables = DEPLOY_KEY_TABLES;
  readonly eventTypes = HANDLED;

  async apply(e: Recorded<Projected>, db: EntityManager): Promise<void> {
    switch (e.type) {
      case 'DeployKeyAdded': {
        const d = e.data;
        await db.query(
          `insert into deploy_keys (id, user_id, title, key, key_type, fingerprint, fingerprint_sha256, created_at, updated_at)
           values ($1, $2, $3, $4, $5, $6, $7, $8, $8)`,
          [d.keyId, d.userId, d.title, d.key, d.keyType, d.fingerprint, d.fingerprintSha256, d.at],
        );
        await this.link(db, d.keyId, d.projectId, d.canPush, d.at);
        await db.query(`${DROP_ORPHANS} and k.id = $1`, [d.keyId]); // its project went meanwhile: no key either
        return;
      }
      case 'DeployKeyEnabled':
        await this.link(db, e.data.keyId, e.data.projectId, e.data.canPush, e.data.at);
        return;
      case 'DeployKeyUpdated': {
        const d = e.data;
        if (d.title !== undefined)
          await db.query(`update deploy_keys set title = $2, updated_at = $3 where id = $1`, [d.keyId, d.title, d.at]);
        if (d.canPush !== undefined)
          await db.query(
            `update deploy_keys_projects set can_push = $3, updated_at = $4 where deploy_key_id = $1 and project_id = $2`,
            [d.keyId, d.projectId, d.canPush, d.at],
          );
        return;
      }
      case 'DeployKeyDisabled':
        await db.query(`delete from deploy_keys_projects where deploy_key_id = $1 and project_id = $2`, [
          e.data.keyId,
          e.data.projectId,
        ]);
        // A key whose other projects were deleted since is an orphan now, whatever its stream counted.
        await db.query(`${DROP_ORPHANS} and k.id = $1`, [e.data.keyId]);
        return;
      case 'DeployKeyRemoved':
        await db.query(`delete from deploy_keys where id = $1`, [e.data.keyId]);
        return;
      case 'ProjectDeleted':
        // The projects projector's delete cascades to the links too; saying it here keeps the order of
        // projectors out of it.
        await db.query(`delete from deploy_keys_projects where project_id = $1`, [e.data.projectId]);
        await db.query(DROP_ORPHANS);
        return;
      case 'GroupDeleted':
        // The group's projects went by the namespaces' cascade (the groups projector runs first), their links with them.
        await db.query(DROP_ORPHANS);
        return;
      case 'UserDeleted':
        // The key keeps working for its projects: a soft delete hands it to the ghost user, a hard one to nobody.
        await db.query(`update deploy_keys set user_id = $2 where user_id = $1`, [
          e.data.userId,
          e.data.ghostUserId ?? null,
        ]);
        // The user's personal projects went by the namespaces' cascade, their links with them.
        await db.query(DROP_ORPHANS);
        return;
      default:
        return assertNever(e);
    }
  }

  private async link(db: EntityManager, keyId: number, projectId: number, canPush: boolean, at: string) {
    // A project deleted between the command's check and this append keeps no link (its deletion
    // removed the others): the foreign key would otherwise fail the whole command with a 500.
    await db.query(
      `insert into deploy_keys_projects (deploy_key_id, project_id, can_push, created_at, updated_at)
       select $1, $2, $3, $4, $4 where exists (select 1 from projects where id = $2)`,
      [keyId, projectId, canPush, at],
    );
  }
}
