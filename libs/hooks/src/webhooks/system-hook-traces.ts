import type { Decider, DomainEvent } from '@app/platform';
import type { GroupEvent } from '@app/groups';
import type { ProjectEvent } from '@app/projects';
import type { UserEvent } from '@app/users';

/*
 * What a system hook payload needs of a project, group or user that its read model may no longer
 * hold: a deleted project's name and path, a removed member's level, a renamed project's old path,
 * a removed SSH key's text. The events still hold it, so the system fan-out folds the entity's
 * stream (the public event types of the other contexts, read-only, through `UnitOfWork.load`) with
 * these small deciders of its own. Nothing is stored: the fold runs once per system hook event.
 */

/** A value and when it became so (the event's `at`), oldest first. */
type History<T> = { at: string; value: T }[];

/** The value before the change recorded at `at` with `value` (the event being announced). */
export function valueBefore<T>(history: History<T>, at: string, value: T): T | undefined {
  const i = history.findIndex((h) => h.at === at && h.value === value);
  return i > 0 ? history[i - 1].value : undefined;
}

export interface MemberTrace {
  level: number;
  since: string;
  changedAt: string;
  /** Removed (its level and dates kept for the removal's payload); a member added again is a new membership. */
  gone?: boolean;
}

const member = (members: Record<number, MemberTrace>, userId: number, level: number, at: string) => {
  const had = members[userId] && !members[userId].gone ? members[userId] : undefined;
  return { ...members, [userId]: { level, since: had?.since ?? at, changedAt: at } };
};

const removed = (members: Record<number, MemberTrace>, userId: number) =>
  members[userId] ? { ...members, [userId]: { ...members[userId], gone: true } } : members;

export interface ProjectTrace {
  name: string;
  path: string;
  visibility: 'private' | 'internal' | 'public';
  namespaceId: number;
  createdAt: string;
  updatedAt: string;
  paths: History<string>;
  /** Deleted itself (a project gone with its namespace has no such event). */
  deleted?: boolean;
  /** When it last moved to another namespace (a transfer may lower its visibility in the same breath). */
  transferredAt?: string;
  /** Members' last known levels, kept after their removal (a removal's payload names the level). */
  members: Record<number, MemberTrace>;
}

const touch = <S extends { updatedAt: string }>(s: S, at: string): S => ({ ...s, updatedAt: at });

export const projectTraceDecider: Decider<ProjectTrace | null, DomainEvent> = {
  initial: () => null,
  evolve: (s, event) => {
    const e = event as ProjectEvent;
    if (e.type === 'ProjectCreated' || e.type === 'ProjectForked') {
      const d = e.data;
      return {
        name: d.name,
        path: d.path,
        visibility: d.visibility,
        namespaceId: d.namespaceId,
        createdAt: d.at,
        updatedAt: d.at,
        paths: [{ at: d.at, value: d.path }],
        members: {},
      };
    }
    // Only what a payload reads; every other event of the stream leaves the trace as it is.
    if (!s) return s;
    if (e.type === 'ProjectUpdated') {
      const c = e.data.changes;
      const next = touch(s, e.data.at);
      if (c.name !== undefined) next.name = c.name;
      if (c.visibility !== undefined) next.visibility = c.visibility;
      if (c.path !== undefined && c.path !== s.path) {
        next.path = c.path;
        next.paths = [...s.paths, { at: e.data.at, value: c.path }];
      }
      return next;
    }
    if (e.type === 'ProjectTransferred')
      return { ...touch(s, e.data.at), namespaceId: e.data.namespaceId, transferredAt: e.data.at };
    if (e.type === 'ProjectDeleted') return { ...s, deleted: true };
    if (e.type === 'ProjectMemberAdded' || e.type === 'ProjectMemberUpdated')
      return { ...s, members: member(s.members, e.data.userId, e.data.accessLevel, e.data.at) };
    if (e.type === 'ProjectMemberRemoved') return { ...s, members: removed(s.members, e.data.userId) };
    return s;
  },
};

export interface GroupTrace {
  deleted?: boolean;
  name: string;
  path: string;
  parentId: number | null;
  createdAt: string;
  updatedAt: string;
  paths: History<string>;
  members: Record<number, MemberTrace>;
}

export const groupTraceDecider: Decider<GroupTrace | null, DomainEvent> = {
  initial: () => null,
  evolve: (s, event) => {
    const e = event as GroupEvent;
    if (e.type === 'GroupCreated') {
      const d = e.data;
      return {
        name: d.name,
        path: d.path,
        parentId: d.parentId,
        createdAt: d.at,
        updatedAt: d.at,
        paths: [{ at: d.at, value: d.path }],
        members: {},
      };
    }
    if (!s) return s;
    if (e.type === 'GroupUpdated') {
      const c = e.data.changes;
      const next = touch(s, e.data.at);
      if (c.name !== undefined) next.name = c.name;
      if (c.path !== undefined && c.path !== s.path) {
        next.path = c.path;
        next.paths = [...s.paths, { at: e.data.at, value: c.path }];
      }
      return next;
    }
    if (e.type === 'GroupTransferred') return { ...touch(s, e.data.at), parentId: e.data.parentId };
    if (e.type === 'GroupDeleted') return { ...s, deleted: true };
    if (e.type === 'GroupMemberAdded' || e.type === 'GroupMemberUpdated')
      return { ...s, members: member(s.members, e.data.userId, e.data.accessLevel, e.data.at) };
    if (e.type === 'GroupMemberRemoved') return { ...s, members: removed(s.members, e.data.userId) };
    return s;
  },
};

export interface UserTrace {
  /** The personal namespace's id. */
  namespaceId: number;
  name: string;
  username: string;
  email: string;
  createdAt: string;
  updatedAt: string;
  usernames: History<string>;
  /** SSH keys' text by id, kept after their removal. */
  keys: Record<number, { key: string; createdAt: string }>;
  deleted?: boolean;
}

export const userTraceDecider: Decider<UserTrace | null, DomainEvent> = {
  initial: () => null,
  evolve: (s, event) => {
    const e = event as UserEvent;
    if (e.type === 'UserCreated') {
      const d = e.data;
      return {
        namespaceId: d.namespaceId,
        name: d.name,
        username: d.username,
        email: d.email,
        createdAt: d.at,
        updatedAt: d.at,
        usernames: [{ at: d.at, value: d.username }],
        keys: {},
      };
    }
    if (!s) return s;
    if (e.type === 'UserUpdated') {
      const c = e.data.changes;
      const next = touch(s, e.data.at);
      if (c.name !== undefined) next.name = c.name;
      if (c.email !== undefined) next.email = c.email;
      if (c.username !== undefined && c.username !== s.username) {
        next.username = c.username;
        next.usernames = [...s.usernames, { at: e.data.at, value: c.username }];
      }
      return next;
    }
    if (e.type === 'SshKeyAdded')
      return { ...s, keys: { ...s.keys, [e.data.keyId]: { key: e.data.key, createdAt: e.data.at } } };
    if (e.type === 'UserDeleted') return { ...s, deleted: true };
    return s;
  },
};
