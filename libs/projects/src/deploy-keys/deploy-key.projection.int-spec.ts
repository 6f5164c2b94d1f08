import { rows } from '@app/platform';
import type { EntityManager } from 'typeorm';
import {
  apply,
  AT,
  groupCreated,
  openProjectionDb,
  projectCreated,
  recorded,
  userCreated,
  type ProjectionDb,
} from '../../../../test/support/projection-db';
import type { DeployKeyEvent } from './deploy-key';
import { DeployKeyProjection } from './deploy-key.projection';

const LATER = '2026-02-01T00:00:00.000Z';
const projection = new DeployKeyProjection();

const added = (keyId: number, projectId: number, canPush = false, userId = 1): DeployKeyEvent => ({
  type: 'DeployKeyAdded',
  data: {
    keyId,
    projectId,
    userId,
    title: `key ${keyId}`,
    key: `ssh-ed25519 AAAA${keyId}`,
    keyType: 'ed25519',
    fingerprint: `md5:${keyId}`,
    fingerprintSha256: `SHA256:${keyId}`,
    canPush,
    at: AT,
  },
});
const enabled = (keyId: number, projectId: number, canPush = false): DeployKeyEvent => ({
  type: 'DeployKeyEnabled',
  data: { keyId, projectId, canPush, at: LATER },
});

const keys = (db: EntityManager) =>
  rows<Record<string, unknown>>(
    db,
    `select id, user_id, title, key, key_type, fingerprint, fingerprint_sha256, created_at, updated_at
       from deploy_keys order by id`,
  );
const links = (db: EntityManager) =>
  rows<{ deploy_key_id: number; project_id: number; can_push: boolean; created_at: Date; updated_at: Date }>(
    db,
    `select deploy_key_id, project_id, can_push, created_at, updated_at from deploy_keys_projects
      order by deploy_key_id, project_id`,
  );
const linked = async (db: EntityManager) =>
  (await links(db)).map((l) => [l.deploy_key_id, l.project_id, l.can_push] as const);
const keyIds = async (db: EntityManager) => (await keys(db)).map((k) => k.id);

