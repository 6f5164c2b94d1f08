import { Invalid, rows } from '@app/platform';
import type { EntityManager } from 'typeorm';
import {
  apply,
  AT,
  groupCreated,
  openProjectionDb,
  recorded,
  userCreated,
  type ProjectionDb,
} from '../../../../test/support/projection-db';
import type { GroupEvent } from '../domain/group';
import { NamespaceProjection } from './namespace.projection';

const LATER = '2026-02-01T00:00:00.000Z';
const projection = new NamespaceProjection();

interface NamespaceRow {
  id: number;
  kind: string;
  name: string;
  path: string;
  parent_id: number | null;
  full_path: string;
  full_name: string;
  owner_id: number | null;
  description: string;
  visibility: string;
  lfs_enabled: boolean;
  request_access_enabled: boolean;
  created_at: Date;
  updated_at: Date;
}
const namespaces = (db: EntityManager) =>
  rows<NamespaceRow>(
    db,
    `select id, kind, name, path, parent_id, full_path, full_name, owner_id, description, visibility, lfs_enabled,
            request_access_enabled, created_at, updated_at from namespaces order by id`,
  );
const paths = async (db: EntityManager) => (await namespaces(db)).map((n) => [n.id, n.full_path, n.full_name]);
const closure = (db: EntityManager) =>
  rows<{ ancestor_id: number; descendant_id: number; depth: number }>(
    db,
    `select ancestor_id, descendant_id, depth from namespace_closure order by descendant_id, depth`,
  );
const members = (db: EntityManager) =>
  rows<Record<string, unknown>>(
    db,
    `select source_type, source_id, user_id, access_level, to_char(expires_at, 'YYYY-MM-DD') as expires_at, created_by,
            created_at, updated_at from members order by source_type, source_id, user_id`,
  );
const member = (groupId: number, userId: number, accessLevel: number, at = AT): GroupEvent => ({
  type: 'GroupMemberAdded',
  data: { groupId, userId, accessLevel, expiresAt: null, at },
});

