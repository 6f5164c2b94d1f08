import { rows, type Actor } from '@app/platform';
import type { EntityManager } from 'typeorm';
import {
  actor,
  AT,
  groupCreated,
  groupMemberAdded,
  openProjectionDb,
  projectCreated,
  projectMemberAdded,
  recorded,
  userCreated,
  type ProjectionDb,
} from '../../../../test/support/projection-db';
import {
  authorizedProjectIdsSql,
  projectAccessSql,
  projectsVisibleSql,
  projectMembershipsSql,
  projectVisibleSql,
  sharedLevelSql,
} from './project-access';

const PAST = '2000-01-01';
const FUTURE = '2999-01-01';

const shared = (projectId: number, groupId: number, groupAccess: number, expiresAt: string | null = null) =>
  recorded({
    type: 'ProjectSharedWithGroup' as const,
    data: { projectId, linkId: projectId * 100 + groupId, groupId, groupAccess, expiresAt, at: AT },
  });

/**
 * Group 50 with subgroup 51; group 60 and 61 to share with. Users: 1 owns personal projects 10
 * (private) and 11 (internal); 2 is a developer of 50; 3 a maintainer of 60 and a guest of 61; 4 a
 * reporter of project 20 until a future day; 5 a maintainer of 51 whose membership expired; 6 is
 * external and a guest of project 21; 7 belongs nowhere. Projects 20 (private) in 51, 21 (private)
 * in 50, shared with 60 as developer and with 61 as maintainer; 22 (public) in 50, shared with 60
 * until long ago.
 */
const world = [
  ...[1, 2, 3, 4, 5, 7].map((id) => userCreated(id)),
  userCreated(6, { external: true }),
  groupCreated(50, { visibility: 'private' }),
  groupCreated(51, { parentId: 50, visibility: 'private' }),
  groupCreated(60),
  groupCreated(61),
  groupMemberAdded(50, 2, 30),
  groupMemberAdded(60, 3, 40),
  groupMemberAdded(61, 3, 10),
  groupMemberAdded(51, 5, 40, PAST),
  projectCreated(10, 101),
  projectCreated(11, 101, { visibility: 'internal' }),
  projectCreated(20, 51),
  projectCreated(21, 50),
  projectCreated(22, 50, { visibility: 'public' }),
  projectMemberAdded(20, 4, 20, FUTURE),
  projectMemberAdded(21, 6, 10),
  shared(21, 60, 30),
  shared(21, 61, 40),
  shared(22, 60, 30, PAST),
];
const USERS = [1, 2, 3, 4, 5, 6, 7];

