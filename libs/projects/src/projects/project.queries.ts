import {
  EventStore,
  firstRow,
  Forbidden,
  NotFound,
  oneRow,
  PreparedStatements,
  rows,
  type Actor,
  type PageParams,
} from '@app/platform';
import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import {
  ACCESS,
  groupMemberUserIdsSql,
  memberUserIdsSql,
  namespaceColumnsSql,
  namespaceJoinSql,
  personalNamespaceOfSql,
  personalOwnerIdSql,
} from '@app/groups';
import { userJoinSql, usersFromSql } from '@app/users';
import type { SharedGroup } from '../sharing/project-sharing.queries';
import type { ProjectSettingColumns } from './project-settings';
import { PROJECT_CUSTOM_ATTRIBUTES } from './project.projection';
import {
  authorizedProjectIdsSql,
  directGroupMemberLevelSql,
  projectAccessSql,
  projectMemberLevelSql,
  projectsVisibleSql,
  projectVisibleSql,
} from '../access/project-access';

/**
 * A project as the serializers need it: the row (its settings' columns typed by project-settings.ts),
 * its namespace, its personal owner and the caller's levels.
 */
export interface ProjectRow extends ProjectSettingColumns {
  id: number;
  namespace_id: number;
  archived: boolean;
  creator_id: number | null;
  import_status: string;
  import_error: string | null;
  /** The avatar's stored file name, null without one. */
  avatar: string | null;
  forked_from_id: number | null;
  star_count: number;
  forks_count: number;
  runners_token: string;
  repository_size: string;
  commit_count: number;
  created_at: Date;
  updated_at: Date;
  last_activity_at: Date;
  ns_name: string;
  ns_path: string;
  ns_kind: 'user' | 'group';
  ns_full_path: string;
  ns_full_name: string;
  ns_parent_id: number | null;
  ns_visibility: 'private' | 'internal' | 'public';
  owner_id: number | null;
  owner_name: string | null;
  owner_created_at: Date | null;
  /** The caller's direct project membership level, direct membership level of the project's group, and effective level. */
  project_access: number | null;
  group_access: number | null;
  access: number;
  /** The groups it is shared with; null in rows read with the lean columns (`sharedWith` reads them for many rows). */
  shared_with: SharedGroup[] | null;
}

/** A project as the operator's storage check sees it. */
declare const checkedAt: unique symbol;

/**
 * A project whose caller `ProjectQueries.require` found to hold level `L` (or to be an administrator):
 * the proof a command takes instead of deciding access again. Routes where GitLab decides access
 * before it validates the parameters (a `before { authorize_admin_project }`, so a 403 comes before a
 * 400) require the project first and hand the command this; the command's type refuses a row that
 * was checked at another level, or not at all.
 */
export type AuthorizedProject<L extends number> = ProjectRow & { readonly [checkedAt]: L };

export interface ProjectSummary {
  id: number;
  fullPath: string;
  importStatus: string;
}

/** A user with access to a project, as `/projects/:id/users` reads it (the UserBasic columns). */
export interface ProjectUserRow {
  id: number;
  name: string;
  username: string;
  state: string;
  avatar: string | null;
  email: string;
}

export interface ProjectListFilters {
  namespaceId?: number;
  /** Personal projects of this user (`GET /users/:id/projects`). */
  ownerId?: number;
  forkedFromId?: number;
  archived?: boolean;
  visibility?: string;
  search?: string;
  owned?: boolean;
  membership?: boolean;
  starred?: boolean;
  withIssuesEnabled?: boolean;
  withMergeRequestsEnabled?: boolean;
  customAttributes?: Record<string, string>;
  /** Keyset positions: only ids below, or above, this one. */
  idBefore?: number;
  idAfter?: number;
  orderBy: 'id' | 'name' | 'path' | 'created_at' | 'updated_at' | 'last_activity_at';
  sort: 'asc' | 'desc';
}

/**
 * The groups a project is shared with, as a JSON array in the project's own row: one statement
 * answers a project and its shares (a second one per request was a quarter of `GET /projects/:id`'s
 * time with a token, each statement costing a round trip to PostgreSQL).
 */
