import {
  Forbidden,
  NotFound,
  PreparedStatements,
  rows,
  type Actor,
  type EventStore,
  type LodeConfig,
} from '@app/platform';
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
import { FEATURE_DEFAULTS, type ProjectEvent } from './project';
import { allProjectIds, projectExistsSql } from './project-sql';
import { currentAvatar, ProjectQueries, type ProjectListFilters } from './project.queries';

const LATER = '2026-02-01T00:00:00.000Z';
const PAST = '2000-01-01';
const ALL = pageOf(1, 100);
const BY_ID: ProjectListFilters = { orderBy: 'id', sort: 'asc' };

const event = (e: ProjectEvent) => recorded(e);
const shared = (projectId: number, groupId: number, groupAccess: number, expiresAt: string | null = null) =>
  event({
    type: 'ProjectSharedWithGroup',
    data: { projectId, linkId: projectId * 100 + groupId, groupId, groupAccess, expiresAt, at: AT },
  });

/** The callers of the world below. */
const ANONYMOUS = undefined;
const OWNER = actor(1);
const DEVELOPER = actor(2);
const OUTSIDER = actor(3);
const EXTERNAL = actor(4, { external: true });
const ADMIN = actor(5, { isAdmin: true });
const SHARED = actor(6);
const MEMBER = actor(7);
const EXPIRED = actor(8);

/**
 * User 1 owns personal projects 10 (private), 11 (internal), 12 (public) and 13 (private, user 7 a
 * reporter, user 8 an expired one). Group 50 (public) has private subgroup 51 with private project 20,
 * and private projects 21 (shared with group 60 as reporter) and 22 (its share with 60 expired).
 * User 2 is a developer of group 50, user 8's membership of it expired; user 6 is a maintainer of
 * group 60. User 3 belongs nowhere, user 4 is external, user 5 an administrator.
 */
const world = [
  ...[1, 2, 3, 5, 6, 7, 8].map((id) => userCreated(id, id === 5 ? { isAdmin: true } : {})),
  userCreated(4, { external: true }),
  groupCreated(50),
  groupCreated(51, { parentId: 50, visibility: 'private' }),
  groupCreated(60),
  groupMemberAdded(50, 2, 30),
  groupMemberAdded(50, 8, 30, PAST),
  groupMemberAdded(60, 6, 40),
  projectCreated(10, 101, { name: 'Alpha' }),
  projectCreated(11, 101, { visibility: 'internal' }),
  projectCreated(12, 101, { visibility: 'public', description: 'the needle' }),
  projectCreated(13, 101),
  projectMemberAdded(13, 7, 20),
  projectMemberAdded(13, 8, 20, PAST),
  projectCreated(20, 51),
  projectCreated(21, 50),
  projectCreated(22, 50),
  shared(21, 60, 20),
  shared(22, 60, 30, PAST),
];

/** What each caller may see of the world: the rule of `projectVisibleSql` and `projectsVisibleSql`. */
const SEES: [string, Actor | undefined, number[]][] = [
  ['anonymous: public only', ANONYMOUS, [12]],
  ['a user of no group or project: public and internal', OUTSIDER, [11, 12]],
  ['an external user: public only', EXTERNAL, [12]],
  ['the owner of a personal namespace: its projects', OWNER, [10, 11, 12, 13]],
  ['a group member: the group’s and its subgroups’ projects', DEVELOPER, [11, 12, 20, 21, 22]],
  ['a member of a group shared with: the shares that have not expired', SHARED, [11, 12, 21]],
  ['a project member', MEMBER, [11, 12, 13]],
  ['a member whose memberships expired: nothing more', EXPIRED, [11, 12]],
  ['an administrator: everything', ADMIN, [10, 11, 12, 13, 20, 21, 22]],
];
const EVERY_PROJECT = [10, 11, 12, 13, 20, 21, 22];

