import { Forbidden, NotFound, type Actor } from '@app/platform';
import type { EntityManager } from 'typeorm';
import {
  actor,
  asDataSource,
  AT,
  groupCreated,
  groupMemberAdded,
  openProjectionDb,
  recorded,
  userCreated,
  type ProjectionDb,
} from '../../../../test/support/projection-db';
import type { GroupEvent } from '../domain/group';
import { NamespaceAccess, NamespaceTopLevelPaths } from './namespace-access';

const PAST = '2000-01-01';

const ANONYMOUS = undefined;
const MEMBER = actor(1);
const SUBGROUP_MEMBER = actor(2);
const OUTSIDER = actor(3);
const EXTERNAL = actor(4, { external: true });
const ADMIN = actor(5, { isAdmin: true });
const EXPIRED = actor(6);

/**
 * Group 50 (public) holds private 51, which holds private 52; 53 is internal, 54 private, both
 * top-level. User 1 is a developer of 51, user 2 a guest of 52, user 6 was a maintainer of 54 until
 * long ago. User 3 belongs nowhere, user 4 is external, user 5 an administrator.
 */
const world = [
  ...[1, 2, 3, 5, 6].map((id) => userCreated(id)),
  userCreated(4, { external: true }),
  groupCreated(50),
  groupCreated(51, { parentId: 50, visibility: 'private' }),
  groupCreated(52, { parentId: 51, visibility: 'private' }),
  groupCreated(53, { visibility: 'internal' }),
  groupCreated(54, { visibility: 'private' }),
  groupMemberAdded(51, 1, 30),
  groupMemberAdded(52, 2, 10),
  groupMemberAdded(54, 6, 40, PAST),
];
const GROUPS = [50, 51, 52, 53, 54];

/** What `groupVisibleSql` lets each caller see. */
const GROUPS_SEEN: [string, Actor | undefined, number[]][] = [
  ['anonymous: public ones', ANONYMOUS, [50]],
  ['a user of no group: public and internal ones', OUTSIDER, [50, 53]],
  ['an external user: public ones', EXTERNAL, [50]],
  ['a member: the group, its descendants and ancestors', MEMBER, [50, 51, 52, 53]],
  ['a member of a subgroup: its ancestors too', SUBGROUP_MEMBER, [50, 51, 52, 53]],
  ['a member whose membership expired: nothing more', EXPIRED, [50, 53]],
  ['an administrator: all', ADMIN, [50, 51, 52, 53, 54]],
];

