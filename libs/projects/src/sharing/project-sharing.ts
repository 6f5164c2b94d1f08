import { Conflict, NotFound } from '@app/platform';
import { existing, type ProjectWith } from '../projects/existing-project';

/*
 * A project shared with groups: events on the project's stream, kept in the project's state as the
 * access granted by group id; the rows are `project_group_links` (sharing/project-sharing.projection.ts).
 */

export type ProjectSharingEvent =
  | {
      type: 'ProjectSharedWithGroup';
      data: {
        projectId: number;
        linkId: number;
        groupId: number;
        groupAccess: number;
        expiresAt: string | null;
        at: string;
      };
    }
  | { type: 'ProjectUnsharedWithGroup'; data: { projectId: number; groupId: number; at: string } };

/** The access granted to each group the project is shared with, by group id. */
export type ProjectShares = Record<number, number>;

type WithShares = ProjectWith<{ sharedWith: ProjectShares }>;

export function evolveShares(sharedWith: ProjectShares, e: ProjectSharingEvent): ProjectShares {
  switch (e.type) {
    case 'ProjectSharedWithGroup':
      return { ...sharedWith, [e.data.groupId]: e.data.groupAccess };
    case 'ProjectUnsharedWithGroup': {
      const rest = { ...sharedWith };
      delete rest[e.data.groupId];
      return rest;
    }
  }
}

/**
 * GitLab answers model errors of a share with 409 and their first full message: sharing twice, or
 * with the group the project lives in (or one of its ancestors).
 */
export function share(
  s: WithShares,
  link: { linkId: number; groupId: number; groupAccess: number; expiresAt: string | null },
  namespaceAncestry: number[],
  now: Date,
): ProjectSharingEvent[] {
  const p = existing(s);
  if (Object.hasOwn(p.sharedWith, link.groupId)) throw new Conflict('Group already shared with this group');
  if (namespaceAncestry.includes(link.groupId))
    throw new Conflict('Project cannot be shared with the group it is in or one of its ancestors.');
  return [{ type: 'ProjectSharedWithGroup', data: { projectId: p.projectId, ...link, at: now.toISOString() } }];
}

export function unshare(s: WithShares, groupId: number, now: Date): ProjectSharingEvent[] {
  const p = existing(s);
  if (!Object.hasOwn(p.sharedWith, groupId)) throw new NotFound('Group Link');
  return [{ type: 'ProjectUnsharedWithGroup', data: { projectId: p.projectId, groupId, at: now.toISOString() } }];
}
