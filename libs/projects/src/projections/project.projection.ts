import {
  CustomAttributeTable,
  dispatch,
  firstRow,
  handledTypes,
  type EventHandlers,
  type Projector,
  type Recorded,
} from '@app/platform';
import { removeMember, removeMembers, removeMembersWhere, upsertMember, type GroupEvent } from '@app/groups';
import type { UserEvent } from '@app/users';
import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { ProjectEvent, StarEvent } from '../domain/project';
import { SETTINGS, settingsFrom, settingValue } from '../domain/project-settings';
import type { RepositoryStatistics } from '../pushes/repository-push';

/** `project_custom_attributes`, written here and read by ProjectQueries. */
export const PROJECT_CUSTOM_ATTRIBUTES = new CustomAttributeTable('project_custom_attributes', 'project_id');

export const PROJECT_TABLES = [
  'projects',
  'project_stars',
  'project_group_links',
  'project_custom_attributes',
] as const;

/**
 * Every project event but those other projectors keep (releases, protected branches; a housekeeping
 * request changes no read model), stars, and the deletions of groups and users that reach projects.
 */
type Projected =
  | Exclude<
      ProjectEvent,
      { type: 'ProjectHousekeepingRequested' | `ProjectRelease${string}` | `ProtectedBranch${string}` }
    >
  | StarEvent
  | Extract<GroupEvent | UserEvent, { type: 'GroupDeleted' | 'UserDeleted' }>;
type On<T extends Projected['type']> = Recorded<Extract<Projected, { type: T }>>;

/** Each setting's column by its key in the events (`features` keys included: they are distinct). */
const COLUMN_OF: Record<string, string> = Object.fromEntries(SETTINGS.map((s) => [s.key, s.wire]));

async function insertProject(e: On<'ProjectCreated' | 'ProjectForked'>, db: EntityManager): Promise<void> {
  const d = e.data;
  const forkedFromId = e.type === 'ProjectForked' ? e.data.forkedFromId : null;
  // An event older than a setting has its default (settingsFrom), as the migration adding the column does.
  const settings = settingsFrom(d);
  const columns = [
    'id',
    'namespace_id',
    'creator_id',
    'runners_token',
    'created_at',
    'updated_at',
    'last_activity_at',
    'forked_from_id',
    'import_status',
    ...SETTINGS.map((s) => s.wire),
  ];
  const values = [
    d.projectId,
    d.namespaceId,
    d.creatorId,
    d.runnersToken,
    d.at,
    d.at,
    d.at,
    forkedFromId,
    forkedFromId === null ? 'none' : 'scheduled',
    ...SETTINGS.map((s) => settingValue(s, settings)),
  ];
  await db.query(
    `insert into projects (${columns.join(', ')}) values (${values.map((_, i) => `$${i + 1}`).join(', ')})`,
    values,
  );
  if (forkedFromId !== null) await recountForks(db, forkedFromId);
}

async function relateFork(
  e: On<'ProjectForkRelationCreated' | 'ProjectForkRelationRemoved'>,
  db: EntityManager,
): Promise<void> {
  const created = e.type === 'ProjectForkRelationCreated';
  await db.query(`update projects set forked_from_id = $2 where id = $1`, [
    e.data.projectId,
    created ? e.data.forkedFromId : null,
  ]);
  await recountForks(db, e.data.forkedFromId);
}

async function setArchived(e: On<'ProjectArchived' | 'ProjectUnarchived'>, db: EntityManager): Promise<void> {
  await db.query(`update projects set archived = $2, updated_at = $3, last_activity_at = $3 where id = $1`, [
    e.data.projectId,
    e.type === 'ProjectArchived',
    e.data.at,
  ]);
}

async function upsertProjectMember(e: On<'ProjectMemberAdded' | 'ProjectMemberUpdated'>, db: EntityManager) {
  const d = e.data;
  await upsertMember(db, {
    sourceType: 'project',
    sourceId: d.projectId,
    userId: d.userId,
    accessLevel: d.accessLevel,
    expiresAt: d.expiresAt,
    createdBy: e.metadata.actorId ?? null,
    at: d.at,
  });
}