describe('NamespaceAccess', () => {
  let pg: ProjectionDb;
  beforeAll(async () => {
    pg = await openProjectionDb();
  });
  afterAll(() => pg.drop());

  const inWorld = (test: (access: NamespaceAccess, db: EntityManager) => Promise<void>) =>
    pg.rollingBack(async (db) => {
      await pg.given(db, ...world);
      await test(new NamespaceAccess(asDataSource(db)), db);
    });

  it.each(GROUPS_SEEN)('finds only what %s sees, and 404s the rest', (_, who, visible) =>
    inWorld(async (access) => {
      const found: number[] = [];
      for (const id of GROUPS) {
        try {
          found.push((await access.visibleGroup(id, who)).id);
        } catch (err) {
          expect(err).toBeInstanceOf(NotFound);
          expect((err as Error).message).toBe('404 Group Not Found');
        }
      }
      expect(found).toEqual(visible);
    }),
  );

  it('finds a group by full path, case-insensitively, with the caller’s inherited level', () =>
    inWorld(async (access) => {
      expect(await access.visibleGroup('GROUP50/group51/Group52', MEMBER)).toMatchObject({
        id: 52,
        kind: 'group',
        name: 'Group 52',
        path: 'group52',
        parentId: 51,
        fullPath: 'group50/group51/group52',
        fullName: 'Group 50 / Group 51 / Group 52',
        ownerId: null,
        visibility: 'private',
        lfsEnabled: true,
        requestAccessEnabled: true,
        createdAt: new Date(AT),
        accessLevel: 30,
      });
      const level = async (id: number | string, who: Actor) => (await access.visibleGroup(id, who)).accessLevel;
      expect(await level(51, MEMBER)).toBe(30);
      expect(await level(50, MEMBER)).toBe(0); // an ancestor is seen, not inherited upwards
      expect(await level(51, SUBGROUP_MEMBER)).toBe(0);
      expect(await level('group50/group51/group52', SUBGROUP_MEMBER)).toBe(10);
      expect(await level(54, ADMIN)).toBe(0);
      // A personal namespace is no group.
      await expect(access.visibleGroup(101, ADMIN)).rejects.toThrow(NotFound);
      await expect(access.visibleGroup('user1', ADMIN)).rejects.toThrow(NotFound);
      await expect(access.visibleGroup('group51', ADMIN)).rejects.toThrow(NotFound); // not top-level
    }));

  it('requires a level: 404 when invisible, 403 when below it, administrators pass', () =>
    inWorld(async (access) => {
      expect((await access.requireGroup(52, MEMBER, 30)).id).toBe(52);
      await expect(access.requireGroup(52, MEMBER, 40)).rejects.toThrow(Forbidden);
      await expect(access.requireGroup(51, SUBGROUP_MEMBER, 10)).rejects.toThrow(Forbidden);
      await expect(access.requireGroup(50, ANONYMOUS, 10)).rejects.toThrow(Forbidden);
      await expect(access.requireGroup(54, EXPIRED, 10)).rejects.toThrow(NotFound);
      expect((await access.requireGroup(54, ADMIN, 50)).id).toBe(54);
    }));

  it('finds any namespace, personal or group, without visibility rules', () =>
    inWorld(async (access) => {
      expect(await access.findNamespace('User1')).toMatchObject({ id: 101, kind: 'user', ownerId: 1 });
      expect(await access.findNamespace(54)).toMatchObject({ id: 54, kind: 'group', visibility: 'private' });
      expect(await access.findNamespace('group50/group51')).toMatchObject({ id: 51 });
      expect(await access.findNamespace('nope')).toBeUndefined();
      expect(await access.findNamespace(999)).toBeUndefined();
    }));

  it("reads a namespace's ancestors and a user's personal namespace", () =>
    inWorld(async (access) => {
      expect((await access.ancestorIds(52)).sort()).toEqual([50, 51, 52]);
      expect(await access.ancestorIds(50)).toEqual([50]);
      expect(await access.personalNamespace(2)).toMatchObject({ id: 102, kind: 'user', fullPath: 'user2' });
      await expect(access.personalNamespace(99)).rejects.toThrow(NotFound);
    }));

  it('counts the top-level paths taken by a base and its numbered variants', () =>
    inWorld(async (_, db) => {
      const paths = new NamespaceTopLevelPaths();
      await pg.given(db, userCreated(7, { username: 'group' }));
      // user1..user6 (personal namespaces); `group` and group50, group53, group54, not the subgroups.
      expect(await paths.countNumbered(db, 'user')).toBe(6);
      expect(await paths.countNumbered(db, 'group')).toBe(4);
      expect(await paths.countNumbered(db, 'GROUP5')).toBe(0);
      expect(await paths.countNumbered(db, 'nobody')).toBe(0);
    }));

  /** Group 54 shared with 53 (developer); 53 has user 3 as maintainer and user 7 as guest; 55 sits under 54. */
  const shares = (expiresAt: string | null = null) => [
    userCreated(7),
    groupCreated(55, { parentId: 54, visibility: 'private' }),
    groupMemberAdded(53, 3, 40),
    groupMemberAdded(53, 7, 10),
    recorded<GroupEvent>(
      {
        type: 'GroupSharedWithGroup',
        data: { groupId: 54, sharedWithGroupId: 53, groupAccess: 30, expiresAt, at: AT },
      },
      { streamId: 'group-54' },
    ),
  ];

  it('gives the members of a group shared with the lower of their level and the share’s, on its subgroups too', () =>
    inWorld(async (access, db) => {
      await pg.given(db, ...shares());
      const level = async (id: number, who: Actor) => (await access.visibleGroup(id, who)).accessLevel;
      expect(await level(54, OUTSIDER)).toBe(30);
      expect(await level(55, OUTSIDER)).toBe(30);
      expect(await level(54, actor(7))).toBe(10);
      expect(await level(55, actor(7))).toBe(10);
      await expect(access.requireGroup(54, OUTSIDER, 40)).rejects.toThrow(Forbidden);
      // The invited group gains nothing from the group it is invited to.
      expect(await level(53, OUTSIDER)).toBe(40);
    }));

  it('ignores an expired share', () =>
    inWorld(async (access, db) => {
      await pg.given(db, ...shares(PAST));
      await expect(access.visibleGroup(54, OUTSIDER)).rejects.toThrow(NotFound);
      await expect(access.visibleGroup(55, actor(7))).rejects.toThrow(NotFound);
    }));
});
