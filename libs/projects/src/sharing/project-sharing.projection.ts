import type { EventHandlers } from '@app/platform';
import type { ProjectSharingEvent } from './project-sharing';

/** The sharing part of the `projects` read model: `project_group_links`. */
export const projectSharingHandlers: EventHandlers<ProjectSharingEvent> = {
  ProjectSharedWithGroup: async ({ data: d }, db) => {
    await db.query(
      `insert into project_group_links (id, project_id, group_id, group_access, expires_at, created_at) values ($1, $2, $3, $4, $5, $6)`,
      [d.linkId, d.projectId, d.groupId, d.groupAccess, d.expiresAt, d.at],
    );
  },
  ProjectUnsharedWithGroup: async ({ data: d }, db) => {
    await db.query(`delete from project_group_links where project_id = $1 and group_id = $2`, [d.projectId, d.groupId]);
  },
};