const on: EventHandlers<Projected> = {
  ProjectCreated: insertProject,
  ProjectForked: insertProject,
  ProjectImportStatusChanged: async ({ data: d }, db) => {
    await db.query(`update projects set import_status = $2, import_error = $3 where id = $1`, [
      d.projectId,
      d.status,
      d.error,
    ]);
    if (d.statistics) await setStatistics(db, d.projectId, d.statistics);
  },
  ProjectHousekeepingFinished: async ({ data: d }, db) => {
    if (d.statistics) await setStatistics(db, d.projectId, d.statistics);
  },
  // Keyed on the project in the event's data, not its stream, wherever pushes are appended.
  RepositoryPushed: async ({ data: d }, db) => {
    // GitLab moves `last_activity_at` on a push (not `updated_at`), and the first push names the default branch.
    await db.query(
      `update projects set last_activity_at = $2, default_branch = coalesce($3, default_branch), commit_count = $4, repository_size = $5
            where id = $1`,
      [d.projectId, d.at, d.defaultBranch, d.statistics.commitCount, d.statistics.repositorySize],
    );
  },
  ProjectForkRelationCreated: relateFork,
  ProjectForkRelationRemoved: relateFork,
  ProjectUpdated: async ({ data: d }, db) => {
    const sets: string[] = [];
    const values: unknown[] = [d.projectId, d.at];
    const set = (column: string, v: unknown) => sets.push(`${column} = $${values.push(v)}`);
    for (const [k, v] of Object.entries(d.changes)) if (k !== 'features') set(COLUMN_OF[k], v);
    for (const [k, v] of Object.entries(d.changes.features ?? {})) set(COLUMN_OF[k], v);
    await db.query(
      `update projects set ${[...sets, 'updated_at = $2', 'last_activity_at = $2'].join(', ')} where id = $1`,
      values,
    );
  },
  ProjectAvatarChanged: async ({ data: d }, db) => {
    await db.query(`update projects set avatar = $2, updated_at = $3, last_activity_at = $3 where id = $1`, [
      d.projectId,
      d.avatar,
      d.at,
    ]);
  },
  ProjectArchived: setArchived,
  ProjectUnarchived: setArchived,
  ProjectTransferred: async ({ data: d }, db) => {
    await db.query(`update projects set namespace_id = $2, updated_at = $3, last_activity_at = $3 where id = $1`, [
      d.projectId,
      d.namespaceId,
      d.at,
    ]);
  },
  ProjectDeleted: async ({ data: d }, db) => {
    await removeMembers(db, 'project', d.projectId);
    const gone = await firstRow<{ forked_from_id: number | null }>(
      db,
      `select forked_from_id from projects where id = $1`,
      [d.projectId],
    );
    await db.query(`delete from projects where id = $1`, [d.projectId]);
    if (gone?.forked_from_id) await recountForks(db, gone.forked_from_id);
  },
  ProjectMemberAdded: upsertProjectMember,
  ProjectMemberUpdated: upsertProjectMember,
  ProjectMemberRemoved: async ({ data: d }, db) => {
    await removeMember(db, 'project', d.projectId, d.userId);
  },
  ProjectSharedWithGroup: async ({ data: d }, db) => {
    await db.query(
      `insert into project_group_links (id, project_id, group_id, group_access, expires_at, created_at) values ($1, $2, $3, $4, $5, $6)`,
      [d.linkId, d.projectId, d.groupId, d.groupAccess, d.expiresAt, d.at],
    );
  },
  ProjectUnsharedWithGroup: async ({ data: d }, db) => {
    await db.query(`delete from project_group_links where project_id = $1 and group_id = $2`, [d.projectId, d.groupId]);
  },
  ProjectCustomAttributeSet: async ({ data: d }, db) => {
    await PROJECT_CUSTOM_ATTRIBUTES.set(db, d.projectId, d.key, d.value);
  },
  ProjectCustomAttributeRemoved: async ({ data: d }, db) => {
    await PROJECT_CUSTOM_ATTRIBUTES.remove(db, d.projectId, d.key);
  },
  ProjectStarred: async ({ data: d }, db) => {
    await db.query(
      `insert into project_stars (project_id, user_id, created_at) values ($1, $2, $3) on conflict do nothing`,
      [d.projectId, d.userId, d.at],
    );
    await recountStars(db, d.projectId);
  },
  ProjectUnstarred: async ({ data: d }, db) => {
    await db.query(`delete from project_stars where project_id = $1 and user_id = $2`, [d.projectId, d.userId]);
    await recountStars(db, d.projectId);
  },
  UserDeleted: async ({ data: d }, db) => {
    // Stars go by cascade with the user row; the counts must follow.
    await db.query(
      `update projects p set star_count = (select count(*) from project_stars s where s.project_id = p.id)
            where p.star_count <> (select count(*) from project_stars s where s.project_id = p.id)`,
    );
    // A soft delete hands the user's contributions to the ghost user; a hard delete leaves no author.
    await db.query(`update projects set creator_id = $2 where creator_id = $1`, [d.userId, d.ghostUserId ?? null]);
  },
  GroupDeleted: async (_e, db) => {
    // The namespaces' cascade removes the projects; their memberships have no foreign key.
    await removeMembersWhere(
      db,
      'project',
      (projectId) => `not exists (select 1 from projects p where p.id = ${projectId})`,
    );
  },
};

async function setStatistics(db: EntityManager, projectId: number, s: RepositoryStatistics): Promise<void> {
  await db.query(`update projects set commit_count = $2, repository_size = $3 where id = $1`, [
    projectId,
    s.commitCount,
    s.repositorySize,
  ]);
}

async function recountForks(db: EntityManager, projectId: number): Promise<void> {
  await db.query(
    `update projects set forks_count = (select count(*) from projects f where f.forked_from_id = $1) where id = $1`,
    [projectId],
  );
}

async function recountStars(db: EntityManager, projectId: number): Promise<void> {
  await db.query(
    `update projects set star_count = (select count(*) from project_stars where project_id = $1) where id = $1`,
    [projectId],
  );
}

/** Projects and their stars, shares, members and custom attributes. */
@Injectable()
export class ProjectProjection implements Projector<Projected> {
  readonly name = 'projects';
  readonly tables = PROJECT_TABLES;
  readonly eventTypes = handledTypes(on);

  apply(e: Recorded<Projected>, db: EntityManager): Promise<void> {
    return dispatch(on, e, db);
  }
}