describe('project access fragments', () => {
  let pg: ProjectionDb;
  beforeAll(async () => {
    pg = await openProjectionDb();
  });
  afterAll(() => pg.drop());

  const inWorld = (test: (db: EntityManager) => Promise<void>) =>
    pg.rollingBack(async (db) => {
      await pg.given(db, ...world);
      await test(db);
    });
  /** `[project id, value]` for every project, the caller's id as `$1`. */
  const perProject = async <T>(db: EntityManager, sql: string, uid: number | null) =>
    (
      await rows<{ id: number; v: T }>(
        db,
        `select p.id, ${sql} as v, $1::int as caller from projects p order by p.id`,
        [uid],
      )
    ).map((r) => [r.id, r.v]);

  it('takes the highest level of every way in: membership, group, ancestor, share, personal namespace', () =>
    inWorld(async (db) => {
      const levels = async (uid: number) => perProject<number>(db, projectAccessSql('p', '$1'), uid);
      expect(await levels(1)).toEqual([
        [10, 50],
        [11, 50],
        [20, 0],
        [21, 0],
        [22, 0],
      ]);
      expect(await levels(2)).toEqual([
        [10, 0],
        [11, 0],
        [20, 30],
        [21, 30],
        [22, 30],
      ]);
      // Through shares: the lesser of the share and the membership, the highest share counting; none expired.
      expect(await levels(3)).toEqual([
        [10, 0],
        [11, 0],
        [20, 0],
        [21, 30],
        [22, 0],
      ]);
      expect(await levels(4)).toEqual([
        [10, 0],
        [11, 0],
        [20, 20],
        [21, 0],
        [22, 0],
      ]);
      expect(await levels(5)).toEqual([
        [10, 0],
        [11, 0],
        [20, 0],
        [21, 0],
        [22, 0],
      ]);
      expect(await levels(6)).toEqual([
        [10, 0],
        [11, 0],
        [20, 0],
        [21, 10],
        [22, 0],
      ]);
    }));

  it('counts a non-member of a shared-with group as no level, not as the share', () =>
    inWorld(async (db) => {
      expect(await perProject<number | null>(db, sharedLevelSql('p', '$1'), 7)).toEqual([
        [10, null],
        [11, null],
        [20, null],
        [21, 0],
        [22, null],
      ]);
    }));

  it('holds in the authorized set exactly the projects where the caller has a level', () =>
    inWorld(async (db) => {
      for (const uid of USERS) {
        const inSet = await perProject<boolean>(db, `p.id in ${authorizedProjectIdsSql('$1')}`, uid);
        const hasLevel = await perProject<boolean>(db, `${projectAccessSql('p', '$1')} > 0`, uid);
        expect([uid, inSet]).toEqual([uid, hasLevel]);
      }
    }));

  it.each([
    ['anonymous', undefined, [22]],
    ['the personal owner', actor(1), [10, 11, 22]],
    ['a group member', actor(2), [11, 20, 21, 22]],
    ['a member of groups shared with', actor(3), [11, 21, 22]],
    ['a project member', actor(4), [11, 20, 22]],
    ['an expired member', actor(5), [11, 22]],
    ['an external project member', actor(6, { external: true }), [21, 22]],
    ['an administrator', actor(7, { isAdmin: true }), [10, 11, 20, 21, 22]],
  ] as [string, Actor | undefined, number[]][])(
    'shows %s the same projects one at a time and as a list',
    (_, who, visible) =>
      inWorld(async (db) => {
        const uid = who?.id ?? null;
        const one = await perProject<boolean>(db, projectVisibleSql('p', who, '$1'), uid);
        const many = await perProject<boolean>(db, projectsVisibleSql('p', who, '$1'), uid);
        expect(one.filter(([, v]) => v).map(([id]) => id)).toEqual(visible);
        expect(many).toEqual(one);
      }),
  );

  /** Group 62 has user 7 as maintainer; 61 is shared with 62 (maintainer), and 50 with 62 (reporter). */
  const groupShares = [
    groupCreated(62, { visibility: 'private' }),
    groupMemberAdded(62, 7, 40),
    recorded({
      type: 'GroupSharedWithGroup' as const,
      data: { groupId: 61, sharedWithGroupId: 62, groupAccess: 40, expiresAt: null, at: AT },
    }),
    recorded({
      type: 'GroupSharedWithGroup' as const,
      data: { groupId: 50, sharedWithGroupId: 62, groupAccess: 20, expiresAt: null, at: AT },
    }),
  ];

  it('gives the members of a group the projects’ group is shared with the lower level; a project’s share does not chain', () =>
    inWorld(async (db) => {
      await pg.given(db, ...groupShares);
      // 20 (in 51, under 50), 21 and 22 (in 50): reporter through 50's share; 21's share with 61 passes 61's share on to nobody.
      expect(await perProject<number>(db, projectAccessSql('p', '$1'), 7)).toEqual([
        [10, 0],
        [11, 0],
        [20, 20],
        [21, 20],
        [22, 20],
      ]);
      const inSet = await perProject<boolean>(db, `p.id in ${authorizedProjectIdsSql('$1')}`, 7);
      expect(inSet.filter(([, v]) => v).map(([id]) => id)).toEqual([20, 21, 22]);
    }));

  it('lists every way into a project, one row per way (members/all takes the highest)', () =>
    inWorld(async (db) => {
      await pg.given(db, ...groupShares);
      const ways = await rows<{ user_id: number; access_level: number }>(
        db,
        `select user_id, access_level from (${projectMembershipsSql('$1::int')}) w order by user_id, access_level`,
        [21],
      );
      expect(ways.map((w) => [w.user_id, w.access_level])).toEqual([
        [2, 30], // a developer of 50
        [3, 10], // 61's guest through the share with 61
        [3, 30], // 60's maintainer through the share with 60 (developer)
        [6, 10], // a project member
        [7, 20], // 62's maintainer through 50's share with 62
      ]);
    }));
});
