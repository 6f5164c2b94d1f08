import { firstRow, Forbidden, NotFound, oneRow, rows, type Actor } from '@app/platform';
import { isInternalUserSql, TopLevelPaths } from '@app/users';
import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { GROUP_SETTING_LIST, type GroupSettings } from '../domain/group-settings';
import { ACTIVE_MEMBER, inheritedGroupLevelSql } from './group-sql';

/**
 * A `namespaces` row, a user's personal namespace or a group, as the queries answer it. The settings'
 * fields are the table's of domain/group-settings.ts (keyed as GroupSettings), and so is their part of
 * the select list (`namespaceRecordSql`): a new setting needs nothing here.
 */
export interface NamespaceRecord extends GroupSettings {
  id: number;
  kind: 'user' | 'group';
  parentId: number | null;
  fullPath: string;
  fullName: string;
  ownerId: number | null;
  createdAt: Date;
  updatedAt: Date;
}

/** The select list that reads a `namespaces` row aliased `alias` into NamespaceRecord's fields. */
export function namespaceRecordSql(alias: string): string {
  const column = (name: string, field: string) => `${alias}.${name} as "${field}"`;
  return [
    column('id', 'id'),
    column('kind', 'kind'),
    column('parent_id', 'parentId'),
    column('full_path', 'fullPath'),
    column('full_name', 'fullName'),
    column('owner_id', 'ownerId'),
    column('created_at', 'createdAt'),
    column('updated_at', 'updatedAt'),
    ...GROUP_SETTING_LIST.map((s) => column(s.wire, s.key)),
  ].join(', ');
}

/**
 * SQL (for a `namespaces` row aliased `alias`) that is true when the caller may see the group:
 * public ones to everybody, internal ones to signed-in users who are not external (GitLab's
 * `VisibilityLevel.levels_for_user`), private ones to members of the group, of an ancestor
 * (inherited) or of a descendant (GitLab shows the parents of your groups), and everything to
 * administrators. `$uid` is the parameter holding the caller's id (or null).
 */
export function groupVisibleSql(alias: string, actor: Actor | undefined, uid: string): string {
  if (actor?.isAdmin) return 'true';
  if (!actor) return `${alias}.visibility = 'public'`;
  return `(${alias}.visibility = 'public'
    or (${alias}.visibility = 'internal' and ${isInternalUserSql(uid)})
    or ${inheritedGroupLevelSql(`${alias}.id`, uid)} is not null
    or exists (select 1 from namespace_closure c join members m on m.source_type = 'namespace' and m.source_id = c.descendant_id
                where c.ancestor_id = ${alias}.id and c.depth > 0 and m.user_id = ${uid} and ${ACTIVE_MEMBER}))`;
}

/** SQL: the caller's level in the group, inherited from ancestors (the highest counts). */
export function groupAccessSql(alias: string, uid: string): string {
  return `coalesce(${inheritedGroupLevelSql(`${alias}.id`, uid)}, 0)`;
}

/** Finds groups the way GitLab's `:id` does (a number or a URL-encoded full path) and checks access to them. */
@Injectable()
export class NamespaceAccess {
  constructor(private readonly dataSource: DataSource) {}

  /** The group, if the caller may see it; 404 otherwise (never 403 for what one may not see). */
  async visibleGroup(
    idOrPath: string | number,
    actor: Actor | undefined,
  ): Promise<NamespaceRecord & { accessLevel: number }> {
    const byId = typeof idOrPath === 'number' || /^\d{1,9}$/.test(idOrPath);
    const row = await firstRow<NamespaceRecord & { accessLevel: number }>(
      this.dataSource,
      `select ${namespaceRecordSql('n')}, ${groupAccessSql('n', '$2')} as "accessLevel" from namespaces n
        where n.kind = 'group' and ${byId ? 'n.id = $1::int' : 'lower(n.full_path) = lower($1)'}
          and ${groupVisibleSql('n', actor, '$2')}`,
      [String(idOrPath), actor?.id ?? null],
    );
    if (!row) throw new NotFound('Group');
    return { ...row, accessLevel: Number(row.accessLevel) };
  }

  /** 404 when invisible, 403 when visible but the caller's level is below `level` (administrators pass). */
  async requireGroup(idOrPath: string | number, actor: Actor | undefined, level: number) {
    const group = await this.visibleGroup(idOrPath, actor);
    if (!actor?.isAdmin && group.accessLevel < level) throw new Forbidden();
    return group;
  }

  /** Any namespace (personal or group) by id or full path, without visibility rules. */
  async findNamespace(idOrPath: string | number): Promise<NamespaceRecord | undefined> {
    const byId = typeof idOrPath === 'number' || /^\d{1,9}$/.test(idOrPath);
    return firstRow<NamespaceRecord>(
      this.dataSource,
      `select ${namespaceRecordSql('n')} from namespaces n where ${byId ? 'n.id = $1::int' : 'lower(n.full_path) = lower($1)'}`,
      [String(idOrPath)],
    );
  }

  /** The ids of the namespace and of its ancestors. */
  async ancestorIds(namespaceId: number): Promise<number[]> {
    const ancestors = await rows<{ ancestor_id: number }>(
      this.dataSource,
      `select ancestor_id from namespace_closure where descendant_id = $1`,
      [namespaceId],
    );
    return ancestors.map((r) => r.ancestor_id);
  }

  async personalNamespace(userId: number): Promise<NamespaceRecord> {
    const row = await firstRow<NamespaceRecord>(
      this.dataSource,
      `select ${namespaceRecordSql('n')} from namespaces n where n.owner_id = $1 and n.kind = 'user'`,
      [userId],
    );
    if (!row) throw new NotFound('Namespace');
    return row;
  }
}

/**
 * What lies in a namespace besides subgroups: projects, which a context to the right owns. The
 * projects context provides this port, so groups never read its tables.
 */
export abstract class NamespaceContents {
  /** The most open visibility among the namespace's projects, if it has any. */
  abstract widestProjectVisibility(namespaceId: number): Promise<'private' | 'internal' | 'public' | undefined>;
  /** The most open visibility among the projects of any of the namespaces, if they have any. */
  abstract widestProjectVisibilityIn(namespaceIds: number[]): Promise<'private' | 'internal' | 'public' | undefined>;
  /** Whether a project in the namespace has the path (case-insensitively): a group moving there may not. */
  abstract hasProjectPath(namespaceId: number, path: string): Promise<boolean>;
}

/** Users' port: top-level paths live in `namespaces`, shared by personal namespaces and top-level groups. */
@Injectable()
export class NamespaceTopLevelPaths extends TopLevelPaths {
  async countNumbered(db: EntityManager, base: string): Promise<number> {
    const { taken } = await oneRow<{ taken: number }>(
      db,
      `select count(*)::int as taken from namespaces where parent_id is null and lower(path) similar to $1`,
      [`${base}[0-9]*`],
    );
    return taken;
  }
}