const SHARED_WITH = `(select coalesce(json_agg(json_build_object('project_id', l.project_id, 'group_id', l.group_id, 'group_name', g.name,
    'group_access_level', l.group_access) order by l.id), '[]'::json)
   from project_group_links l ${namespaceJoinSql('g', 'l.group_id')} where l.project_id = p.id)`;

/** Columns of a ProjectRow, for a `projects p` joined with `namespaces n`; `$1` is the caller's id. */
const SELECT = `p.*, ${namespaceColumnsSql('n')}, o.id as owner_id, o.name as owner_name, o.created_at as owner_created_at,
  ${projectMemberLevelSql('p', '$1')} as project_access, ${directGroupMemberLevelSql('p', '$1')} as group_access, ${projectAccessSql('p', '$1')} as access,
  ${SHARED_WITH} as shared_with`;
/**
 * The same columns without the caller's levels, for answers that show no `permissions` (projects
 * embedded in a group): three correlated subqueries a row fewer, which a 1,000-project group feels.
 */
const SELECT_LEAN = `p.*, ${namespaceColumnsSql('n')}, o.id as owner_id, o.name as owner_name, o.created_at as owner_created_at,
  null::int as project_access, null::int as group_access, 0 as access, null::json as shared_with, $1::int as caller`;
/** Projects with their namespace (`n`) and, for a personal namespace, its owner (`o`). */
const FROM = `from projects p ${namespaceJoinSql('n', 'p.namespace_id')} ${userJoinSql('o', 'n.owner_id', 'left join')} and n.kind = 'user'`;

type CallerClass = 'anonymous' | 'user' | 'admin';
const callerClass = (actor: Actor | undefined): CallerClass =>
  !actor ? 'anonymous' : actor.isAdmin ? 'admin' : 'user';
/**
 * `getVisible`'s statement per caller class, by id and by full path: six constant texts built once
 * (every project route reads one; building its 3 KB anew each time cost the name cache a hash per request).
 */
const VISIBLE_SQL = (() => {
  const texts = {} as Record<`${CallerClass} ${'id' | 'path'}`, string>;
  const classes: [CallerClass, Actor | undefined][] = [
    ['anonymous', undefined],
    ['user', { isAdmin: false } as Actor],
    ['admin', { isAdmin: true } as Actor],
  ];
  for (const [kind, actor] of classes) {
    // By path: the namespace's full path and the project's own path, each on its unique index. (Matching
    // `lower(n.full_path || '/' || p.path)` scanned every project: 8 ms a git request at 16,000 projects.)
    for (const [by, match] of [
      ['id', 'p.id = $2::int'],
      ['path', 'lower(n.full_path) = lower($2) and lower(p.path) = lower($3)'],
    ] as const) {
      // An anonymous caller has no levels: the lean columns spare the planner and executor the access subqueries.
      texts[`${kind} ${by}`] =
        `select ${actor ? SELECT : SELECT_LEAN} ${FROM} where ${match} and ${projectVisibleSql('p', actor, '$1')}`;
    }
  }
  return texts;
})();

const SYSTEM_BY_ID_SQL = `select ${SELECT_LEAN} ${FROM} where p.id = $2`;
const SYSTEM_BY_PATH_SQL = `select ${SELECT_LEAN} ${FROM} where lower(n.full_path) = lower($2) and lower(p.path) = lower($3)`;

