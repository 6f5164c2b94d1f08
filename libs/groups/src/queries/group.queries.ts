import { firstRow, NotFound, oneRow, rows, type Actor, type PageParams } from '@app/platform';
import { userJoinSql } from '@app/users';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ACCESS, type Visibility } from '../domain/access-level';
import { GROUP_CUSTOM_ATTRIBUTES } from '../projections/namespace.projection';
import { ACTIVE_MEMBER, inheritedGroupLevelSql } from './group-sql';
import { groupVisibleSql, namespaceRecordSql, type NamespaceRecord } from './namespace-access';

export interface GroupListFilters {
  /** Direct children of this group only (`/groups/:id/subgroups`). */
  parentId?: number;
  /** Every group below this one, at any depth (`/groups/:id/descendant_groups`). */
  ancestorId?: number;
  skipGroups?: number[];
  allAvailable?: boolean;
  search?: string;
  orderBy: 'name' | 'path';
  sort: 'asc' | 'desc';
  owned?: boolean;
  customAttributes?: Record<string, string>;
}

const likeEscape = (s: string) => `%${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** SQL: the caller belongs to the group or to an ancestor (or to a group either is shared with), or to a descendant of it. */
function authorizedSql(alias: string, uid: string): string {
  return `(${inheritedGroupLevelSql(`${alias}.id`, uid)} is not null
        or exists (select 1 from namespace_closure c join members m on m.source_type = 'namespace' and m.source_id = c.descendant_id
                 where c.ancestor_id = ${alias}.id and c.depth > 0 and m.user_id = ${uid} and ${ACTIVE_MEMBER}))`;
}

/** ` and ...` conditions of a members list on the user (`u`) and `userIdSql`, their values pushed onto `params`. */
function memberFilterSql(params: unknown[], userIdSql: string, search?: string, userIds?: number[]): string {
  let filter = '';
  if (search) filter += ` and (u.name ilike $${params.push(likeEscape(search))} or u.username ilike $${params.length})`;
  // GitLab's `user_ids[]` (13.x+): an empty list filters nothing.
  if (userIds?.length) filter += ` and ${userIdSql} = any($${params.push(userIds)}::int[])`;
  return filter;
}

/** Reads of groups and memberships; visibility is part of every `where`, so counts and pages agree. */
@Injectable()
export class GroupQueries {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * GitLab's GroupsFinder: administrators see every group; anonymous callers the public ones;
   * others the groups they belong to (with their ancestors and descendants), plus every public and
   * internal group when `all_available` is set. `owned` keeps the groups the caller owns directly.
   */
  async list(
    actor: Actor | undefined,
    f: GroupListFilters,
    page: PageParams,
  ): Promise<{ rows: NamespaceRecord[]; total: number }> {
    const params: unknown[] = [actor?.id ?? null];
    const p = (v: unknown) => `$${params.push(v)}`;
    const where = [`n.kind = 'group'`];
    if (f.owned) {
      where.push(`exists (select 1 from members m where m.source_type = 'namespace' and m.source_id = n.id and m.user_id = $1
                   and m.access_level = ${ACCESS.owner} and ${ACTIVE_MEMBER})`);
    } else if (actor && !actor.isAdmin && !f.allAvailable) {
      where.push(authorizedSql('n', '$1'));
    } else {
      where.push(groupVisibleSql('n', actor, '$1'));
    }
    if (f.parentId !== undefined) where.push(`n.parent_id = ${p(f.parentId)}`);
    if (f.ancestorId !== undefined)
      where.push(
        `n.id in (select descendant_id from namespace_closure where ancestor_id = ${p(f.ancestorId)} and depth > 0)`,
      );
    if (f.skipGroups?.length) where.push(`n.id <> all(${p(f.skipGroups)}::int[])`);
    if (f.search) where.push(`(n.name ilike ${p(likeEscape(f.search))} or n.path ilike $${params.length})`);
    for (const [key, value] of Object.entries(f.customAttributes ?? {}))
      where.push(
        `exists (select 1 from group_custom_attributes a where a.group_id = n.id and a.key = ${p(key)} and a.value = ${p(value)})`,
      );
    const sql = where.join(' and ');
    // `$1` (the caller) is named even where no rule needs it (administrators), so PostgreSQL can type it.
    const { total } = await oneRow<{ total: number }>(
      this.dataSource,
      `select count(*)::int as total, $1::int as caller from namespaces n where ${sql}`,
      params,
    );
    const order = `lower(n.${f.orderBy}) ${f.sort}, n.id ${f.sort}`;
    const groups = await rows<NamespaceRecord & { caller: number | null }>(
      this.dataSource,
      `select ${namespaceRecordSql('n')}, $1::int as caller from namespaces n where ${sql}
        order by ${order} offset ${p(page.offset)} limit ${p(page.perPage)}`,
      params,
    );
    return { rows: groups, total };
  }

  /** Members of a group or project with their user, `search` on name and username, `userIds` (GitLab's `user_ids[]`), by join order. */
  async members(
    sourceType: 'namespace' | 'project',
    sourceId: number,
    search: string | undefined,
    page: PageParams,
    userIds?: number[],
  ): Promise<{ rows: MemberRow[]; total: number }> {
    const params: unknown[] = [sourceType, sourceId];
    const filter = memberFilterSql(params, 'm.user_id', search, userIds);
    const base = `from members m ${userJoinSql('u', 'm.user_id')} where m.source_type = $1 and m.source_id = $2 ${filter}`;
    const { total } = await oneRow<{ total: number }>(this.dataSource, `select count(*)::int as total ${base}`, params);
    const members = await rows<MemberRow>(
      this.dataSource,
      `select u.id, u.username, u.name, u.state, u.avatar, u.email, m.access_level, to_char(m.expires_at, 'YYYY-MM-DD') as expires_at
       ${base} order by m.created_at, m.user_id offset $${params.length + 1} limit $${params.length + 2}`,
      [...params, page.offset, page.perPage],
    );
    return { rows: members, total };
  }

  /**
   * GitLab's `members/all` (13.11+): one row per user who reaches the source by any way in
   * `membershipsSql` (rows of `user_id, access_level, expires_at`, naming the source's id as `$1`),
   * with the highest level (the effective one) and that membership's expiry; by user id.
   */
  async allMembers(
    membershipsSql: string,
    sourceId: number,
    search: string | undefined,
    page: PageParams,
    userIds?: number[],
  ): Promise<{ rows: MemberRow[]; total: number }> {
    const params: unknown[] = [sourceId];
    const filter = memberFilterSql(params, 'b.user_id', search, userIds);
    const base = `with best as (
        select distinct on (ways.user_id) ways.user_id, ways.access_level, ways.expires_at from (${membershipsSql}) ways
         order by ways.user_id, ways.access_level desc, ways.expires_at desc nulls first)
      select u.id, u.username, u.name, u.state, u.avatar, u.email, b.access_level, to_char(b.expires_at, 'YYYY-MM-DD') as expires_at
        from best b ${userJoinSql('u', 'b.user_id')} where true ${filter}`;
    const { total } = await oneRow<{ total: number }>(
      this.dataSource,
      `select count(*)::int as total from (${base}) counted`,
      params,
    );
    const members = await rows<MemberRow>(
      this.dataSource,
      `${base} order by u.id offset $${params.length + 1} limit $${params.length + 2}`,
      [...params, page.offset, page.perPage],
    );
    return { rows: members, total };
  }

  /** One user of `allMembers`, or 404 (GitLab's `find_by!`: `404 Not found`). */
  async allMember(membershipsSql: string, sourceId: number, userId: number): Promise<MemberRow> {
    const { rows: found } = await this.allMembers(
      membershipsSql,
      sourceId,
      undefined,
      { page: 1, perPage: 1, offset: 0 },
      [userId],
    );
    if (!found[0]) throw new NotFound();
    return found[0];
  }

  async member(sourceType: 'namespace' | 'project', sourceId: number, userId: number): Promise<MemberRow> {
    const row = await firstRow<MemberRow>(
      this.dataSource,
      `select u.id, u.username, u.name, u.state, u.avatar, u.email, m.access_level, to_char(m.expires_at, 'YYYY-MM-DD') as expires_at
         from members m ${userJoinSql('u', 'm.user_id')} where m.source_type = $1 and m.source_id = $2 and m.user_id = $3`,
      [sourceType, sourceId, userId],
    );
    if (!row) throw new NotFound();
    return row;
  }

  /** Whether the user is a direct member of the group or project (expired or not). */
  async hasMember(sourceType: 'namespace' | 'project', sourceId: number, userId: number): Promise<boolean> {
    const row = await firstRow<{ one: number }>(
      this.dataSource,
      `select 1 as one from members where source_type = $1 and source_id = $2 and user_id = $3`,
      [sourceType, sourceId, userId],
    );
    return row !== undefined;
  }

  /** A group's visibility, or undefined without the group (a parent bounds a change of its subgroup's). */
  async visibility(groupId: number): Promise<Visibility | undefined> {
    return (
      await firstRow<{ visibility: Visibility }>(this.dataSource, `select visibility from namespaces where id = $1`, [
        groupId,
      ])
    )?.visibility;
  }

  /** The visibilities of the group's direct subgroups (they bound a change of the group's). */
  async subgroupVisibilities(groupId: number): Promise<Visibility[]> {
    const subgroups = await rows<{ visibility: Visibility }>(
      this.dataSource,
      `select visibility from namespaces where parent_id = $1`,
      [groupId],
    );
    return subgroups.map((r) => r.visibility);
  }

  /**
   * GitLab's `Projects::GroupsFinder` (`GET /projects/:id/groups`): the groups of the namespace and its
   * ancestors (none for a personal namespace), and the groups in `sharedIds` (only those the caller
   * sees when `sharedVisibleOnly`); `search` on name and path, `skipGroups`; by id.
   */
  async projectGroups(
    namespaceId: number,
    sharedIds: number[],
    f: { search?: string; skipGroups?: number[]; sharedVisibleOnly?: boolean },
    actor: Actor | undefined,
    page: PageParams,
  ): Promise<{ rows: NamespaceRecord[]; total: number }> {
    const params: unknown[] = [actor?.id ?? null, namespaceId, sharedIds];
    const p = (v: unknown) => `$${params.push(v)}`;
    const shared = `n.id = any($3::int[])${f.sharedVisibleOnly ? ` and ${groupVisibleSql('n', actor, '$1')}` : ''}`;
    const where = [
      `n.kind = 'group'`,
      `(n.id in (select ancestor_id from namespace_closure where descendant_id = $2) or (${shared}))`,
    ];
    if (f.skipGroups?.length) where.push(`n.id <> all(${p(f.skipGroups)}::int[])`);
    if (f.search) where.push(`(n.name ilike ${p(likeEscape(f.search))} or n.path ilike $${params.length})`);
    const sql = where.join(' and ');
    const { total } = await oneRow<{ total: number }>(
      this.dataSource,
      `select count(*)::int as total, $1::int as caller from namespaces n where ${sql}`,
      params,
    );
    const found = await rows<NamespaceRecord & { caller: number | null }>(
      this.dataSource,
      `select ${namespaceRecordSql('n')}, $1::int as caller from namespaces n where ${sql}
        order by n.id offset ${p(page.offset)} limit ${p(page.perPage)}`,
      params,
    );
    return { rows: found, total };
  }

  /** The group and every group below it, with their visibilities. */
  async subtree(groupId: number): Promise<{ id: number; visibility: Visibility }[]> {
    return rows<{ id: number; visibility: Visibility }>(
      this.dataSource,
      `select n.id, n.visibility from namespace_closure c join namespaces n on n.id = c.descendant_id where c.ancestor_id = $1`,
      [groupId],
    );
  }

  /** Whether another namespace at the level (a group's children, or the top level with personal namespaces) has the path. */
  async pathTaken(parentId: number | null, path: string, exceptId: number): Promise<boolean> {
    const row = await firstRow<{ one: number }>(
      this.dataSource,
      `select 1 as one from namespaces
        where coalesce(parent_id, 0) = coalesce($1::int, 0) and lower(path) = lower($2) and id <> $3`,
      [parentId, path, exceptId],
    );
    return row !== undefined;
  }

  /** Whether the group is shared with the other one (expired or not: GitLab lists and deletes expired links too). */
  async isSharedWith(groupId: number, sharedWithGroupId: number): Promise<boolean> {
    const row = await firstRow<{ one: number }>(
      this.dataSource,
      `select 1 as one from group_group_links where shared_group_id = $1 and shared_with_group_id = $2`,
      [groupId, sharedWithGroupId],
    );
    return row !== undefined;
  }

  /**
   * The groups this one is shared with, as GroupDetail's `shared_with_groups` shows them: only those the
   * caller may see (GitLab's `public_or_visible_to_user`), in the order they were shared.
   */
  async sharedWithGroups(groupId: number, actor: Actor | undefined): Promise<SharedWithGroupRow[]> {
    return rows<SharedWithGroupRow & { caller: number | null }>(
      this.dataSource,
      `select n.id as group_id, n.name as group_name, n.full_path as group_full_path,
              ggl.group_access as group_access_level, to_char(ggl.expires_at, 'YYYY-MM-DD') as expires_at, $2::int as caller
         from group_group_links ggl join namespaces n on n.id = ggl.shared_with_group_id
        where ggl.shared_group_id = $1 and ${groupVisibleSql('n', actor, '$2')}
        order by ggl.created_at, n.id`,
      [groupId, actor?.id ?? null],
    ).then((found) =>
      found.map((l) => ({
        group_id: l.group_id,
        group_name: l.group_name,
        group_full_path: l.group_full_path,
        group_access_level: l.group_access_level,
        expires_at: l.expires_at,
      })),
    );
  }

  customAttributes(groupId: number): Promise<{ key: string; value: string }[]> {
    return GROUP_CUSTOM_ATTRIBUTES.list(this.dataSource, groupId);
  }

  customAttribute(groupId: number, key: string): Promise<{ key: string; value: string }> {
    return GROUP_CUSTOM_ATTRIBUTES.get(this.dataSource, groupId, key);
  }
}

export interface MemberRow {
  id: number;
  username: string;
  name: string;
  state: string;
  avatar: string | null;
  email: string;
  access_level: number;
  expires_at: string | null;
}

/** One entry of GroupDetail's `shared_with_groups` (GitLab's SharedGroupWithGroup entity, 13.x). */
export interface SharedWithGroupRow {
  group_id: number;
  group_name: string;
  group_full_path: string;
  group_access_level: number;
  expires_at: string | null;
}
