import { isTagRef, type ProjectRow, type RefUpdate } from '@app/projects';
import { pushPayload, type Pusher } from './push-payload';

/*
 * System hook payloads as GitLab 10.x builds them: `SystemHooksService#build_event_data`
 * (app/services/system_hooks_service.rb at a 10.x commit, with EE's prepend adding nothing to these
 * kinds) and doc/system_hooks/system_hooks.md. Every payload starts with `event_name`, `created_at`
 * and `updated_at` (the model's, `xmlschema`: seconds, `Z`), then the model's fields in the order
 * the service merges them. Pure functions: the fan-out gathers the facts, these shape them.
 */

/** Ruby's `Time#xmlschema` on a UTC time: no fraction of a second. */
export const xmlschema = (t: Date | string) => new Date(t).toISOString().replace(/\.\d+Z$/, 'Z');

/** 10.x's `Gitlab::Access.human_access` (11.0 renamed "Master" to "Maintainer"). */
const HUMAN_ACCESS: Record<number, string> = {
  10: 'Guest',
  20: 'Reporter',
  30: 'Developer',
  40: 'Master',
  50: 'Owner',
};
export const humanAccess = (level: number) => HUMAN_ACCESS[level] ?? 'No access';

/** When the model was made and last changed. */
export interface Stamps {
  createdAt: Date | string;
  updatedAt: Date | string;
}

const head = (eventName: string, s: Stamps) => ({
  event_name: eventName,
  created_at: xmlschema(s.createdAt),
  updated_at: xmlschema(s.updatedAt),
});

/** A project as `project_data` reads it; `owner` is the personal owner or the group (whose e-mail is `""`). */
export interface ProjectFacts extends Stamps {
  id: number;
  name: string;
  path: string;
  pathWithNamespace: string;
  ownerName: string | null;
  ownerEmail: string;
  visibility: 'private' | 'internal' | 'public';
}

export type ProjectEventName =
  'project_create' | 'project_destroy' | 'project_update' | 'project_rename' | 'project_transfer';

/** `project_create`, `_destroy`, `_update`; `_rename` and `_transfer` add `old_path_with_namespace`. */
export function projectPayload(eventName: ProjectEventName, p: ProjectFacts, oldPathWithNamespace?: string) {
  return {
    ...head(eventName, p),
    name: p.name,
    path: p.path,
    path_with_namespace: p.pathWithNamespace,
    project_id: p.id,
    owner_name: p.ownerName,
    owner_email: p.ownerEmail,
    project_visibility: p.visibility,
    ...(eventName === 'project_rename' || eventName === 'project_transfer'
      ? { old_path_with_namespace: oldPathWithNamespace ?? null }
      : {}),
  };
}

/** A user as `user_data` reads it. */
export interface UserFacts extends Stamps {
  id: number;
  name: string;
  username: string;
  email: string;
}

/** `user_create`, `user_destroy`; `user_rename` adds `old_username` (`username_was`). */
export function userPayload(
  eventName: 'user_create' | 'user_destroy' | 'user_rename',
  u: UserFacts,
  oldUsername?: string,
) {
  return {
    ...head(eventName, u),
    name: u.name,
    email: u.email,
    user_id: u.id,
    username: u.username,
    ...(eventName === 'user_rename' ? { old_username: oldUsername ?? null } : {}),
  };
}

/** An SSH key: its text, its id and its owner's username. */
export interface KeyFacts extends Stamps {
  id: number;
  key: string;
  username: string | null;
}

export function keyPayload(eventName: 'key_create' | 'key_destroy', k: KeyFacts) {
  return {
    ...head(eventName, k),
    key: k.key,
    id: k.id,
    // 10.x sets it only when the key has a user (deploy keys have none; they fire no hook here).
    ...(k.username !== null ? { username: k.username } : {}),
  };
}

/** A project member: the membership's stamps, its level, the member and the project. */
export interface MembershipFacts extends Stamps {
  accessLevel: number;
  user: Pick<UserFacts, 'id' | 'name' | 'username' | 'email'>;
}

