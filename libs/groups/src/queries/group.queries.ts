import { firstRow, NotFound, oneRow, rows, type Actor, type PageParams } from '@app/platform';
import { userJoinSql } from '@app/users';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ACCESS, type Visibility } from '../domain/access-level';
import { GROUP_CUSTOM_ATTRIBUTES } from '../projections/namespace.projection';
import { ACTIVE_MEMBER } from './group-sql';
import { groupVisibleSql, namespaceRecordSql, type NamespaceRecord } from './namespace-access';

export interface GroupListFilters {
  /** Direct children of this group only (`/groups/:id/subgroups`). */
  parentId?: number;
  skipGroups?: number[];
  allAvailable?: boolean;
  search?: string;
  orderBy: 'name' | 'path';
  sort: 'asc' | 'desc';
  owned?: boolean;
  customAttributes?: Record<string, string>;
}

const likeEscape = (s: string) => `%${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** SQL: the caller belongs to the group, to an ancestor, or to a descendant of it. */
function authorizedSql(alias: string, uid: string): string {
  return `(exists (select 1 from namespace_closure c join members m on m.source_type = 'namespace' and m.source_id = c.ancestor_id
                 where c.descendant_id = ${alias}.id and m.user_id = ${uid} and ${ACTIVE_MEMBER})
        or exists (select 1 from namespace_closure c join members m on m.source_type = 'namespace' and m.source_id = c.descendant_id
                 where c.ancestor_id = ${alias}.id and c.depth > 0 and m.user_id = ${uid} and ${ACTIVE_MEMBER}))`;
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

  /** Members of a group or project with their user, `search` on name and username, by join order. */
  async members(
    sourceType: 'namespace' | 'project',
    sourceId: number,
    search: string | undefined,
    page: PageParams,
  ): Promise<{ rows: MemberRow[]; total: number }> {
    const params: unknown[] = [sourceType, sourceId];
    let filter = '';
    if (search) {
      params.push(likeEscape(search));
      filter = `and (u.name ilike $3 or u.username ilike $3)`;
    }
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
