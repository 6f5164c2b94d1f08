import { ACTIVE_MEMBER } from '@app/groups';
import type { Actor } from '@app/platform';

/*
 * Who may do what with a project, as SQL over the read models, so that visibility is part of every
 * `where` (pagination and X-Total stay right) and one statement answers a single project's
 * permissions. `uid` names the parameter holding the caller's id.
 */

/** The caller's level from the project's own members. */
export const projectMemberLevelSql = (p: string, uid: string) =>
  `(select m.access_level from members m where m.source_type = 'project' and m.source_id = ${p}.id and m.user_id = ${uid} and ${ACTIVE_MEMBER})`;

/** The caller's own membership of the project's group, not inherited: GitLab's `permissions.group_access`. */
export const directGroupMemberLevelSql = (p: string, uid: string) =>
  `(select m.access_level from members m where m.source_type = 'namespace' and m.source_id = ${p}.namespace_id and m.user_id = ${uid} and ${ACTIVE_MEMBER})`;

/** The caller's level in the project's group, inherited from its ancestors. */
export const groupMemberLevelSql = (p: string, uid: string) =>
  `(select max(m.access_level) from namespace_closure c join members m on m.source_type = 'namespace' and m.source_id = c.ancestor_id
     where c.descendant_id = ${p}.namespace_id and m.user_id = ${uid} and ${ACTIVE_MEMBER})`;

/**
 * Through shares: the lesser of the share's level and the caller's level in the shared-with group.
 * `least` ignores nulls in PostgreSQL, so a non-member's missing level must count as 0, not vanish.
 */
export const sharedLevelSql = (p: string, uid: string) =>
  `(select max(least(l.group_access, coalesce((select max(m.access_level) from namespace_closure c
        join members m on m.source_type = 'namespace' and m.source_id = c.ancestor_id
       where c.descendant_id = l.group_id and m.user_id = ${uid} and ${ACTIVE_MEMBER}), 0)))
     from project_group_links l where l.project_id = ${p}.id and (l.expires_at is null or l.expires_at > current_date))`;

/** The owner of a personal namespace owns its projects. */
export const personalOwnerSql = (p: string, uid: string) =>
  `(select 50 from namespaces o where o.id = ${p}.namespace_id and o.kind = 'user' and o.owner_id = ${uid})`;

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
  `(select m.source_id from members m where m.source_type = 'project' and m.user_id = ${uid} and ${ACTIVE_MEMBER}
    union all
    select ap.id from members m join namespace_closure c on c.ancestor_id = m.source_id join projects ap on ap.namespace_id = c.descendant_id
     where m.source_type = 'namespace' and m.user_id = ${uid} and ${ACTIVE_MEMBER}
    union all
    select l.project_id from members m join namespace_closure c on c.ancestor_id = m.source_id join project_group_links l on l.group_id = c.descendant_id
     where m.source_type = 'namespace' and m.user_id = ${uid} and ${ACTIVE_MEMBER} and (l.expires_at is null or l.expires_at > current_date)
    union all
    select ap.id from namespaces o join projects ap on ap.namespace_id = o.id where o.kind = 'user' and o.owner_id = ${uid})`;

/** Whether the caller is an external user, read once per statement (an uncorrelated subquery). */
const internalVisibleSql = (p: string, uid: string) =>
  `(${p}.visibility = 'internal' and not coalesce((select u.external from users u where u.id = ${uid}), false))`;

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
