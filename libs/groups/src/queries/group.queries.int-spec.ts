import { NotFound, type Actor } from '@app/platform';
import type { EntityManager } from 'typeorm';
import {
  actor,
  asDataSource,
  groupCreated,
  groupMemberAdded,
  openProjectionDb,
  pageOf,
  recorded,
  userCreated,
  type ProjectionDb,
} from '../../../../test/support/projection-db';
import type { GroupEvent } from '../domain/group';
import { groupMembershipsSql } from './group-sql';
import { GroupQueries, type GroupListFilters } from './group.queries';

const LATER = '2026-02-01T00:00:00.000Z';
const PAST = '2000-01-01';
const ALL = pageOf(1, 100);
const BY_NAME: GroupListFilters = { orderBy: 'name', sort: 'asc' };

const ANONYMOUS = undefined;
const MEMBER = actor(1);
const SUBGROUP_MEMBER = actor(2);
const OUTSIDER = actor(3);
const EXTERNAL = actor(4, { external: true });
const ADMIN = actor(5, { isAdmin: true });
const OWNER = actor(6);

/**
 * Group 50 (public) holds private 51, which holds private 52; 53 is internal, 54 and 55 private,
 * all three top-level. User 1 is a developer of 51, user 2 a guest of 52; user 6 owns 54 and owned
 * 55 until long ago. User 3 belongs nowhere, user 4 is external, user 5 an administrator.
 */
const world = [
  ...[1, 2, 3, 5, 6].map((id) => userCreated(id)),
  userCreated(4, { external: true }),
  groupCreated(50, { name: 'Alpha', path: 'alpha' }),
  groupCreated(51, { parentId: 50, visibility: 'private', name: 'beta', path: 'Beta' }),
  groupCreated(52, { parentId: 51, visibility: 'private', name: 'Gamma', path: 'gamma' }),
  groupCreated(53, { visibility: 'internal', name: 'delta', path: 'delta' }),
  groupCreated(54, { visibility: 'private', name: 'Epsilon', path: 'zeta' }),
  groupCreated(55, { visibility: 'private', name: 'eta_100%', path: 'eta' }),
  groupMemberAdded(51, 1, 30),
  groupMemberAdded(52, 2, 10),
  groupMemberAdded(54, 6, 50),
  groupMemberAdded(55, 6, 50, PAST),
];