const likeEscape = (s: string) => `%${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

@Injectable()
export class ProjectQueries {
  constructor(
    private readonly dataSource: DataSource,
    private readonly store: EventStore,
    private readonly prepared: PreparedStatements,
  ) {}

  /** The project if the caller may see it (404 `Project Not Found` otherwise), by id or URL-encoded full path. */
  async getVisible(idOrPath: string | number, actor: Actor | undefined): Promise<ProjectRow> {
    const byId = typeof idOrPath === 'number' || /^\d{1,9}$/.test(idOrPath);
    const path = String(idOrPath);
    const slash = path.lastIndexOf('/');
    if (!byId && slash <= 0) throw new NotFound('Project'); // a project's full path always has its namespace's
    const params = byId ? [actor?.id ?? null, path] : [actor?.id ?? null, path.slice(0, slash), path.slice(slash + 1)];
    // A named statement: its plan (5 ms, where running it takes 0.2) is kept per connection.
    const row = await this.prepared.firstRow<ProjectRow>(
      VISIBLE_SQL[`${callerClass(actor)} ${byId ? 'id' : 'path'}`],
      params,
    );
    if (!row) throw new NotFound('Project');
    return row;
  }

  /** A project whatever its visibility, without anyone's levels: for workers acting for the system. */
  async findForSystem(id: number): Promise<ProjectRow | undefined> {
    return this.prepared.firstRow<ProjectRow>(SYSTEM_BY_ID_SQL, [null, id]);
  }

  /**
   * A project by its full path whatever its visibility, without anyone's levels: for a caller that is
   * no user (a deploy key), whose access the caller decides from the row.
   */
  async findByPathForSystem(fullPath: string): Promise<ProjectRow | undefined> {
    const slash = fullPath.lastIndexOf('/');
    if (slash <= 0) return undefined;
    return this.prepared.firstRow<ProjectRow>(SYSTEM_BY_PATH_SQL, [
      null,
      fullPath.slice(0, slash),
      fullPath.slice(slash + 1),
    ]);
  }

  /** 404 when invisible, 403 when visible but the caller's level is below `level` (administrators pass). */
  async require<L extends number>(
    idOrPath: string | number,
    actor: Actor | undefined,
    level: L,
  ): Promise<AuthorizedProject<L>> {
    return this.authorize(await this.getVisible(idOrPath, actor), actor, level);
  }

  /** `require`'s check of a row already read (visible to `actor`): 403 below `level`, administrators pass. */
  authorize<L extends number>(project: ProjectRow, actor: Actor | undefined, level: L): AuthorizedProject<L> {
    if (!actor?.isAdmin && project.access < level) throw new Forbidden();
    return project as AuthorizedProject<L>;
  }

  /**
   * `count: false` skips the count (an embedding that shows every row needs no total); `lean: true`
   * leaves out the caller's levels (answers without `permissions` or admin-only fields).
   */
  async list(
    actor: Actor | undefined,
    f: ProjectListFilters,
    page: PageParams,
    opts: { count?: boolean; lean?: boolean } = {},
  ): Promise<{ rows: ProjectRow[]; total: number }> {
    const params: unknown[] = [actor?.id ?? null];
    const p = (v: unknown) => `$${params.push(v)}`;
    const where = [projectsVisibleSql('p', actor, '$1')];
    if (f.namespaceId !== undefined) where.push(`p.namespace_id = ${p(f.namespaceId)}`);
    if (f.ownerId !== undefined) where.push(personalNamespaceOfSql('n', p(f.ownerId)));
    if (f.forkedFromId !== undefined) where.push(`p.forked_from_id = ${p(f.forkedFromId)}`);
    if (f.archived !== undefined) where.push(`p.archived = ${p(f.archived)}`);
    if (f.visibility) where.push(`p.visibility = ${p(f.visibility)}`);
    if (f.search) {
      const t = p(likeEscape(f.search));
      // GitLab's Project.search: path, name, description, or the namespace's name.
      where.push(`(p.name ilike ${t} or p.path ilike ${t} or p.description ilike ${t} or n.name ilike ${t})`);
    }
    if (f.owned) {
      // GitLab's owned_projects: the caller's personal projects and those of groups they own directly.
      where.push(
        `((${personalNamespaceOfSql('n', '$1')}) or ${directGroupMemberLevelSql('p', '$1')} = ${ACCESS.owner})`,
      );
    }
    if (f.membership) where.push(`p.id in ${authorizedProjectIdsSql('$1')}`);
    if (f.starred) where.push(`exists (select 1 from project_stars s where s.project_id = p.id and s.user_id = $1)`);
    if (f.idBefore !== undefined) where.push(`p.id < ${p(f.idBefore)}`);
    if (f.idAfter !== undefined) where.push(`p.id > ${p(f.idAfter)}`);
    if (f.withIssuesEnabled) where.push(`p.issues_enabled`);
    if (f.withMergeRequestsEnabled) where.push(`p.merge_requests_enabled`);
    for (const [key, value] of Object.entries(f.customAttributes ?? {}))
      where.push(
        `exists (select 1 from project_custom_attributes a where a.project_id = p.id and a.key = ${p(key)} and a.value = ${p(value)})`,
      );
    const sql = where.join(' and ');
    // The filters above that read `n.` (the namespace): a new one must be named here too, or the count fails.
    const namespaceFilter = f.ownerId !== undefined || Boolean(f.search) || Boolean(f.owned);
    // `$1` (the caller) is named even where no rule needs it (administrators), so PostgreSQL can type it.
    // The count joins namespaces only when a filter reads them: the join cost the 10,000-project
    // count half its time. (The owner join is never needed to count.)
    const countFrom = namespaceFilter
      ? `from projects p ${namespaceJoinSql('n', 'p.namespace_id')}`
      : `from projects p`;
    const { total } =
      opts.count === false
        ? { total: -1 }
        : await oneRow<{ total: number }>(
            this.dataSource,
            `select count(*)::int as total, $1::int as caller ${countFrom} where ${sql}`,
            params,
          );
    const order =
      f.orderBy === 'name' || f.orderBy === 'path'
        ? `lower(p.${f.orderBy}) ${f.sort}, p.id ${f.sort}`
        : `p.${f.orderBy} ${f.sort}, p.id ${f.sort}`;
    const projects = await rows<ProjectRow>(
      this.dataSource,
      `select ${opts.lean ? SELECT_LEAN : SELECT} ${FROM} where ${sql} order by ${order} offset ${p(page.offset)} limit ${p(page.perPage)}`,
      params,
    );
    return { rows: projects, total };
  }

  /** Projects shared with a group and visible to the caller (`shared_projects` of a group). */
  async sharedWithGroup(groupId: number, actor: Actor | undefined): Promise<ProjectRow[]> {
    return rows<ProjectRow>(
      this.dataSource,
      `select ${SELECT} ${FROM} where p.id in (select project_id from project_group_links where group_id = $2)
         and ${projectsVisibleSql('p', actor, '$1')} order by p.id`,
      [actor?.id ?? null, groupId],
    );
  }

  /** Every user with access to the project (members, group members, shares), GitLab's `/projects/:id/users`. */
  async users(
    projectId: number,
    search: string | undefined,
    page: PageParams,
  ): Promise<{ rows: ProjectUserRow[]; total: number }> {
    const params: unknown[] = [projectId];
    const filter = search
      ? `and (u.name ilike $${params.push(likeEscape(search))} or u.username ilike $${params.length})`
      : '';
    // Expired memberships and shares grant nothing, so they do not make a user part of the team.
    const namespaceId = `(select p.namespace_id from projects p where p.id = $1)`;
    const base = `from ${usersFromSql('u')} where u.id in (
        ${memberUserIdsSql('project', '$1')}
        union ${groupMemberUserIdsSql(namespaceId)}
        union ${personalOwnerIdSql(namespaceId)}
        union ${groupMemberUserIdsSql(
          `(select l.group_id from project_group_links l
             where l.project_id = $1 and (l.expires_at is null or l.expires_at > current_date))`,
          false,
        )}
      ) ${filter}`;
    const { total } = await oneRow<{ total: number }>(this.dataSource, `select count(*)::int as total ${base}`, params);
    const users = await rows<ProjectUserRow>(
      this.dataSource,
      `select u.* ${base} order by u.id offset $${params.length + 1} limit $${params.length + 2}`,
      [...params, page.offset, page.perPage],
    );
    return { rows: users, total };
  }

  /** Which of these projects exist, whatever their visibility (for administrators' relations). */
  async existing(ids: number[]): Promise<{ id: number }[]> {
    return rows<{ id: number }>(this.dataSource, `select id from projects where id = any($1::int[])`, [ids]);
  }

  /** The fork sources of `projects` that the caller may see, by id (one statement, none when none is a fork). */
  async forkSources(projects: ProjectRow[], actor: Actor | undefined): Promise<Map<number, ProjectRow>> {
    const ids = [...new Set(projects.map((r) => r.forked_from_id).filter((id): id is number => id !== null))];
    if (!ids.length) return new Map();
    const sources = await rows<ProjectRow>(
      this.dataSource,
      `select ${SELECT_LEAN} ${FROM} where p.id = any($2::int[]) and ${projectVisibleSql('p', actor, '$1')}`,
      [actor?.id ?? null, ids],
    );
    return new Map(sources.map((r) => [r.id, r]));
  }

  /**
   * Projects that existed and exist no more: created (or forked) per the event log, absent from the
   * read model. A project whose creation has not committed is in neither, so it is never listed.
   */
  async goneProjectIds(): Promise<number[]> {
    const ids = await this.store.dataValues(['ProjectCreated', 'ProjectForked'], 'projectId');
    if (!ids.length) return [];
    const gone = await rows<{ id: number }>(
      this.dataSource,
      `select g.id from unnest($1::int[]) as g(id) where not exists (select 1 from projects p where p.id = g.id)`,
      [ids],
    );
    return gone.map((r) => r.id);
  }

  /**
   * Every project's id, full path and import state (a fork's copy: `scheduled`, `started`,
   * `finished`, `failed`; `none` for a project made empty), in id order: for the storage check.
   */
  async everyProject(): Promise<ProjectSummary[]> {
    const found = await rows<{ id: number; path: string; ns_full_path: string; import_status: string }>(
      this.dataSource,
      `select p.id, p.path, p.import_status, ${namespaceColumnsSql('n')}
         from projects p ${namespaceJoinSql('n', 'p.namespace_id')} order by p.id`,
    );
    return found.map((r) => ({ id: r.id, fullPath: `${r.ns_full_path}/${r.path}`, importStatus: r.import_status }));
  }

  /** The summed repository size of each namespace's own projects, for many namespaces in one statement. */
  async repositorySizes(namespaceIds: number[]): Promise<Map<number, number>> {
    const sizes = await rows<{ namespace_id: number; size: string }>(
      this.dataSource,
      `select namespace_id, sum(repository_size)::bigint as size from projects where namespace_id = any($1::int[]) group by namespace_id`,
      [namespaceIds],
    );
    return new Map(sizes.map((r) => [r.namespace_id, Number(r.size)]));
  }

  /**
   * `takenNameOrPath` for a new project in a personal namespace, and how many projects the namespace
   * holds (its owner's personal projects, which their `projects_limit` bounds): one round trip where a
   * creation asked two.
   */
  async countAndTaken(
    namespaceId: number,
    fields: { name?: string; path?: string },
  ): Promise<{ count: number; name: boolean; path: boolean }> {
    return oneRow<{ count: number; name: boolean; path: boolean }>(
      this.dataSource,
      `select count(*)::int as count, coalesce(bool_or(lower(name) = lower($2::text)), false) as name,
              coalesce(bool_or(lower(path) = lower($3::text)), false) as path
         from projects where namespace_id = $1`,
      [namespaceId, fields.name ?? null, fields.path ?? null],
    );
  }

  /**
   * Whether another project of the namespace (not `exceptProjectId`) has the name, or the path,
   * case-insensitively as the unique indexes compare them.
   */
  async takenNameOrPath(
    namespaceId: number,
    fields: { name?: string; path?: string },
    exceptProjectId?: number,
  ): Promise<{ name: boolean; path: boolean }> {
    return oneRow<{ name: boolean; path: boolean }>(
      this.dataSource,
      `select coalesce(bool_or(lower(name) = lower($2::text)), false) as name, coalesce(bool_or(lower(path) = lower($3::text)), false) as path
         from projects where namespace_id = $1 and id <> coalesce($4::int, 0) and (lower(name) = lower($2::text) or lower(path) = lower($3::text))`,
      [namespaceId, fields.name ?? null, fields.path ?? null, exceptProjectId ?? null],
    );
  }

  customAttributes(projectId: number): Promise<{ key: string; value: string }[]> {
    return PROJECT_CUSTOM_ATTRIBUTES.list(this.dataSource, projectId);
  }

  customAttribute(projectId: number, key: string): Promise<{ key: string; value: string }> {
    return PROJECT_CUSTOM_ATTRIBUTES.get(this.dataSource, projectId, key);
  }
}

/** The project's avatar file name in the read model (null without one, undefined without the project), read in `db`'s transaction. */
export async function currentAvatar(db: EntityManager, projectId: number): Promise<string | null | undefined> {
  return (await firstRow<{ avatar: string | null }>(db, `select avatar from projects where id = $1`, [projectId]))
    ?.avatar;
}
