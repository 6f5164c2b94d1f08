import {
  BadRequestMessage,
  constraintOf,
  CustomAttributeTable,
  dispatch,
  firstRow,
  handledTypes,
  Invalid,
  rows,
  type EventHandlers,
  type Projector,
  type Recorded,
} from '@app/platform';
import type { UserEvent } from '@app/users';
import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { GroupEvent } from '../domain/group';
import { GROUP_SETTING_LIST, groupSettingsFrom } from '../domain/group-settings';
import { upsertMember } from './members';

/** `group_custom_attributes`, written here and read by GroupQueries. */
export const GROUP_CUSTOM_ATTRIBUTES = new CustomAttributeTable('group_custom_attributes', 'group_id');

export const GROUP_TABLES = [
  'namespaces',
  'namespace_closure',
  'members',
  'group_custom_attributes',
  'group_group_links',
] as const;

/**
 * A username is also a top-level path: one a group holds refuses the user's personal namespace, and
 * GitLab answers 400 `{"username":["has already been taken"]}` (User#namespace_uniq). This context
 * owns the indexes, so it says so; the users context reports its own 409s first.
 */
function rethrowUsernameTaken(err: unknown): never {
  const constraint = constraintOf(err);
  if (constraint === 'namespaces_path_key' || constraint === 'namespaces_full_path_key')
    throw new Invalid({ username: ['has already been taken'] });
  throw err;
}

/** A path taken at the target level, found by the unique indexes: GitLab's transfer refusal. */
function rethrowTransferClash(err: unknown): never {
  const constraint = constraintOf(err);
  if (constraint === 'namespaces_path_key' || constraint === 'namespaces_full_path_key')
    throw new BadRequestMessage(
      'Transfer failed: The parent group already has a subgroup or a project with the same path.',
    );
  throw err;
}

/** Every group event, and the users' events that make, rename or remove a personal namespace. */
type Projected = GroupEvent | Extract<UserEvent, { type: 'UserCreated' | 'UserUpdated' | 'UserDeleted' }>;

async function upsertGroupMember(
  e: Recorded<Extract<Projected, { type: 'GroupMemberAdded' | 'GroupMemberUpdated' }>>,
  db: EntityManager,
) {
  const d = e.data;
  await upsertMember(db, {
    sourceType: 'namespace',
    sourceId: d.groupId,
    userId: d.userId,
    accessLevel: d.accessLevel,
    expiresAt: d.expiresAt,
    createdBy: e.metadata.actorId ?? null,
    at: d.at,
  });
}

