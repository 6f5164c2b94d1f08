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
 * Public projects for everybody, internal ones for signed-in users who are not external, private
 * ones for whoever has a level in them, and all for administrators. Whether the caller is external
 * is read in the same statement (an uncorrelated subquery, evaluated once).
 */
export function projectVisibleSql(p: string, actor: Actor | undefined, uid: string): string {
  if (actor?.isAdmin) return 'true';
  if (!actor) return `${p}.visibility = 'public'`;
  const internal = `(${p}.visibility = 'internal' and not coalesce((select u.external from users u where u.id = ${uid}), false))`;
  return `(${p}.visibility = 'public' or ${internal} or ${projectAccessSql(p, uid)} > 0)`;
}