export type TeamEventName = 'user_add_to_team' | 'user_remove_from_team' | 'user_update_for_team';

/** The member's part of `project_member_data` and `group_member_data` (the same fields in the same order). */
const memberUser = (m: MembershipFacts) => ({
  user_username: m.user.username,
  user_name: m.user.name,
  user_email: m.user.email,
  user_id: m.user.id,
});

/**
 * `project_member_data`. `user_update_for_team` is later GitLab's (13.x, same fields) for a changed
 * level; 10.x had no event for it. `project_visibility` is the level's name, downcased ("private").
 */
export function teamMemberPayload(eventName: TeamEventName, m: MembershipFacts, p: ProjectFacts) {
  return {
    ...head(eventName, m),
    project_name: p.name,
    project_path: p.path,
    project_path_with_namespace: p.pathWithNamespace,
    project_id: p.id,
    ...memberUser(m),
    access_level: humanAccess(m.accessLevel),
    project_visibility: p.visibility,
  };
}

/** A group as `group_data` reads it. */
export interface GroupFacts extends Stamps {
  id: number;
  name: string;
  path: string;
  fullPath: string;
}

/**
 * `group_create`, `group_destroy`; `group_rename` adds `old_path` and `old_full_path`. `owner_name`
 * and `owner_email` are always null in 10.x (gitlab-ce#39675: a group's `owner` is nobody).
 */
export function groupPayload(
  eventName: 'group_create' | 'group_destroy' | 'group_rename',
  g: GroupFacts,
  old?: { path: string; fullPath: string },
) {
  return {
    ...head(eventName, g),
    name: g.name,
    path: g.path,
    full_path: g.fullPath,
    group_id: g.id,
    owner_name: null,
    owner_email: null,
    ...(eventName === 'group_rename' ? { old_path: old?.path ?? null, old_full_path: old?.fullPath ?? null } : {}),
  };
}

export type GroupMemberEventName = 'user_add_to_group' | 'user_remove_from_group' | 'user_update_for_group';

/** `group_member_data`; `user_update_for_group` is later GitLab's (13.x, same fields). */
export function groupMemberPayload(eventName: GroupMemberEventName, m: MembershipFacts, g: GroupFacts) {
  return {
    ...head(eventName, m),
    group_name: g.name,
    group_path: g.path,
    group_id: g.id,
    ...memberUser(m),
    group_access: humanAccess(m.accessLevel),
  };
}

type Urls = { externalUrl: string; sshCloneBase: string };

/**
 * A system hook's `push` / `tag_push`: the project hook's payload built without commits
 * (10.x `GitPushService#build_push_data_system_hook` passes `[]`; the doc: "we never display commits").
 */
export function systemPushPayload(update: RefUpdate, project: ProjectRow, pusher: Pusher, urls: Urls) {
  return { ...pushPayload(update, project, pusher, urls), commits: [], total_commits_count: 0 };
}

/** Which system hook switch a ref update's `push` / `tag_push` needs. */
export const systemPushKind = (ref: string) => (isTagRef(ref) ? 'tag_push' : 'push');

/**
 * 10.x `Gitlab::DataBuilder::Repository.update`: once per push, every ref it changed
 * (`single_change`: before, after, ref), sent to the hooks with `repository_update_events`. `updates`
 * is never empty (a push changes a ref).
 */
export function repositoryUpdatePayload(updates: RefUpdate[], project: ProjectRow, pusher: Pusher, urls: Urls) {
  // `Project#hook_attrs`: the push payload's `project`, which no ref changes.
  const projectAttrs = pushPayload(updates[0], project, pusher, urls).project;
  return {
    event_name: 'repository_update',
    user_id: pusher.id,
    user_name: pusher.name,
    user_email: pusher.email,
    user_avatar: null,
    project_id: project.id,
    project: projectAttrs,
    changes: updates.map((u) => ({ before: u.before, after: u.after, ref: u.ref })),
    refs: [...new Set(updates.map((u) => u.ref))],
  };
}
