import {
  CustomAttributeTable,
  dispatch,
  firstRow,
  handledTypes,
  type EventHandlers,
  type Projector,
  type Recorded,
} from '@app/platform';
import { removeMembers, type GroupEvent } from '@app/groups';
import type { UserEvent } from '@app/users';
import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { forkHandlers } from '../forks/fork.projection';
import type { StarEvent } from '../forks/star';
import { projectMemberHandlers } from '../members/project-members.projection';
import { repositoryPushHandlers } from '../pushes/repository-push.projection';
import { housekeepingHandlers } from '../repository-jobs/housekeeping.projection';
import { projectSharingHandlers } from '../sharing/project-sharing.projection';
import type { ProjectEvent, ProjectLifeEvent } from './project';
import { insertProjectRow, recountForks } from './project-rows';
import { SETTINGS } from './project-settings';

/** `project_custom_attributes`, written here and read by ProjectQueries. */
export const PROJECT_CUSTOM_ATTRIBUTES = new CustomAttributeTable('project_custom_attributes', 'project_id');

export const PROJECT_TABLES = [
  'projects',
  'project_stars',
  'project_group_links',
  'project_custom_attributes',
  'recorded_refs',
] as const;

/**
 * The `projects` read model, composed of its capabilities' parts (members/, sharing/, forks/,
 * pushes/, repository-jobs/ each export theirs beside their decisions): every project event but those
 * other projectors keep (protected branches and tags; a housekeeping request changes no row), stars,
 * and the deletions of groups and users that reach projects.
 */
type Projected =
  | Exclude<
      ProjectEvent,
      { type: 'ProjectHousekeepingRequested' | `ProtectedBranch${string}` | `ProtectedTag${string}` }
    >
  | StarEvent
  | Extract<GroupEvent | UserEvent, { type: 'GroupDeleted' | 'UserDeleted' }>;

type OwnProjected = ProjectLifeEvent | Extract<UserEvent, { type: 'UserDeleted' }>;
type On<T extends OwnProjected['type']> = Recorded<Extract<OwnProjected, { type: T }>>;

/** Each setting's column by its key in the events (`features` keys included: they are distinct). */
const COLUMN_OF: Record<string, string> = Object.fromEntries(SETTINGS.map((s) => [s.key, s.wire]));

async function setArchived(e: On<'ProjectArchived' | 'ProjectUnarchived'>, db: EntityManager): Promise<void> {
  await db.query(`update projects set archived = $2, updated_at = $3, last_activity_at = $3 where id = $1`, [
    e.data.projectId,
    e.type === 'ProjectArchived',
    e.data.at,
  ]);
}

/** The project's own part: its row, and what a user's deletion changes in it. */
const projectLifeHandlers: EventHandlers<OwnProjected> = {
  ProjectCreated: async ({ data: d }, db) => {
    await insertProjectRow(db, d, null);
  },
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
  ProjectCustomAttributeSet: async ({ data: d }, db) => {
    await PROJECT_CUSTOM_ATTRIBUTES.set(db, d.projectId, d.key, d.value);
  },
  ProjectCustomAttributeRemoved: async ({ data: d }, db) => {
    await PROJECT_CUSTOM_ATTRIBUTES.remove(db, d.projectId, d.key);
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
};

const on: EventHandlers<Projected> = {
  ...projectLifeHandlers,
  ...projectMemberHandlers,
  ...projectSharingHandlers,
  ...forkHandlers,
  ...housekeepingHandlers,
  ...repositoryPushHandlers,
};

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
