import { Conflict, Invalid, NotFound } from '@app/platform';
import { ACCESS, PROJECT_ACCESS_LEVELS } from '@app/groups';
import { existing, type ProjectWith } from '../projects/existing-project';

/*
 * A project's members: events on the project's stream (`project-<id>`), kept in the project's state
 * as level by user. The rows are the groups context's `members` table (source_type 'project'),
 * written through its exported helpers by the projection part (members/project-members.projection.ts).
 */

export type ProjectMemberEvent =
  | {
      type: 'ProjectMemberAdded';
      data: { projectId: number; userId: number; accessLevel: number; expiresAt: string | null; at: string };
    }
  | {
      type: 'ProjectMemberUpdated';
      data: { projectId: number; userId: number; accessLevel: number; expiresAt: string | null; at: string };
    }
  | { type: 'ProjectMemberRemoved'; data: { projectId: number; userId: number; at: string } };

/** Each member's access level by user id. */
export type ProjectMembers = Record<number, number>;

type WithMembers = ProjectWith<{ members: ProjectMembers }>;

export function evolveMembers(members: ProjectMembers, e: ProjectMemberEvent): ProjectMembers {
  switch (e.type) {
    case 'ProjectMemberAdded':
    case 'ProjectMemberUpdated':
      return { ...members, [e.data.userId]: e.data.accessLevel };
    case 'ProjectMemberRemoved': {
      const rest = { ...members };
      delete rest[e.data.userId];
      return rest;
    }
  }
}

/** GitLab 10.x adds the owner of a personal namespace as a master (40) of a project created or forked there. */
export function personalOwnerAdded(projectId: number, userId: number, at: string): ProjectMemberEvent {
  return {
    type: 'ProjectMemberAdded',
    data: { projectId, userId, accessLevel: ACCESS.maintainer, expiresAt: null, at },
  };
}

/** GitLab's ProjectMember validation: guest to maintainer; owner (50) is a group level only. */
const checkMemberLevel = (accessLevel: number) => {
  if (!PROJECT_ACCESS_LEVELS.includes(accessLevel))
    throw new Invalid({ access_level: ['is not included in the list'] });
};

export function addMember(
  s: WithMembers,
  userId: number,
  accessLevel: number,
  expiresAt: string | null,
  now: Date,
): ProjectMemberEvent[] {
  const p = existing(s);
  if (Object.hasOwn(p.members, userId)) throw new Conflict('Member already exists');
  checkMemberLevel(accessLevel);
  return [
    {
      type: 'ProjectMemberAdded',
      data: { projectId: p.projectId, userId, accessLevel, expiresAt, at: now.toISOString() },
    },
  ];
}

export function updateMember(
  s: WithMembers,
  userId: number,
  accessLevel: number,
  expiresAt: string | null,
  now: Date,
): ProjectMemberEvent[] {
  const p = existing(s);
  if (!Object.hasOwn(p.members, userId)) throw new NotFound();
  checkMemberLevel(accessLevel);
  return [
    {
      type: 'ProjectMemberUpdated',
      data: { projectId: p.projectId, userId, accessLevel, expiresAt, at: now.toISOString() },
    },
  ];
}

export function removeMember(s: WithMembers, userId: number, now: Date): ProjectMemberEvent[] {
  const p = existing(s);
  if (!Object.hasOwn(p.members, userId)) throw new NotFound();
  return [{ type: 'ProjectMemberRemoved', data: { projectId: p.projectId, userId, at: now.toISOString() } }];
}