describe('DeployKeyProjection', () => {
  let pg: ProjectionDb;
  beforeAll(async () => {
    pg = await openProjectionDb();
  });
  afterAll(() => pg.drop());

  // User 1 owns projects 10 and 11 in its namespace (101); group 50 holds project 12.
  const withProjects = (test: (db: EntityManager) => Promise<void>) =>
    pg.rollingBack(async (db) => {
      await pg.given(
        db,
        userCreated(1),
        userCreated(2),
        groupCreated(50),
        projectCreated(10, 101),
        projectCreated(11, 101),
        projectCreated(12, 50),
      );
      await test(db);
    });

  it('handles the deploy key events and the deletions that reach keys', () => {
    expect([...projection.eventTypes].sort()).toEqual([
      'DeployKeyAdded',
      'DeployKeyDisabled',
      'DeployKeyEnabled',
      'DeployKeyRemoved',
      'DeployKeyUpdated',
      'GroupDeleted',
      'ProjectDeleted',
      'UserDeleted',
    ]);
  });

  it('adds a key with its first link, and enables it on more projects', () =>
    withProjects(async (db) => {
      await apply(projection, db, added(1, 10, true), enabled(1, 12));
      expect(await keys(db)).toEqual([
        {
          id: 1,
          user_id: 1,
          title: 'key 1',
          key: 'ssh-ed25519 AAAA1',
          key_type: 'ed25519',
          fingerprint: 'md5:1',
          fingerprint_sha256: 'SHA256:1',
          created_at: new Date(AT),
          updated_at: new Date(AT),
        },
      ]);
      expect(await links(db)).toEqual([
        { deploy_key_id: 1, project_id: 10, can_push: true, created_at: new Date(AT), updated_at: new Date(AT) },
        { deploy_key_id: 1, project_id: 12, can_push: false, created_at: new Date(LATER), updated_at: new Date(LATER) },
      ]);
    }));

  it('keeps no key added to, and no link enabled on, a project deleted meanwhile', () =>
    withProjects(async (db) => {
      await apply(projection, db, added(1, 99), added(2, 10), enabled(2, 98));
      expect(await keyIds(db)).toEqual([2]);
      expect(await linked(db)).toEqual([[2, 10, false]]);
    }));

  it('renames a key everywhere and changes can_push on one link only', () =>
    withProjects(async (db) => {
      await apply(
        projection,
        db,
        added(1, 10),
        enabled(1, 11),
        { type: 'DeployKeyUpdated', data: { keyId: 1, projectId: 10, title: 'renamed', at: LATER } },
        { type: 'DeployKeyUpdated', data: { keyId: 1, projectId: 11, canPush: true, at: LATER } },
      );
      expect(await keys(db)).toMatchObject([{ id: 1, title: 'renamed', updated_at: new Date(LATER) }]);
      expect(await links(db)).toEqual([
        { deploy_key_id: 1, project_id: 10, can_push: false, created_at: new Date(AT), updated_at: new Date(AT) },
        { deploy_key_id: 1, project_id: 11, can_push: true, created_at: new Date(LATER), updated_at: new Date(LATER) },
      ]);
    }));

  it('disables a key on one project, drops it once on none, and removes it', () =>
    withProjects(async (db) => {
      await apply(projection, db, added(1, 10), enabled(1, 11), added(2, 10), added(3, 11), {
        type: 'DeployKeyDisabled',
        data: { keyId: 1, projectId: 10, at: LATER },
      });
      expect(await linked(db)).toEqual([
        [1, 11, false],
        [2, 10, false],
        [3, 11, false],
      ]);
      await apply(projection, db, { type: 'DeployKeyDisabled', data: { keyId: 2, projectId: 10, at: LATER } });
      expect(await keyIds(db)).toEqual([1, 3]);
      await apply(projection, db, { type: 'DeployKeyRemoved', data: { keyId: 3, at: LATER } });
      expect(await keyIds(db)).toEqual([1]);
      expect(await linked(db)).toEqual([[1, 11, false]]);
    }));

  it("drops a project's links, and the keys left on no project, when the project is deleted", () =>
    withProjects(async (db) => {
      await apply(projection, db, added(1, 10), enabled(1, 11), added(2, 10));
      await apply(
        projection,
        db,
        recorded({ type: 'ProjectDeleted' as const, data: { projectId: 10, namespaceId: 101, at: LATER } }),
      );
      expect(await keyIds(db)).toEqual([1]);
      expect(await linked(db)).toEqual([[1, 11, false]]);
    }));

  it('drops the keys left on no project when a group goes with its projects', () =>
    withProjects(async (db) => {
      await apply(projection, db, added(1, 12), added(2, 10), enabled(2, 12));
      await pg.given(db, recorded({ type: 'GroupDeleted' as const, data: { groupId: 50, at: LATER } }));
      expect(await keyIds(db)).toEqual([2]);
      expect(await linked(db)).toEqual([[2, 10, false]]);
    }));

  it("hands a deleted user's keys to the ghost user, or to nobody, and drops those left on no project", () =>
    withProjects(async (db) => {
      await pg.given(db, userCreated(3, { ghost: true }), projectCreated(20, 102, { creatorId: 2 }));
      await apply(projection, db, added(1, 12), added(2, 10), added(3, 20, false, 2));
      await pg.given(
        db,
        recorded({
          type: 'UserDeleted' as const,
          data: { userId: 1, username: 'user1', hardDelete: false, ghostUserId: 3, at: LATER },
        }),
      );
      // User 1's personal projects went with its namespace; key 2 with them. Key 1 (group project) stays, now the ghost's.
      expect((await keys(db)).map((k) => [k.id, k.user_id])).toEqual([
        [1, 3],
        [3, 2],
      ]);
      await pg.given(
        db,
        recorded({ type: 'UserDeleted' as const, data: { userId: 2, username: 'user2', hardDelete: true, at: LATER } }),
      );
      expect((await keys(db)).map((k) => [k.id, k.user_id])).toEqual([[1, 3]]);
    }));
});
