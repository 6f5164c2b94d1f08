import { dispatch, handledTypes, type EventHandlers, type Projector, type Recorded } from '@app/platform';
import type { GroupEvent } from '@app/groups';
import type { UserEvent } from '@app/users';
import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { DeployKeyEvent } from './deploy-key';
import type { ProjectEvent } from '../projects/project';

export const DEPLOY_KEY_TABLES = ['deploy_keys', 'deploy_keys_projects'] as const;

/** Deploy key events, and the deletions that can leave a key on no project or without its user. */
type Projected =
  | DeployKeyEvent
  | Extract<ProjectEvent | GroupEvent | UserEvent, { type: 'ProjectDeleted' | 'GroupDeleted' | 'UserDeleted' }>;

/** GitLab destroys a private deploy key left on no project; every key made through the API is private. */
const DROP_ORPHANS = `delete from deploy_keys k
  where not exists (select 1 from deploy_keys_projects l where l.deploy_key_id = k.id)`;

const on: EventHandlers<Projected> = {
  DeployKeyAdded: async ({ data: d }, db) => {
    await db.query(
      `insert into deploy_keys (id, user_id, title, key, key_type, fingerprint, fingerprint_sha256, created_at, updated_at)
           values ($1, $2, $3, $4, $5, $6, $7, $8, $8)`,
      [d.keyId, d.userId, d.title, d.key, d.keyType, d.fingerprint, d.fingerprintSha256, d.at],
    );
    await link(db, d.keyId, d.projectId, d.canPush, d.at);
    await db.query(`${DROP_ORPHANS} and k.id = $1`, [d.keyId]); // its project went meanwhile: no key either
  },
  DeployKeyEnabled: async ({ data: d }, db) => {
    await link(db, d.keyId, d.projectId, d.canPush, d.at);
  },
  DeployKeyUpdated: async ({ data: d }, db) => {
    if (d.title !== undefined)
      await db.query(`update deploy_keys set title = $2, updated_at = $3 where id = $1`, [d.keyId, d.title, d.at]);
    if (d.canPush !== undefined)
      await db.query(
        `update deploy_keys_projects set can_push = $3, updated_at = $4 where deploy_key_id = $1 and project_id = $2`,
        [d.keyId, d.projectId, d.canPush, d.at],
      );
  },
  DeployKeyDisabled: async ({ data: d }, db) => {
    await db.query(`delete from deploy_keys_projects where deploy_key_id = $1 and project_id = $2`, [
      d.keyId,
      d.projectId,
    ]);
    // A key whose other projects were deleted since is an orphan now, whatever its stream counted.
    await db.query(`${DROP_ORPHANS} and k.id = $1`, [d.keyId]);
  },
  DeployKeyRemoved: async ({ data: d }, db) => {
    await db.query(`delete from deploy_keys where id = $1`, [d.keyId]);
  },
  ProjectDeleted: async ({ data: d }, db) => {
    // The projects projector's delete cascades to the links too; saying it here keeps the order of
    // projectors out of it.
    await db.query(`delete from deploy_keys_projects where project_id = $1`, [d.projectId]);
    await db.query(DROP_ORPHANS);
  },
  GroupDeleted: async (_e, db) => {
    // The group's projects went by the namespaces' cascade (the groups projector runs first), their links with them.
    await db.query(DROP_ORPHANS);
  },
  UserDeleted: async ({ data: d }, db) => {
    // The key keeps working for its projects: a soft delete hands it to the ghost user, a hard one to nobody.
    await db.query(`update deploy_keys set user_id = $2 where user_id = $1`, [d.userId, d.ghostUserId ?? null]);
    // The user's personal projects went by the namespaces' cascade, their links with them.
    await db.query(DROP_ORPHANS);
  },
};

async function link(db: EntityManager, keyId: number, projectId: number, canPush: boolean, at: string): Promise<void> {
  // A project deleted between the command's check and this append keeps no link (its deletion
  // removed the others): the foreign key would otherwise fail the whole command with a 500.
  await db.query(
    `insert into deploy_keys_projects (deploy_key_id, project_id, can_push, created_at, updated_at)
       select $1, $2, $3, $4, $4 where exists (select 1 from projects where id = $2)`,
    [keyId, projectId, canPush, at],
  );
}

/** Deploy keys and the projects they are enabled on. */
@Injectable()
export class DeployKeyProjection implements Projector<Projected> {
  readonly name = 'deploy-keys';
  readonly tables = DEPLOY_KEY_TABLES;
  readonly eventTypes = handledTypes(on);

  apply(e: Recorded<Projected>, db: EntityManager): Promise<void> {
    return dispatch(on, e, db);
  }
}