const on: EventHandlers<Projected> = {
  UserCreated: async ({ data: d }, db) => {
    if (d.namespaceId === undefined) return;
    // GitLab: a personal namespace's name and path are the username; its human name is the user's name.
    await db
      .query(
        `insert into namespaces (id, kind, name, path, parent_id, full_path, full_name, owner_id, visibility, created_at, updated_at)
           values ($1, 'user', $2, $2, null, $2, $3, $4, 'public', $5, $5)`,
        [d.namespaceId, d.username, d.name, d.userId, d.at],
      )
      .catch(rethrowUsernameTaken);
    await db.query(`insert into namespace_closure (ancestor_id, descendant_id, depth) values ($1, $1, 0)`, [
      d.namespaceId,
    ]);
  },
  UserUpdated: async ({ data: d }, db) => {
    const { username, name } = d.changes;
    if (username !== undefined)
      await db
        .query(
          `update namespaces set name = $2, path = $2, full_path = $2, updated_at = $3 where owner_id = $1 and kind = 'user'`,
          [d.userId, username, d.at],
        )
        .catch(rethrowUsernameTaken);
    if (name !== undefined)
      await db.query(`update namespaces set full_name = $2 where owner_id = $1 and kind = 'user'`, [d.userId, name]);
  },
  UserDeleted: async ({ data: d }, db) => {
    await db.query(`delete from namespaces where owner_id = $1 and kind = 'user'`, [d.userId]);
  },
  GroupCreated: async ({ data: d }, db) => {
    const parent =
      d.parentId === null
        ? undefined
        : await firstRow<{ full_path: string; full_name: string }>(
            db,
            `select full_path, full_name from namespaces where id = $1`,
            [d.parentId],
          );
    // An event older than a setting has its default, as the migration adding the column does.
    const settings = groupSettingsFrom(d);
    const columns = [
      'id',
      'kind',
      'parent_id',
      'full_path',
      'full_name',
      'created_at',
      'updated_at',
      ...GROUP_SETTING_LIST.map((s) => s.wire),
    ];
    const values = [
      d.groupId,
      'group',
      d.parentId,
      parent ? `${parent.full_path}/${d.path}` : d.path,
      parent ? `${parent.full_name} / ${d.name}` : d.name,
      d.at,
      d.at,
      ...GROUP_SETTING_LIST.map((s) => settings[s.key]),
    ];
    await db.query(
      `insert into namespaces (${columns.join(', ')}) values (${values.map((_, i) => `$${i + 1}`).join(', ')})`,
      values,
    );
    await db.query(
      `insert into namespace_closure (ancestor_id, descendant_id, depth)
           select $1::int, $1::int, 0
           union all
           select ancestor_id, $1::int, depth + 1 from namespace_closure where descendant_id = $2::int`,
      [d.groupId, d.parentId],
    );
  },
  GroupUpdated: async ({ data: d }, db) => {
    const c = d.changes;
    const sets: string[] = ['updated_at = $2'];
    const values: unknown[] = [d.groupId, d.at];
    const col = (column: string, v: unknown) => {
      values.push(v);
      sets.push(`${column} = $${values.length}`);
    };
    for (const s of GROUP_SETTING_LIST) if (c[s.key] !== undefined) col(s.wire, c[s.key]);
    await db.query(`update namespaces set ${sets.join(', ')} where id = $1`, values);
    if (c.name !== undefined || c.path !== undefined) await renameSubtree(db, d.groupId);
  },
  GroupDeleted: async ({ data: d }, db) => {
    // Subgroups, their ancestry and custom attributes go by cascade; memberships have no foreign key.
    await db.query(
      `delete from members where source_type = 'namespace'
             and source_id in (select descendant_id from namespace_closure where ancestor_id = $1)`,
      [d.groupId],
    );
    await db.query(`delete from namespaces where id = $1`, [d.groupId]);
  },
  GroupMemberAdded: upsertGroupMember,
  GroupMemberUpdated: upsertGroupMember,
  GroupMemberRemoved: async ({ data: d }, db) => {
    await db.query(`delete from members where source_type = 'namespace' and source_id = $1 and user_id = $2`, [
      d.groupId,
      d.userId,
    ]);
  },
  GroupCustomAttributeSet: async ({ data: d }, db) => {
    await GROUP_CUSTOM_ATTRIBUTES.set(db, d.groupId, d.key, d.value);
  },
  GroupCustomAttributeRemoved: async ({ data: d }, db) => {
    await GROUP_CUSTOM_ATTRIBUTES.remove(db, d.groupId, d.key);
  },
  // The group's subtree leaves its old ancestors and joins the new parent's; paths follow (unique: a clash aborts).
  GroupTransferred: async ({ data: d }, db) => {
    await db
      .query(`update namespaces set parent_id = $2, updated_at = $3 where id = $1`, [d.groupId, d.parentId, d.at])
      .catch(rethrowTransferClash);
    await db.query(
      `delete from namespace_closure
        where descendant_id in (select descendant_id from namespace_closure where ancestor_id = $1)
          and ancestor_id not in (select descendant_id from namespace_closure where ancestor_id = $1)`,
      [d.groupId],
    );
    if (d.parentId !== null)
      await db.query(
        `insert into namespace_closure (ancestor_id, descendant_id, depth)
           select above.ancestor_id, below.descendant_id, above.depth + below.depth + 1
             from namespace_closure above, namespace_closure below
            where above.descendant_id = $2 and below.ancestor_id = $1`,
        [d.groupId, d.parentId],
      );
    await renameSubtree(db, d.groupId).catch(rethrowTransferClash);
  },
  // The invited group may have gone since (its links went with it by cascade): then there is nothing to link.
  GroupSharedWithGroup: async ({ data: d }, db) => {
    await db.query(
      `insert into group_group_links (shared_group_id, shared_with_group_id, group_access, expires_at, created_at)
         select $1, n.id, $3, $4, $5 from namespaces n where n.id = $2`,
      [d.groupId, d.sharedWithGroupId, d.groupAccess, d.expiresAt, d.at],
    );
  },
  GroupUnsharedWithGroup: async ({ data: d }, db) => {
    await db.query(`delete from group_group_links where shared_group_id = $1 and shared_with_group_id = $2`, [
      d.groupId,
      d.sharedWithGroupId,
    ]);
  },
};

/** Recomputes `full_path` and `full_name` of a group and everything below it, parents first. */
async function renameSubtree(db: EntityManager, groupId: number): Promise<void> {
  await db.query(
    `update namespaces n
          set full_path = case when p.id is null then n.path else p.full_path || '/' || n.path end,
              full_name = case when p.id is null then n.name else p.full_name || ' / ' || n.name end
         from namespaces self left join namespaces p on p.id = self.parent_id
        where n.id = self.id and n.id = $1`,
    [groupId],
  );
  const descendants = await rows<{ id: number }>(
    db,
    `select descendant_id as id from namespace_closure where ancestor_id = $1 and depth > 0 order by depth`,
    [groupId],
  );
  for (const { id } of descendants) {
    await db.query(
      `update namespaces n set full_path = p.full_path || '/' || n.path, full_name = p.full_name || ' / ' || n.name
           from namespaces p where p.id = n.parent_id and n.id = $1`,
      [id],
    );
  }
}

/**
 * Namespaces: a personal one for every user (from the users context's events) and the groups,
 * with their ancestry (`namespace_closure`) and group memberships.
 */
@Injectable()
export class NamespaceProjection implements Projector<Projected> {
  readonly name = 'namespaces';
  readonly tables = GROUP_TABLES;
  readonly eventTypes = handledTypes(on);

  apply(e: Recorded<Projected>, db: EntityManager): Promise<void> {
    return dispatch(on, e, db);
  }
}
