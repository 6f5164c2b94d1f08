import { NotFound, type Actor } from '@app/platform';
import type { EntityManager } from 'typeorm';
import {
  actor,
  asDataSource,
  AT,
  groupCreated,
  groupMemberAdded,
  openProjectionDb,
  pageOf,
  projectCreated,
  projectMemberAdded,
  recorded,
  userCreated,
  type ProjectionDb,
} from '../../../../test/support/projection-db';
import type { DeployKeyEvent } from './deploy-key';
import { DeployKeyQueries } from './deploy-key.queries';

const LATER = '2026-02-01T00:00:00.000Z';
const ALL = pageOf(1, 100);

const added = (keyId: number, projectId: number, userId: number) =>
  recorded<DeployKeyEvent>(
    {
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
        canPush: false,
        at: AT,
      },
    },
    { streamId: `deploy-key-${keyId}` },
  );
const enabled = (keyId: number, projectId: number, canPush: boolean) =>
  recorded<DeployKeyEvent>({ type: 'DeployKeyEnabled', data: { keyId, projectId, canPush, at: LATER } });

describe('DeployKeyQueries', () => {
  let pg: ProjectionDb;
  beforeAll(async () => {
    pg = await openProjectionDb();
  });
  afterAll(() => pg.drop());

  /**
   * User 1 owns projects 10 and 11; user 2 is a developer of group 50 and its project 20; user 5 was a
   * member of project 11 until long ago. Key 1 was added on 10 by user 1 and later enabled on 20
   * with push; key 2 was added on 20 by user 2, key 3 on 11 by user 1.
   */
  const withKeys = (test: (q: DeployKeyQueries, db: EntityManager) => Promise<void>) =>
    pg.rollingBack(async (db) => {
      await pg.given(
        db,
        ...[1, 2, 3, 4, 5].map((id) => userCreated(id, id === 4 ? { isAdmin: true } : {})),
        groupCreated(50, { visibility: 'private' }),
        groupMemberAdded(50, 2, 30),
        projectCreated(10, 101),
        projectCreated(11, 101),
        projectCreated(20, 50),
        projectMemberAdded(11, 5, 40, '2000-01-01'),
        added(1, 10, 1),
        added(2, 20, 2),
        added(3, 11, 1),
        enabled(1, 20, true),
      );
      await test(new DeployKeyQueries(asDataSource(db)), db);
    });

  it('lists every key by id, and a project’s in the order it got them, with its push right', () =>
    withKeys(async (q) => {
      const all = await q.all(ALL);
      expect([all.total, all.rows.map((k) => k.id)]).toEqual([3, [1, 2, 3]]);
      expect(all.rows[0]).toEqual({ id: 1, title: 'key 1', key: 'ssh-ed25519 AAAA1', created_at: new Date(AT) });
      const page = await q.all(pageOf(2, 2));
      expect([page.total, page.rows.map((k) => k.id)]).toEqual([3, [3]]);
      const on20 = await q.forProject(20, ALL);
      expect([on20.total, on20.rows.map((k) => [k.id, k.can_push])]).toEqual([
        2,
        [
          [2, false],
          [1, true],
        ],
      ]);
      expect((await q.forProject(20, pageOf(2, 1))).rows.map((k) => k.id)).toEqual([1]);
      expect(await q.forProject(12, ALL)).toEqual({ rows: [], total: 0 });
    }));

  it('reads a key on a project (404 where it is not enabled) and any key by id', () =>
    withKeys(async (q, db) => {
      expect(await q.inProject(20, 1)).toEqual({
        id: 1,
        title: 'key 1',
        key: 'ssh-ed25519 AAAA1',
        created_at: new Date(AT),
        can_push: true,
      });
      expect((await q.inProject(10, 1, db)).can_push).toBe(false);
      await expect(q.inProject(11, 1)).rejects.toThrow(NotFound);
      expect((await q.get(3)).title).toBe('key 3');
      await expect(q.get(99)).rejects.toThrow('404 Deploy Key Not Found');
    }));

  it('grants an offered key by its fingerprint: its adder and every project it is enabled on', () =>
    withKeys(async (q) => {
      expect(await q.byFingerprint('SHA256:1')).toEqual({
        id: 1,
        title: 'key 1',
        userId: 1,
        projects: [
          { projectId: 10, canPush: false },
          { projectId: 20, canPush: true },
        ],
      });
      expect(await q.byFingerprint('SHA256:9')).toBeUndefined();
      expect(await q.byFingerprint('md5:1')).toBeUndefined();
    }));

  it('finds a key the caller may reuse: enabled on a project they have a level in', () =>
    withKeys(async (q, db) => {
      const reusable = async (who: Actor, adminReachesAll = false) => {
        const found: number[] = [];
        for (const id of [1, 2, 3]) {
          const byKey = await q.accessibleId(db, who, { key: `ssh-ed25519 AAAA${id}` });
          const byId = await q.accessibleId(db, who, { id, adminReachesAll });
          expect(byKey).toBe(adminReachesAll ? byKey : byId);
          if (byId !== undefined) found.push(byId);
        }
        return found;
      };
      expect(await reusable(actor(1))).toEqual([1, 3]);
      expect(await reusable(actor(2))).toEqual([1, 2]); // through group 50's project 20
      expect(await reusable(actor(3))).toEqual([]);
      expect(await reusable(actor(5))).toEqual([]); // the membership expired
      expect(await reusable(actor(4, { isAdmin: true }))).toEqual([]);
      expect(await reusable(actor(4, { isAdmin: true }), true)).toEqual([1, 2, 3]);
      expect(await reusable(actor(3), true)).toEqual([]); // only administrators reach all
      expect(await q.accessibleId(db, actor(4, { isAdmin: true }), { key: 'ssh-ed25519 AAAA1' })).toBeUndefined();
    }));

  it("tells a key's text on a project, a taken fingerprint and the projects gone", () =>
    withKeys(async (q, db) => {
      expect(await q.idOnProject(db, 20, 'ssh-ed25519 AAAA1')).toBe(1);
      expect(await q.idOnProject(db, 11, 'ssh-ed25519 AAAA1')).toBeUndefined();
      expect(await q.fingerprintTaken(db, 'md5:2')).toBe(true);
      expect(await q.fingerprintTaken(db, 'SHA256:2')).toBe(false);
      expect(await q.goneProjectIds(db, [10, 99, 20, 98])).toEqual([99, 98]);
    }));
});