describe('ProjectQueries', () => {
  let pg: ProjectionDb;
  beforeAll(async () => {
    pg = await openProjectionDb();
  });
  afterAll(() => pg.drop());

  const store = { dataValues: () => Promise.resolve([10, 98, 99]) } as unknown as EventStore;
  const inWorld = (test: (q: ProjectQueries, db: EntityManager) => Promise<void>) =>
    pg.rollingBack(async (db) => {
      await pg.given(db, ...world);
      // Inside the test's transaction: the prepared reads go through it, as any read in a transaction does.
      const prepared = new PreparedStatements(asDataSource(db), {
        embeddedDatabase: false,
        dbPreparedStatements: true,
      } as LodeConfig);
      await test(new ProjectQueries(asDataSource(db), store, prepared), db);
    });
  const ids = (found: { rows: { id: number }[] }) => found.rows.map((p) => p.id);
  const listed = async (q: ProjectQueries, who: Actor | undefined, f: Partial<ProjectListFilters> = {}) => {
    const found = await q.list(who, { ...BY_ID, ...f }, ALL);
    // The total counts exactly what the pages hold: visibility and filters are in the count's `where` too.
    expect(found.total).toBe(found.rows.length);
    return ids(found);
  };

  it.each(SEES)('lists and counts what %s sees', (_, who, visible) =>
    inWorld(async (q) => {
      expect(await listed(q, who)).toEqual(visible);
    }),
  );

  it.each(SEES)('finds by id only what %s sees, and 404s the rest', (_, who, visible) =>
    inWorld(async (q) => {
      const found: number[] = [];
      for (const id of EVERY_PROJECT) {
        try {
          found.push((await q.getVisible(id, who)).id);
        } catch (err) {
          expect(err).toBeInstanceOf(NotFound);
          expect((err as Error).message).toBe('404 Project Not Found');
        }
      }
      expect(found).toEqual(visible);
    }),
  );

  it("gives a caller's direct levels and the effective one, with the project's namespace and shares", () =>
    inWorld(async (q) => {
      const levels = async (id: number, who: Actor) => {
        const p = await q.getVisible(id, who);
        return [p.project_access, p.group_access, p.access];
      };
      expect(await levels(10, OWNER)).toEqual([null, null, 50]);
      expect(await levels(21, DEVELOPER)).toEqual([null, 30, 30]);
      expect(await levels(20, DEVELOPER)).toEqual([null, null, 30]); // inherited, not direct
      expect(await levels(21, SHARED)).toEqual([null, null, 20]); // the lesser of the share and the membership
      expect(await levels(13, MEMBER)).toEqual([20, null, 20]);
      expect(await levels(12, OUTSIDER)).toEqual([null, null, 0]);
      expect(await levels(13, ADMIN)).toEqual([null, null, 0]);
      expect(await q.getVisible(20, ADMIN)).toMatchObject({
        id: 20,
        ns_name: 'Group 51',
        ns_path: 'group51',
        ns_kind: 'group',
        ns_full_path: 'group50/group51',
        ns_full_name: 'Group 50 / Group 51',
        ns_parent_id: 50,
        ns_visibility: 'private',
        owner_id: null,
        owner_name: null,
        shared_with: [],
      });
      expect(await q.getVisible(12, OUTSIDER)).toMatchObject({
        ns_kind: 'user',
        ns_full_path: 'user1',
        owner_id: 1,
        owner_name: 'User 1',
        owner_created_at: new Date(AT),
      });
      expect((await q.getVisible(21, SHARED)).shared_with).toEqual([
        { project_id: 21, group_id: 60, group_name: 'Group 60', group_access_level: 20 },
      ]);
      // Anonymous callers get the lean columns: no levels, no shares.
      expect(await q.getVisible(12, ANONYMOUS)).toMatchObject({ project_access: null, access: 0, shared_with: null });
    }));

  it('finds by full path, case-insensitively, with the same visibility', () =>
    inWorld(async (q) => {
      expect((await q.getVisible('USER1/Project12', ANONYMOUS)).id).toBe(12);
      expect((await q.getVisible('group50/group51/project20', DEVELOPER)).id).toBe(20);
      await expect(q.getVisible('group50/group51/project20', OUTSIDER)).rejects.toThrow(NotFound);
      await expect(q.getVisible('user1/project10', OUTSIDER)).rejects.toThrow(NotFound);
      await expect(q.getVisible('group50/project99', ADMIN)).rejects.toThrow(NotFound);
      await expect(q.getVisible('project12', ADMIN)).rejects.toThrow(NotFound); // no namespace
      await expect(q.getVisible('/project12', ADMIN)).rejects.toThrow(NotFound);
      await expect(q.getVisible(99, ADMIN)).rejects.toThrow(NotFound);
    }));

  it('requires a level: 404 when invisible, 403 when below it, administrators pass', () =>
    inWorld(async (q) => {
      expect((await q.require(21, SHARED, 20)).id).toBe(21);
      await expect(q.require(21, SHARED, 30)).rejects.toThrow(Forbidden);
      await expect(q.require(12, OUTSIDER, 10)).rejects.toThrow(Forbidden);
      await expect(q.require(10, OUTSIDER, 10)).rejects.toThrow(NotFound);
      await expect(q.require(12, ANONYMOUS, 10)).rejects.toThrow(Forbidden);
      expect((await q.require(22, ADMIN, 50)).id).toBe(22);
      expect((await q.require('user1/project10', OWNER, 50)).id).toBe(10);
    }));

  it('pages with the total of every page, in the order asked', () =>
    inWorld(async (q) => {
      const page = (n: number, who: Actor, f: Partial<ProjectListFilters> = {}) =>
        q.list(who, { ...BY_ID, ...f }, pageOf(n, 2));
      const first = await page(1, DEVELOPER);
      expect([first.total, ids(first)]).toEqual([5, [11, 12]]);
      expect(ids(await page(2, DEVELOPER))).toEqual([20, 21]);
      const last = await page(3, DEVELOPER);
      expect([last.total, ids(last)]).toEqual([5, [22]]);
      expect(ids(await page(1, ADMIN, { sort: 'desc' }))).toEqual([22, 21]);
      expect(ids(await page(4, ADMIN))).toEqual([22]);
      expect((await page(5, ADMIN)).rows).toEqual([]);
      expect((await page(5, ADMIN)).total).toBe(7);
    }));

  it('orders by name and path case-insensitively, and by the times with ties by id', () =>
    inWorld(async (q, db) => {
      await pg.given(
        db,
        projectCreated(30, 102, { name: 'bravo', path: 'Zed', visibility: 'public' }),
        projectCreated(31, 102, { name: 'Charlie', path: 'yak', visibility: 'public', at: LATER }),
        projectCreated(32, 102, { name: 'alpha', path: 'Xylo', visibility: 'public' }),
      );
      const order = (f: Partial<ProjectListFilters>) => listed(q, OUTSIDER, { namespaceId: 102, ...f });
      expect(await order({ orderBy: 'name' })).toEqual([32, 30, 31]);
      expect(await order({ orderBy: 'name', sort: 'desc' })).toEqual([31, 30, 32]);
      expect(await order({ orderBy: 'path' })).toEqual([32, 31, 30]);
      expect(await order({ orderBy: 'created_at', sort: 'desc' })).toEqual([31, 32, 30]);
    }));

  it('filters by namespace, personal owner, visibility, archived state, fork source and switches', () =>
    inWorld(async (q, db) => {
      await pg.given(
        db,
        event({ type: 'ProjectArchived', data: { projectId: 11, at: LATER } }),
        projectCreated(14, 102, {
          visibility: 'public',
          features: { ...FEATURE_DEFAULTS, issuesEnabled: false, mergeRequestsEnabled: false },
        }),
        event({
          type: 'ProjectForked',
          data: { ...projectCreated(15, 102, { visibility: 'public' }).data, forkedFromId: 12 },
        }),
        event({
          type: 'ProjectForked',
          data: { ...projectCreated(16, 102).data, forkedFromId: 12 },
        }),
      );
      expect(await listed(q, ADMIN, { namespaceId: 50 })).toEqual([21, 22]);
      expect(await listed(q, DEVELOPER, { namespaceId: 51 })).toEqual([20]);
      expect(await listed(q, OUTSIDER, { namespaceId: 51 })).toEqual([]);
      expect(await listed(q, ANONYMOUS, { ownerId: 1 })).toEqual([12]);
      expect(await listed(q, ADMIN, { ownerId: 1 })).toEqual([10, 11, 12, 13]);
      expect(await listed(q, OUTSIDER, { visibility: 'internal' })).toEqual([11]);
      expect(await listed(q, ANONYMOUS, { visibility: 'private' })).toEqual([]);
      expect(await listed(q, OWNER, { archived: true })).toEqual([11]);
      expect(await listed(q, OWNER, { archived: false })).toEqual([10, 12, 13, 14, 15]);
      // The private fork is user 2's alone.
      expect(await listed(q, OUTSIDER, { forkedFromId: 12 })).toEqual([15]);
      expect(await listed(q, DEVELOPER, { forkedFromId: 12 })).toEqual([15, 16]);
      expect(await listed(q, ANONYMOUS, { withIssuesEnabled: true })).toEqual([12, 15]);
      expect(await listed(q, ANONYMOUS, { withMergeRequestsEnabled: true })).toEqual([12, 15]);
    }));

  it("searches name, path, description and the namespace's name, taking % and _ literally", () =>
    inWorld(async (q, db) => {
      await pg.given(db, projectCreated(14, 102, { name: '100% done', path: 'a_b', visibility: 'public' }));
      expect(await listed(q, ADMIN, { search: 'ALPH' })).toEqual([10]);
      expect(await listed(q, ADMIN, { search: 'project2' })).toEqual([20, 21, 22]);
      expect(await listed(q, ANONYMOUS, { search: 'needle' })).toEqual([12]);
      expect(await listed(q, ADMIN, { search: 'Group 50' })).toEqual([21, 22]);
      expect(await listed(q, DEVELOPER, { search: 'Group 5' })).toEqual([20, 21, 22]);
      expect(await listed(q, OUTSIDER, { search: 'Group 5' })).toEqual([]);
      expect(await listed(q, ADMIN, { search: '%' })).toEqual([14]);
      expect(await listed(q, ADMIN, { search: '_' })).toEqual([14]);
    }));

  it('keeps owned, membership and starred projects, each still visible', () =>
    inWorld(async (q, db) => {
      await pg.given(
        db,
        groupMemberAdded(51, 3, 50),
        recorded({ type: 'ProjectStarred' as const, data: { projectId: 12, userId: 3, at: LATER } }),
        recorded({ type: 'ProjectStarred' as const, data: { projectId: 22, userId: 3, at: LATER } }),
      );
      expect(await listed(q, OWNER, { owned: true })).toEqual([10, 11, 12, 13]);
      expect(await listed(q, OUTSIDER, { owned: true })).toEqual([20]); // owner of subgroup 51 directly
      expect(await listed(q, DEVELOPER, { owned: true })).toEqual([]); // a developer owns nothing
      expect(await listed(q, DEVELOPER, { membership: true })).toEqual([20, 21, 22]);
      expect(await listed(q, SHARED, { membership: true })).toEqual([21]);
      expect(await listed(q, EXPIRED, { membership: true })).toEqual([]);
      expect(await listed(q, OWNER, { membership: true })).toEqual([10, 11, 12, 13]);
      // A star on a project the caller cannot see (no more) does not show it.
      expect(await listed(q, OUTSIDER, { starred: true })).toEqual([12]);
      expect(await listed(q, OWNER, { starred: true })).toEqual([]);
    }));

  it('filters by custom attributes, every one given', () =>
    inWorld(async (q, db) => {
      const set = (projectId: number, key: string, value: string) =>
        event({ type: 'ProjectCustomAttributeSet', data: { projectId, key, value, at: AT } });
      await pg.given(db, set(10, 'tier', 'gold'), set(10, 'team', 'a'), set(11, 'tier', 'gold'), set(12, 'tier', 'x'));
      expect(await listed(q, ADMIN, { customAttributes: { tier: 'gold' } })).toEqual([10, 11]);
      expect(await listed(q, ADMIN, { customAttributes: { tier: 'gold', team: 'a' } })).toEqual([10]);
      expect(await listed(q, OUTSIDER, { customAttributes: { tier: 'gold' } })).toEqual([11]);
      expect(await q.customAttributes(10)).toEqual([
        { key: 'team', value: 'a' },
        { key: 'tier', value: 'gold' },
      ]);
      expect(await q.customAttribute(10, 'tier')).toEqual({ key: 'tier', value: 'gold' });
      await expect(q.customAttribute(10, 'nope')).rejects.toThrow(NotFound);
    }));

  it('skips the count and the levels when told', () =>
    inWorld(async (q) => {
      const found = await q.list(OWNER, BY_ID, ALL, { count: false, lean: true });
      expect(found.total).toBe(-1);
      expect(found.rows.map((p) => [p.id, p.access, p.project_access, p.shared_with])).toEqual([
        [10, 0, null, null],
        [11, 0, null, null],
        [12, 0, null, null],
        [13, 0, null, null],
      ]);
      expect((await q.list(OWNER, BY_ID, ALL)).rows.map((p) => p.access)).toEqual([50, 50, 50, 50]);
    }));

  it('reads the projects shared with a group that the caller sees', () =>
    inWorld(async (q) => {
      const sharedIds = async (who: Actor | undefined) => (await q.sharedWithGroup(60, who)).map((p) => p.id);
      expect(await sharedIds(SHARED)).toEqual([21]);
      expect(await sharedIds(ADMIN)).toEqual([21, 22]);
      expect(await sharedIds(OUTSIDER)).toEqual([]);
      expect(await sharedIds(ANONYMOUS)).toEqual([]);
    }));

  it("lists a project's users: members, the group's and its ancestors', the personal owner and the shares'", () =>
    inWorld(async (q) => {
      const users = async (projectId: number, search?: string) => {
        const found = await q.users(projectId, search, ALL);
        expect(found.total).toBe(found.rows.length);
        return found.rows.map((u) => u.username);
      };
      expect(await users(13)).toEqual(['user1', 'user7']); // not user 8, expired
      expect(await users(20)).toEqual(['user2']); // through group 50, not user 8
      expect(await users(21)).toEqual(['user2', 'user6']);
      expect(await users(22)).toEqual(['user2']); // the share expired
      expect(await users(13, 'USER7')).toEqual(['user7']);
      expect(await users(13, 'User 1')).toEqual(['user1']);
      expect(await users(13, '%')).toEqual([]);
      const page = await q.users(21, undefined, pageOf(2, 1));
      expect([page.total, page.rows.map((u) => u.id)]).toEqual([2, [6]]);
      expect(page.rows[0]).toMatchObject({ id: 6, name: 'User 6', username: 'user6', state: 'active' });
    }));

  it('finds the fork sources the caller may see', () =>
    inWorld(async (q, db) => {
      await pg.given(
        db,
        event({
          type: 'ProjectForked',
          data: { ...projectCreated(15, 103, { visibility: 'public' }).data, forkedFromId: 10 },
        }),
        event({
          type: 'ProjectForked',
          data: { ...projectCreated(16, 103, { visibility: 'public' }).data, forkedFromId: 12 },
        }),
      );
      const forks = (await q.list(OUTSIDER, { ...BY_ID, namespaceId: 103 }, ALL)).rows;
      expect([...(await q.forkSources(forks, OUTSIDER)).keys()]).toEqual([12]);
      expect([...(await q.forkSources(forks, OWNER)).keys()].sort()).toEqual([10, 12]);
      expect(await q.forkSources((await q.list(ADMIN, { ...BY_ID, namespaceId: 50 }, ALL)).rows, ADMIN)).toEqual(
        new Map(),
      );
    }));

  it('reads any project for the system, by id or full path, without levels', () =>
    inWorld(async (q) => {
      expect(await q.findForSystem(22)).toMatchObject({ id: 22, access: 0, ns_full_path: 'group50' });
      expect(await q.findForSystem(99)).toBeUndefined();
      expect((await q.findByPathForSystem('GROUP50/group51/PROJECT20'))?.id).toBe(20);
      expect(await q.findByPathForSystem('group50/project20')).toBeUndefined();
      expect(await q.findByPathForSystem('project20')).toBeUndefined();
      expect(await q.existing([10, 22, 99])).toEqual([{ id: 10 }, { id: 22 }]);
    }));

  it('sums, counts and lists projects for the operators and the limits', () =>
    inWorld(async (q, db) => {
      const housekeeping = (projectId: number, repositorySize: number) =>
        event({
          type: 'ProjectHousekeepingFinished',
          data: { projectId, at: LATER, statistics: { commitCount: 1, repositorySize } },
        });
      await pg.given(db, housekeeping(10, 1000), housekeeping(11, 24), housekeeping(21, 5));
      expect(await q.repositorySizes([101, 50, 51, 60])).toEqual(
        new Map([
          [101, 1024],
          [50, 5],
          [51, 0],
        ]),
      );
      // user1's namespace (101) holds four; another user's none; names and paths compare case-insensitively.
      expect(await q.countAndTaken(101, { name: 'ALPHA', path: 'other' })).toEqual({
        count: 4,
        name: true,
        path: false,
      });
      expect(await q.countAndTaken(101, { name: 'Beta', path: 'Project11' })).toEqual({
        count: 4,
        name: false,
        path: true,
      });
      expect(await q.countAndTaken(102, { name: 'Alpha', path: 'project10' })).toEqual({
        count: 0,
        name: false,
        path: false,
      });
      expect(await q.everyProject()).toEqual([
        { id: 10, fullPath: 'user1/project10', importStatus: 'none' },
        { id: 11, fullPath: 'user1/project11', importStatus: 'none' },
        { id: 12, fullPath: 'user1/project12', importStatus: 'none' },
        { id: 13, fullPath: 'user1/project13', importStatus: 'none' },
        { id: 20, fullPath: 'group50/group51/project20', importStatus: 'none' },
        { id: 21, fullPath: 'group50/project21', importStatus: 'none' },
        { id: 22, fullPath: 'group50/project22', importStatus: 'none' },
      ]);
      // Of the projects the event log created, those the read model lacks.
      expect(await q.goneProjectIds()).toEqual([98, 99]);
    }));

  it("tells a taken name or path in the namespace, case-insensitively, but for the project's own", () =>
    inWorld(async (q) => {
      expect(await q.takenNameOrPath(101, { name: 'ALPHA' })).toEqual({ name: true, path: false });
      expect(await q.takenNameOrPath(101, { path: 'Project11' })).toEqual({ name: false, path: true });
      expect(await q.takenNameOrPath(101, { name: 'Project 11', path: 'alpha' })).toEqual({ name: true, path: false });
      expect(await q.takenNameOrPath(101, { name: 'alpha', path: 'project10' }, 10)).toEqual({
        name: false,
        path: false,
      });
      expect(await q.takenNameOrPath(50, { name: 'alpha' })).toEqual({ name: false, path: false });
    }));

  it('reads the current avatar in the transaction', () =>
    inWorld(async (_, db) => {
      expect(await currentAvatar(db, 10)).toBeNull();
      expect(await currentAvatar(db, 99)).toBeUndefined();
      await pg.given(db, event({ type: 'ProjectAvatarChanged', data: { projectId: 10, avatar: 'a.png', at: LATER } }));
      expect(await currentAvatar(db, 10)).toBe('a.png');
    }));

  it("reads every project's id in order, and whether one exists (project-sql.ts)", () =>
    inWorld(async (_, db) => {
      expect(await allProjectIds(db)).toEqual(EVERY_PROJECT);
      const exists = async (id: number) =>
        (await rows<{ e: boolean }>(db, `select ${projectExistsSql('$1::int')} as e`, [id]))[0].e;
      expect([await exists(20), await exists(99)]).toEqual([true, false]);
    }));
});