describe('NamespaceProjection', () => {
  let pg: ProjectionDb;
  beforeAll(async () => {
    pg = await openProjectionDb();
  });
  afterAll(() => pg.drop());

  it('handles every group event and the user events that reach personal namespaces', () => {
    expect([...projection.eventTypes].sort()).toEqual([
      'GroupCreated',
      'GroupCustomAttributeRemoved',
      'GroupCustomAttributeSet',
      'GroupDeleted',
      'GroupMemberAdded',
      'GroupMemberRemoved',
      'GroupMemberUpdated',
      'GroupSharedWithGroup',
      'GroupTransferred',
      'GroupUnsharedWithGroup',
      'GroupUpdated',
      'UserCreated',
      'UserDeleted',
      'UserUpdated',
    ]);
  });

  it("makes a user's personal namespace, renames it with the user, and removes it", () =>
    pg.rollingBack(async (db) => {
      await apply(projection, db, userCreated(1, { username: 'ann', name: 'Ann A' }), userCreated(2));
      expect(await namespaces(db)).toEqual([
        {
          id: 101,
          kind: 'user',
          name: 'ann',
          path: 'ann',
          parent_id: null,
          full_path: 'ann',
          full_name: 'Ann A',
          owner_id: 1,
          description: '',
          visibility: 'public',
          lfs_enabled: true,
          request_access_enabled: false,
          created_at: new Date(AT),
          updated_at: new Date(AT),
        },
        expect.objectContaining({ id: 102, full_path: 'user2', owner_id: 2 }),
      ]);
      expect(await closure(db)).toEqual([
        { ancestor_id: 101, descendant_id: 101, depth: 0 },
        { ancestor_id: 102, descendant_id: 102, depth: 0 },
      ]);

      await apply(
        projection,
        db,
        { type: 'UserUpdated', data: { userId: 1, changes: { username: 'anna' }, at: LATER } },
        { type: 'UserUpdated', data: { userId: 2, changes: { name: 'Bo' }, at: LATER } },
        { type: 'UserUpdated', data: { userId: 2, changes: { bio: 'nothing for namespaces' }, at: LATER } },
      );
      expect((await namespaces(db)).map((n) => [n.id, n.name, n.path, n.full_path, n.full_name, n.updated_at])).toEqual(
        [
          [101, 'anna', 'anna', 'anna', 'Ann A', new Date(LATER)],
          [102, 'user2', 'user2', 'user2', 'Bo', new Date(AT)],
        ],
      );

      await apply(projection, db, {
        type: 'UserDeleted',
        data: { userId: 1, username: 'anna', hardDelete: false, at: LATER },
      });
      expect((await namespaces(db)).map((n) => n.id)).toEqual([102]);
      expect(await closure(db)).toEqual([{ ancestor_id: 102, descendant_id: 102, depth: 0 }]);
    }));

  it('answers a username a group holds with GitLab’s 400, on creation and on rename', () =>
    pg.rollingBack(async (db) => {
      await apply(projection, db, groupCreated(50, { path: 'taken' }), userCreated(1));
      await expect(apply(projection, db, userCreated(2, { username: 'Taken' }))).rejects.toEqual(
        new Invalid({ username: ['has already been taken'] }),
      );
    }));

  it('refuses a rename onto a path a group holds in the same way', () =>
    pg.rollingBack(async (db) => {
      await apply(projection, db, groupCreated(50, { path: 'taken' }), userCreated(1));
      await expect(
        apply(projection, db, { type: 'UserUpdated', data: { userId: 1, changes: { username: 'taken' }, at: LATER } }),
      ).rejects.toEqual(new Invalid({ username: ['has already been taken'] }));
    }));

  it('creates groups and subgroups with full paths, names and their ancestry', () =>
    pg.rollingBack(async (db) => {
      await apply(
        projection,
        db,
        groupCreated(50, {
          name: 'Top',
          path: 'top',
          description: 'the top',
          visibility: 'internal',
          lfsEnabled: false,
        }),
        groupCreated(51, { name: 'Mid', path: 'mid', parentId: 50 }),
        groupCreated(52, { name: 'Leaf', path: 'leaf', parentId: 51, requestAccessEnabled: false }),
      );
      const [top, , leaf] = await namespaces(db);
      expect(top).toEqual({
        id: 50,
        kind: 'group',
        name: 'Top',
        path: 'top',
        parent_id: null,
        full_path: 'top',
        full_name: 'Top',
        owner_id: null,
        description: 'the top',
        visibility: 'internal',
        lfs_enabled: false,
        request_access_enabled: true,
        created_at: new Date(AT),
        updated_at: new Date(AT),
      });
      expect(leaf).toMatchObject({
        parent_id: 51,
        full_path: 'top/mid/leaf',
        full_name: 'Top / Mid / Leaf',
        request_access_enabled: false,
      });
      expect(await closure(db)).toEqual([
        { ancestor_id: 50, descendant_id: 50, depth: 0 },
        { ancestor_id: 51, descendant_id: 51, depth: 0 },
        { ancestor_id: 50, descendant_id: 51, depth: 1 },
        { ancestor_id: 52, descendant_id: 52, depth: 0 },
        { ancestor_id: 51, descendant_id: 52, depth: 1 },
        { ancestor_id: 50, descendant_id: 52, depth: 2 },
      ]);
    }));

  it('updates the changed settings, and a rename reaches every descendant’s full path and name', () =>
    pg.rollingBack(async (db) => {
      await apply(
        projection,
        db,
        groupCreated(50, { name: 'Top', path: 'top' }),
        groupCreated(51, { name: 'Mid', path: 'mid', parentId: 50 }),
        groupCreated(52, { name: 'Leaf', path: 'leaf', parentId: 51 }),
        groupCreated(60, { name: 'Other', path: 'other' }),
        {
          type: 'GroupUpdated',
          data: {
            groupId: 60,
            changes: { description: 'd', visibility: 'private', lfsEnabled: false, requestAccessEnabled: false },
            at: LATER,
          },
        },
        { type: 'GroupUpdated', data: { groupId: 51, changes: { path: 'middle' }, at: LATER } },
        { type: 'GroupUpdated', data: { groupId: 50, changes: { name: 'Root' }, at: LATER } },
      );
      expect(await paths(db)).toEqual([
        [50, 'top', 'Root'],
        [51, 'top/middle', 'Root / Mid'],
        [52, 'top/middle/leaf', 'Root / Mid / Leaf'],
        [60, 'other', 'Other'],
      ]);
      expect((await namespaces(db)).find((n) => n.id === 60)).toMatchObject({
        description: 'd',
        visibility: 'private',
        lfs_enabled: false,
        request_access_enabled: false,
        updated_at: new Date(LATER),
      });
      expect((await namespaces(db)).find((n) => n.id === 52)).toMatchObject({ updated_at: new Date(AT) });
    }));

  it('adds, changes and removes group members, with who added them', () =>
    pg.rollingBack(async (db) => {
      await pg.given(db, userCreated(1), userCreated(2), userCreated(3));
      await apply(
        projection,
        db,
        groupCreated(50),
        recorded(
          {
            type: 'GroupMemberAdded' as const,
            data: { groupId: 50, userId: 1, accessLevel: 50, expiresAt: null, at: AT },
          },
          { metadata: { actorId: 1 } },
        ),
        member(50, 2, 30),
        member(50, 3, 20),
        {
          type: 'GroupMemberUpdated',
          data: { groupId: 50, userId: 2, accessLevel: 40, expiresAt: '2027-01-02', at: LATER },
        },
        { type: 'GroupMemberRemoved', data: { groupId: 50, userId: 3, at: LATER } },
      );
      expect(await members(db)).toEqual([
        {
          source_type: 'namespace',
          source_id: 50,
          user_id: 1,
          access_level: 50,
          expires_at: null,
          created_by: 1,
          created_at: new Date(AT),
          updated_at: new Date(AT),
        },
        {
          source_type: 'namespace',
          source_id: 50,
          user_id: 2,
          access_level: 40,
          expires_at: '2027-01-02',
          created_by: null,
          created_at: new Date(AT),
          updated_at: new Date(LATER),
        },
      ]);
    }));

  it('sets, replaces and removes custom attributes', () =>
    pg.rollingBack(async (db) => {
      await apply(
        projection,
        db,
        groupCreated(50),
        { type: 'GroupCustomAttributeSet', data: { groupId: 50, key: 'a', value: '1', at: AT } },
        { type: 'GroupCustomAttributeSet', data: { groupId: 50, key: 'b', value: '2', at: AT } },
        { type: 'GroupCustomAttributeSet', data: { groupId: 50, key: 'a', value: '3', at: AT } },
        { type: 'GroupCustomAttributeRemoved', data: { groupId: 50, key: 'b', at: LATER } },
      );
      expect(await rows(db, `select group_id, key, value from group_custom_attributes order by key`)).toEqual([
        { group_id: 50, key: 'a', value: '3' },
      ]);
    }));

  it('deletes a group with its subgroups, their ancestry, attributes and memberships', () =>
    pg.rollingBack(async (db) => {
      await pg.given(db, userCreated(1));
      await apply(
        projection,
        db,
        groupCreated(50),
        groupCreated(51, { parentId: 50 }),
        groupCreated(60),
        member(50, 1, 50),
        member(51, 1, 30),
        member(60, 1, 50),
        { type: 'GroupCustomAttributeSet', data: { groupId: 51, key: 'a', value: '1', at: AT } },
        { type: 'GroupDeleted', data: { groupId: 50, at: LATER } },
      );
      expect((await namespaces(db)).map((n) => n.id)).toEqual([60, 101]);
      expect(await closure(db)).toEqual([
        { ancestor_id: 60, descendant_id: 60, depth: 0 },
        { ancestor_id: 101, descendant_id: 101, depth: 0 },
      ]);
      expect((await members(db)).map((m) => [m.source_id, m.user_id])).toEqual([[60, 1]]);
      expect(await rows(db, `select group_id from group_custom_attributes`)).toEqual([]);
    }));

  const links = (db: EntityManager) =>
    rows<Record<string, unknown>>(
      db,
      `select shared_group_id, shared_with_group_id, group_access, to_char(expires_at, 'YYYY-MM-DD') as expires_at, created_at
         from group_group_links order by shared_group_id, shared_with_group_id`,
    );
  const shared = (groupId: number, sharedWithGroupId: number, groupAccess: number, expiresAt: string | null = null) =>
    recorded<GroupEvent>(
      { type: 'GroupSharedWithGroup', data: { groupId, sharedWithGroupId, groupAccess, expiresAt, at: LATER } },
      { streamId: `group-${groupId}` },
    );

  it('keeps the links of groups shared with groups; a link goes with either group', () =>
    pg.rollingBack(async (db) => {
      await apply(projection, db, userCreated(1), groupCreated(50), groupCreated(51), groupCreated(52));
      await apply(projection, db, shared(50, 51, 30, '2030-01-31'), shared(50, 52, 10), shared(52, 50, 20));
      expect(await links(db)).toEqual([
        {
          shared_group_id: 50,
          shared_with_group_id: 51,
          group_access: 30,
          expires_at: '2030-01-31',
          created_at: new Date(LATER),
        },
        {
          shared_group_id: 50,
          shared_with_group_id: 52,
          group_access: 10,
          expires_at: null,
          created_at: new Date(LATER),
        },
        {
          shared_group_id: 52,
          shared_with_group_id: 50,
          group_access: 20,
          expires_at: null,
          created_at: new Date(LATER),
        },
      ]);
      await apply(projection, db, {
        type: 'GroupUnsharedWithGroup',
        data: { groupId: 50, sharedWithGroupId: 51, at: LATER },
      });
      expect((await links(db)).map((l) => [l.shared_group_id, l.shared_with_group_id])).toEqual([
        [50, 52],
        [52, 50],
      ]);
      await apply(projection, db, { type: 'GroupDeleted', data: { groupId: 52, at: LATER } });
      expect(await links(db)).toEqual([]);
      // A share recorded after the invited group went (a rebuild replays it) links nothing.
      await apply(projection, db, shared(50, 52, 30));
      expect(await links(db)).toEqual([]);
    }));

  it('moves a group’s subtree under a new parent and to the top level: ancestry and paths follow; a clash is GitLab’s 400', () =>
    pg.rollingBack(async (db) => {
      await apply(
        projection,
        db,
        userCreated(1),
        groupCreated(50),
        groupCreated(51),
        groupCreated(52, { parentId: 50 }),
        groupCreated(53, { parentId: 52 }),
      );
      const moved = (parentId: number | null) =>
        recorded<GroupEvent>(
          { type: 'GroupTransferred', data: { groupId: 52, parentId, at: LATER } },
          { streamId: 'group-52' },
        );
      await apply(projection, db, moved(51));
      expect((await paths(db)).filter(([id]) => id === 52 || id === 53)).toEqual([
        [52, 'group51/group52', 'Group 51 / Group 52'],
        [53, 'group51/group52/group53', 'Group 51 / Group 52 / Group 53'],
      ]);
      const ancestry = async () =>
        (await closure(db))
          .filter((c) => c.descendant_id === 52 || c.descendant_id === 53)
          .map((c) => [c.ancestor_id, c.descendant_id, c.depth]);
      expect(await ancestry()).toEqual([
        [52, 52, 0],
        [51, 52, 1],
        [53, 53, 0],
        [52, 53, 1],
        [51, 53, 2],
      ]);
      await apply(projection, db, moved(null));
      expect((await paths(db)).filter(([id]) => id === 52 || id === 53)).toEqual([
        [52, 'group52', 'Group 52'],
        [53, 'group52/group53', 'Group 52 / Group 53'],
      ]);
      expect(await ancestry()).toEqual([
        [52, 52, 0],
        [53, 53, 0],
        [52, 53, 1],
      ]);
      await apply(projection, db, groupCreated(54, { parentId: 50, path: 'group52' }));
      await expect(apply(projection, db, moved(50))).rejects.toThrow(
        'Transfer failed: The parent group already has a subgroup or a project with the same path.',
      );
    }));
});