describe('GroupQueries', () => {
  let pg: ProjectionDb;
  beforeAll(async () => {
    pg = await openProjectionDb();
  });
  afterAll(() => pg.drop());

  const inWorld = (test: (q: GroupQueries, db: EntityManager) => Promise<void>) =>
    pg.rollingBack(async (db) => {
      await pg.given(db, ...world);
      await test(new GroupQueries(asDataSource(db)), db);
    });
  const listed = async (q: GroupQueries, who: Actor | undefined, f: Partial<GroupListFilters> = {}) => {
    const found = await q.list(who, { ...BY_NAME, ...f }, ALL);
    // The total counts exactly what the pages hold: visibility and filters are in the count's `where` too.
    expect(found.total).toBe(found.rows.length);
    return found.rows.map((g) => g.id);
  };

  it.each([
    ['anonymous: public ones', ANONYMOUS, [50]],
    ['a user of no group: none', OUTSIDER, []],
    ['a member: the group, its descendants and ancestors', MEMBER, [50, 51, 52]], // by name: Alpha, beta, Gamma
    ['a member of a subgroup: its ancestors too', SUBGROUP_MEMBER, [50, 51, 52]],
    ['an owner: not an expired membership', OWNER, [54]],
    ['an administrator: all', ADMIN, [50, 51, 53, 54, 55, 52]],
  ] as [string, Actor | undefined, number[]][])('lists and counts for %s', (_, who, groups) =>
    inWorld(async (q) => {
      expect(await listed(q, who)).toEqual(groups);
    }),
  );

  it.each([
    ['anonymous: public ones', ANONYMOUS, [50]],
    ['a user of no group: public and internal ones', OUTSIDER, [50, 53]],
    ['an external user: public ones', EXTERNAL, [50]],
    ['a member: also its groups', MEMBER, [50, 51, 53, 52]],
    ['an owner: also the group owned', OWNER, [50, 53, 54]],
  ] as [string, Actor | undefined, number[]][])('lists all available groups for %s', (_, who, groups) =>
    inWorld(async (q) => {
      expect(await listed(q, who, { allAvailable: true })).toEqual(groups);
    }),
  );

  it('orders by name or path, case-insensitively, either way', () =>
    inWorld(async (q) => {
      expect(await listed(q, ADMIN)).toEqual([50, 51, 53, 54, 55, 52]);
      expect(await listed(q, ADMIN, { sort: 'desc' })).toEqual([52, 55, 54, 53, 51, 50]);
      expect(await listed(q, ADMIN, { orderBy: 'path' })).toEqual([50, 51, 53, 55, 52, 54]);
    }));

  it('pages with the total of every page', () =>
    inWorld(async (q) => {
      const page = (n: number) => q.list(ADMIN, BY_NAME, pageOf(n, 4));
      const first = await page(1);
      const second = await page(2);
      expect([first.total, first.rows.map((g) => g.id)]).toEqual([6, [50, 51, 53, 54]]);
      expect([second.total, second.rows.map((g) => g.id)]).toEqual([6, [55, 52]]);
      expect((await page(3)).rows).toEqual([]);
    }));

  it('keeps the subgroups of a parent, skips groups, and searches name and path literally', () =>
    inWorld(async (q) => {
      expect(await listed(q, MEMBER, { parentId: 50 })).toEqual([51]);
      expect(await listed(q, ANONYMOUS, { parentId: 50 })).toEqual([]);
      expect(await listed(q, ADMIN, { parentId: 51 })).toEqual([52]);
      expect(await listed(q, MEMBER, { skipGroups: [51, 99] })).toEqual([50, 52]);
      expect(await listed(q, ADMIN, { search: 'ETA' })).toEqual([51, 54, 55]); // beta, zeta (Epsilon), eta_100%
      expect(await listed(q, ADMIN, { search: '%' })).toEqual([55]);
      expect(await listed(q, ADMIN, { search: '_' })).toEqual([55]);
      expect(await listed(q, OUTSIDER, { search: 'eta', allAvailable: true })).toEqual([]);
    }));

  it('keeps the groups the caller owns directly, whatever the rest of the filters', () =>
    inWorld(async (q, db) => {
      await pg.given(db, groupMemberAdded(53, 1, 50));
      expect(await listed(q, OWNER, { owned: true })).toEqual([54]);
      expect(await listed(q, MEMBER, { owned: true })).toEqual([53]); // a developer of 51 owns nothing there
      expect(await listed(q, SUBGROUP_MEMBER, { owned: true })).toEqual([]);
      expect(await listed(q, ADMIN, { owned: true })).toEqual([]);
    }));

  it('filters by custom attributes, and reads them', () =>
    inWorld(async (q, db) => {
      const set = (groupId: number, key: string, value: string) =>
        recorded<GroupEvent>({ type: 'GroupCustomAttributeSet', data: { groupId, key, value, at: LATER } });
      await pg.given(db, set(50, 'tier', 'gold'), set(54, 'tier', 'gold'), set(54, 'team', 'a'));
      expect(await listed(q, ADMIN, { customAttributes: { tier: 'gold' } })).toEqual([50, 54]);
      expect(await listed(q, ADMIN, { customAttributes: { tier: 'gold', team: 'a' } })).toEqual([54]);
      expect(await listed(q, ANONYMOUS, { customAttributes: { tier: 'gold' } })).toEqual([50]);
      expect(await q.customAttributes(54)).toEqual([
        { key: 'team', value: 'a' },
        { key: 'tier', value: 'gold' },
      ]);
      expect(await q.customAttribute(54, 'team')).toEqual({ key: 'team', value: 'a' });
      await expect(q.customAttribute(54, 'nope')).rejects.toThrow(NotFound);
    }));

  it('lists direct members by join order with their user, searched and paged', () =>
    inWorld(async (q, db) => {
      await pg.given(
        db,
        recorded<GroupEvent>({
          type: 'GroupMemberAdded',
          data: { groupId: 51, userId: 3, accessLevel: 40, expiresAt: '2999-12-31', at: LATER },
        }),
        groupMemberAdded(51, 2, 20),
      );
      const members = await q.members('namespace', 51, undefined, ALL);
      expect(members.total).toBe(3);
      expect(members.rows).toEqual([
        {
          id: 1,
          username: 'user1',
          name: 'User 1',
          state: 'active',
          avatar: null,
          email: 'user1@example.com',
          access_level: 30,
          expires_at: null,
        },
        expect.objectContaining({ id: 2, access_level: 20 }),
        expect.objectContaining({ id: 3, access_level: 40, expires_at: '2999-12-31' }),
      ]);
      const found = await q.members('namespace', 51, 'USER3', ALL);
      expect([found.total, found.rows.map((m) => m.id)]).toEqual([1, [3]]);
      const page = await q.members('namespace', 51, undefined, pageOf(2, 2));
      expect([page.total, page.rows.map((m) => m.id)]).toEqual([3, [3]]);
      expect((await q.members('namespace', 51, '%', ALL)).total).toBe(0);
      // Direct members only: 52's are not 51's, nor a project's of the same id.
      expect((await q.members('namespace', 52, undefined, ALL)).rows.map((m) => m.id)).toEqual([2]);
      expect((await q.members('project', 51, undefined, ALL)).total).toBe(0);
    }));

  it('finds one membership, 404 without it, and tells membership even when expired', () =>
    inWorld(async (q) => {
      expect(await q.member('namespace', 52, 2)).toMatchObject({ id: 2, access_level: 10 });
      await expect(q.member('namespace', 50, 2)).rejects.toThrow(NotFound);
      await expect(q.member('project', 52, 2)).rejects.toThrow(NotFound);
      expect(await q.member('namespace', 55, 6)).toMatchObject({ access_level: 50, expires_at: PAST });
      expect(await q.hasMember('namespace', 55, 6)).toBe(true);
      expect(await q.hasMember('namespace', 52, 1)).toBe(false); // inherited is not direct
      expect(await q.hasMember('project', 52, 2)).toBe(false);
    }));

  it("reads a group's visibility and its direct subgroups'", () =>
    inWorld(async (q, db) => {
      await pg.given(db, groupCreated(56, { parentId: 50, visibility: 'internal' }));
      expect(await q.visibility(53)).toBe('internal');
      expect(await q.visibility(99)).toBeUndefined();
      expect((await q.subgroupVisibilities(50)).sort()).toEqual(['internal', 'private']);
      expect(await q.subgroupVisibilities(52)).toEqual([]);
    }));

  /** 51 (under 50) shared with 53 at reporter; 53 has user 3 as maintainer. */
  const shared = (expiresAt: string | null = null) =>
    recorded<GroupEvent>(
      {
        type: 'GroupSharedWithGroup',
        data: { groupId: 51, sharedWithGroupId: 53, groupAccess: 20, expiresAt, at: LATER },
      },
      { streamId: 'group-51' },
    );

  it('lists every way into a group once per user at the highest level, shares capped (members/all)', () =>
    inWorld(async (q, db) => {
      await pg.given(db, groupMemberAdded(53, 3, 40), groupMemberAdded(50, 1, 10), shared());
      const all = async (groupId: number, userIds?: number[]) =>
        (await q.allMembers(groupMembershipsSql('$1::int'), groupId, undefined, ALL, userIds)).rows.map((m) => [
          m.id,
          m.access_level,
        ]);
      expect(await all(52)).toEqual([
        [1, 30],
        [2, 10],
        [3, 20],
      ]);
      expect(await all(52, [3])).toEqual([[3, 20]]);
      expect(await all(50)).toEqual([[1, 10]]);
      expect((await q.allMember(groupMembershipsSql('$1::int'), 52, 3)).access_level).toBe(20);
      await expect(q.allMember(groupMembershipsSql('$1::int'), 50, 3)).rejects.toThrow(NotFound);
    }));

  it('answers the links of a group as shared_with_groups, only the invited groups the caller sees', () =>
    inWorld(async (q, db) => {
      await pg.given(db, shared('2030-01-31'));
      const link = {
        group_id: 53,
        group_name: 'delta',
        group_full_path: 'delta',
        group_access_level: 20,
        expires_at: '2030-01-31',
      };
      expect(await q.sharedWithGroups(51, MEMBER)).toEqual([link]);
      expect(await q.sharedWithGroups(51, ADMIN)).toEqual([link]);
      // 53 is internal: not for anonymous or external callers.
      expect(await q.sharedWithGroups(51, EXTERNAL)).toEqual([]);
      expect(await q.isSharedWith(51, 53)).toBe(true);
      expect(await q.isSharedWith(53, 51)).toBe(false);
    }));

  it('lists descendants at any depth, and a project’s groups with its shares', () =>
    inWorld(async (q) => {
      const descendants = await q.list(ADMIN, { ...BY_NAME, ancestorId: 50 }, ALL);
      expect(descendants.rows.map((g) => g.id)).toEqual([51, 52]);
      const groups = await q.projectGroups(52, [53, 55], {}, MEMBER, ALL);
      expect(groups.rows.map((g) => g.id)).toEqual([50, 51, 52, 53, 55]);
      const visible = await q.projectGroups(52, [53, 55], { sharedVisibleOnly: true, skipGroups: [51] }, MEMBER, ALL);
      expect(visible.rows.map((g) => g.id)).toEqual([50, 52, 53]);
      expect((await q.projectGroups(101, [], {}, MEMBER, ALL)).total).toBe(0);
      expect((await q.subtree(51)).map((g) => g.id).sort()).toEqual([51, 52]);
      expect(await q.pathTaken(50, 'BETA', 99)).toBe(true);
      expect(await q.pathTaken(50, 'beta', 51)).toBe(false);
      expect(await q.pathTaken(null, 'user1', 99)).toBe(true);
    }));
});
