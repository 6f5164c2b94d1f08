import { firstRow, oneRow, rows, type Actor, type PageParams } from '@app/platform';
import { userJoinSql } from '@app/users';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ACCESS } from '../domain/access-level';
import { ACTIVE_MEMBER, inheritedGroupLevelSql } from './group-sql';

/** A namespace as `/namespaces` shows it: a user's personal one or a group. */
export interface NamespaceRow {
  id: number;
  name: string;
  path: string;
  kind: 'user' | 'group';
  fullPath: string;
  parentId: number | null;
  /** The personal namespace's owner (for its avatar and URL); null for a group. */
  owner: { id: number; username: string; avatar: string | null; email: string } | null;
  /** The members of the group and its subgroups, counted for those who administer it; null otherwise. */
  membersCountWithDescendants: number | null;
}

interface RawNamespaceRow {
  id: number;
  name: string;
  path: string;
  kind: 'user' | 'group';
  full_path: string;
  parent_id: number | null;
  owner_id: number | null;
  owner_username: string | null;
  owner_avatar: string | null;
  owner_email: string | null;
  members_count: number | null;
}

/**
 * The caller's level that lets them see a namespace (GitLab's `read_namespace`): their own personal
 * namespace, a group they belong to (directly or through an ancestor); administrators see all.
 */
function readableSql(actor: Actor, uid: string): string {
  if (actor.isAdmin) return 'true';
  return `((n.kind = 'user' and n.owner_id = ${uid}) or (n.kind = 'group' and ${inheritedGroupLevelSql('n.id', uid)} is not null))`;
}

/** Owners and administrators see `members_count_with_descendants` (GitLab's `admin_group`). */
function membersCountSql(actor: Actor, uid: string): string {
  const counted = `(select count(distinct m.user_id)::int from namespace_closure c
      join members m on m.source_type = 'namespace' and m.source_id = c.descendant_id
     where c.ancestor_id = n.id and ${ACTIVE_MEMBER})`;
  if (actor.isAdmin) return `case when n.kind = 'group' then ${counted} end`;
  return `case when n.kind = 'group' and ${inheritedGroupLevelSql('n.id', uid)} >= ${ACCESS.owner} then ${counted} end`;
}

const likeEscape = (s: string) => `%${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** The namespaces' reads of `/namespaces` (GitLab 10.x, with 14.2's `owned_only`). */
@Injectable()
export class NamespaceQueries {
  constructor(private readonly dataSource: DataSource) {}

  private select(actor: Actor, uid: string): string {
    return `select n.id, n.name, n.path, n.kind, n.full_path, n.parent_id, n.owner_id,
                   o.username as owner_username, o.avatar as owner_avatar, o.email as owner_email,
                   ${membersCountSql(actor, uid)} as members_count
              from namespaces n ${userJoinSql('o', 'n.owner_id', 'left join')} and n.kind = 'user'`;
  }

  /**
   * Administrators: every namespace. Others (GitLab's `current_user.namespaces`): their personal
   * namespace and the groups they are a direct member of, only those they own with `ownedOnly`.
   * `search` matches the name or the path, in any case.
   */
  async list(
    actor: Actor,
    f: { search?: string; ownedOnly?: boolean; topLevelOnly?: boolean },
    page: PageParams,
  ): Promise<{ rows: NamespaceRow[]; total: number }> {
    const where: string[] = [];
    // The caller's id is $1 for everyone but administrators, whose statement never names it.
    const params: unknown[] = actor.isAdmin ? [] : [actor.id];
    if (!actor.isAdmin) {
      const level = f.ownedOnly ? ` and m.access_level >= ${ACCESS.owner}` : '';
      where.push(`((n.kind = 'user' and n.owner_id = $1::int) or n.id in (select m.source_id from members m
        where m.source_type = 'namespace' and m.user_id = $1::int and ${ACTIVE_MEMBER}${level}))`);
    }
    if (f.search) {
      params.push(likeEscape(f.search));
      where.push(`(n.name ilike $${params.length} or n.path ilike $${params.length})`);
    }
    if (f.topLevelOnly) where.push('n.parent_id is null');
    const filter = where.length ? `where ${where.join(' and ')}` : '';
    const { total } = await oneRow<{ total: number }>(
      this.dataSource,
      `select count(*)::int as total from namespaces n ${filter}`,
      params,
    );
    const n = params.length;
    const found = await rows<RawNamespaceRow>(
      this.dataSource,
      `${this.select(actor, '$1::int')} ${filter} order by n.id limit $${n + 1} offset $${n + 2}`,
      [...params, page.perPage, (page.page - 1) * page.perPage],
    );
    return { rows: found.map(toRow), total };
  }

  /** A namespace by id or full path (any case) that the caller may read; undefined otherwise (404, never 403). */
  async readable(actor: Actor, idOrPath: string): Promise<NamespaceRow | undefined> {
    const byId = /^\d{1,9}$/.test(idOrPath);
    const row = await firstRow<RawNamespaceRow>(
      this.dataSource,
      `${this.select(actor, '$2::int')}
        where ${byId ? 'n.id = $1::int' : 'lower(n.full_path) = lower($1)'} and ${readableSql(actor, '$2::int')}`,
      // An administrator's statement never names the caller: $2 would have no type.
      actor.isAdmin ? [idOrPath] : [idOrPath, actor.id],
    );
    return row ? toRow(row) : undefined;
  }

  /**
   * GitLab 13.x's `/namespaces/:namespace/exists`: whether a namespace with this path (any case) sits
   * under the parent (at the top level without one), and a free path to suggest in its place: the path
   * with a number appended, counting from 1 (GitLab's Uniquify: `my-group` -> `my-group1`).
   */
  async exists(path: string, parentId: number | null): Promise<{ exists: boolean; suggests: string[] }> {
    const prefix = `${path.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    const taken = await rows<{ path: string }>(
      this.dataSource,
      `select lower(path) as path from namespaces where coalesce(parent_id, 0) = $2 and lower(path) like $1`,
      [prefix, parentId ?? 0],
    );
    const paths = new Set(taken.map((r) => r.path));
    if (!paths.has(path.toLowerCase())) return { exists: false, suggests: [] };
    let n = 1;
    while (paths.has(`${path}${n}`.toLowerCase())) n += 1;
    return { exists: true, suggests: [`${path}${n}`] };
  }
}

function toRow(r: RawNamespaceRow): NamespaceRow {
  return {
    id: r.id,
    name: r.name,
    path: r.path,
    kind: r.kind,
    fullPath: r.full_path,
    parentId: r.parent_id,
    owner:
      r.kind === 'user' && r.owner_id !== null && r.owner_username !== null
        ? { id: r.owner_id, username: r.owner_username, avatar: r.owner_avatar, email: r.owner_email ?? '' }
        : null,
    membersCountWithDescendants: r.members_count,
  };
}
