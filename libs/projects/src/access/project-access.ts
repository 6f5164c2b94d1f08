import {
  directMembershipsSql,
  fromMemberGroupsSql,
  groupMembershipsSql,
  personalOwnerMembershipSql,
  fromPersonalNamespaceSql,
  inheritedGroupLevelSql,
  memberLevelSql,
  memberSourceIdsSql,
  personalOwnerLevelSql,
} from '@app/groups';
import type { Actor } from '@app/platform';
import { isExternalUserSql } from '@app/users';

/*
 * Who may do what with a project, as SQL over the read models, so that visibility is part of every
 * `where` (pagination and X-Total stay right) and one statement answers a single project's
 * permissions. `uid` names the parameter holding the caller's id. Memberships and namespaces are the
 * groups context's tables, read through its fragments, so each statement stays one.
 */

/** The caller's level from the project's own members. */
export const projectMemberLevelSql = (p: string, uid: string) => memberLevelSql('project', `${p}.id`, uid);

/** The caller's own membership of the project's group, not inherited: GitLab's `permissions.group_access`. */
export const directGroupMemberLevelSql = (p: string, uid: string) =>
  memberLevelSql('namespace', `${p}.namespace_id`, uid);

/** The caller's level in the project's group, inherited from its ancestors or given by a group share. */
export const groupMemberLevelSql = (p: string, uid: string) => inheritedGroupLevelSql(`${p}.namespace_id`, uid);

/**
 * Through shares: the lesser of the share's level and the caller's level in the shared-with group
 * (its members and its ancestors'; the groups that group is itself shared with pass nothing on).
 * `least` ignores nulls in PostgreSQL, so a non-member's missing level must count as 0, not vanish.
 */
export const sharedLevelSql = (p: string, uid: string) =>
  `(select max(least(l.group_access, coalesce(${inheritedGroupLevelSql('l.group_id', uid, false)}, 0)))
     from project_group_links l where l.project_id = ${p}.id and (l.expires_at is null or l.expires_at > current_date))`;

/** The owner of a personal namespace owns its projects. */
export const personalOwnerSql = (p: string, uid: string) => personalOwnerLevelSql(`${p}.namespace_id`, uid);

/** The caller's effective level: the highest of every way in (0 for none). */
export const projectAccessSql = (p: string, uid: string) =>
  `greatest(coalesce(${projectMemberLevelSql(p, uid)}, 0), coalesce(${groupMemberLevelSql(p, uid)}, 0),
            coalesce(${sharedLevelSql(p, uid)}, 0), coalesce(${personalOwnerSql(p, uid)}, 0))`;

/**
 * The ids of every project in which the caller has a level (the same ways in as `projectAccessSql`,
 * which is above 0 exactly for these), as one uncorrelated subquery. In a list's `where` PostgreSQL
 * evaluates it once into a hash (a "hashed SubPlan") and probes it per row, where the correlated
 * `projectAccessSql` ran four subqueries for every candidate row: 10,000 projects made
 * `GET /projects` cost 200 ms before the page was cut (bench PERF-3). "In the set" and "level above
 * 0" agree because every stored level is at least 10 (guest): the deciders accept only GitLab's levels.
 */
export const authorizedProjectIdsSql = (uid: string) =>
  `(${memberSourceIdsSql('project', uid)}
    union all
    ${fromMemberGroupsSql(uid, 'ap.id', (groupId) => `join projects ap on ap.namespace_id = ${groupId}`)}
    union all
    ${fromMemberGroupsSql(
      uid,
      'l.project_id',
      (groupId) => `join project_group_links l on l.group_id = ${groupId}`,
      ' and (l.expires_at is null or l.expires_at > current_date)',
      false,
    )}
    union all
    ${fromPersonalNamespaceSql(uid, 'ap.id', (namespaceId) => `join projects ap on ap.namespace_id = ${namespaceId}`)})`;

/** Whether the caller is an external user, read once per statement (an uncorrelated subquery). */
const internalVisibleSql = (p: string, uid: string) =>
  `(${p}.visibility = 'internal' and not ${isExternalUserSql(uid)})`;

/**
 * Public projects for everybody, internal ones for signed-in users who are not external, private
 * ones for whoever has a level in them, and all for administrators. This form checks the caller's
 * level per row: right for one project (by id or path), where building the caller's whole set of
 * projects would cost more than it saves. Lists use `projectsVisibleSql`.
 */
export function projectVisibleSql(p: string, actor: Actor | undefined, uid: string): string {
  if (actor?.isAdmin) return 'true';
  if (!actor) return `${p}.visibility = 'public'`;
  return `(${p}.visibility = 'public' or ${internalVisibleSql(p, uid)} or ${projectAccessSql(p, uid)} > 0)`;
}

/** The same rule as `projectVisibleSql`, for lists: the caller's projects are one set, built once per statement. */
export function projectsVisibleSql(p: string, actor: Actor | undefined, uid: string): string {
  if (actor?.isAdmin) return 'true';
  if (!actor) return `${p}.visibility = 'public'`;
  return `(${p}.visibility = 'public' or ${internalVisibleSql(p, uid)} or ${p}.id in ${authorizedProjectIdsSql(uid)})`;
}

/**
 * `select user_id, access_level, expires_at` for every way into the project `projectIdSql`, one row per
 * way (GitLab's MembersFinder with `:inherited, :direct, :invited_groups`, and the shares of the
 * project's groups as newer GitLab adds them): the project's members, its personal namespace's owner,
 * the members of its group and the group's ancestors and of the groups those are shared with, and the
 * members of the groups the project is shared with, capped by the share.
 */
export const projectMembershipsSql = (projectIdSql: string) => {
  const namespaceId = `(select mp.namespace_id from projects mp where mp.id = ${projectIdSql})`;
  return `${directMembershipsSql('project', projectIdSql)}
    union all ${personalOwnerMembershipSql(namespaceId)}
    union all ${groupMembershipsSql(namespaceId)}
    union all
    select gm.user_id, least(l.group_access, gm.access_level) as access_level, gm.expires_at
      from project_group_links l cross join lateral (${groupMembershipsSql('l.group_id', '', false)}) gm
     where l.project_id = ${projectIdSql} and (l.expires_at is null or l.expires_at > current_date)`;
};
