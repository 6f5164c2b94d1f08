import type { EventHandlers, Recorded } from '@app/platform';
import { removeMember, removeMembersWhere, upsertMember, type GroupEvent } from '@app/groups';
import type { EntityManager } from 'typeorm';
import type { ProjectMemberEvent } from './project-members';

/*
 * The members part of the `projects` read model: a project's members are rows of the groups context's
 * `members` table (source_type 'project'), written through its helpers.
 */
type Projected = ProjectMemberEvent | Extract<GroupEvent, { type: 'GroupDeleted' }>;

async function upsertProjectMember(
  e: Recorded<Extract<ProjectMemberEvent, { type: 'ProjectMemberAdded' | 'ProjectMemberUpdated' }>>,
  db: EntityManager,
) {
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

export const projectMemberHandlers: EventHandlers<Projected> = {
  ProjectMemberAdded: upsertProjectMember,
  ProjectMemberUpdated: upsertProjectMember,
  ProjectMemberRemoved: async ({ data: d }, db) => {
    await removeMember(db, 'project', d.projectId, d.userId);
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
