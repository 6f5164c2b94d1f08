/*
 * SQL fragments over namespaces, their ancestry and memberships, for the contexts above whose hot
 * reads must stay one statement (project lists, `GET /projects/:id`): they read these tables only
 * through the fragments. `uid` names the parameter holding the caller's id; `...Sql` arguments are
 * SQL expressions of the caller's statement. Where another context's table must be joined in, the
 * caller passes the join as a function of the group id expression, so each side names only its own.
 */
import { ACCESS } from '../domain/access-level';

type SourceType = 'namespace' | 'project';

/** A membership counts until the day it expires. */
export const ACTIVE_MEMBER = `(m.expires_at is null or m.expires_at > current_date)`;

/** The caller's own level as a member of one group or project (not inherited), or null. */
export const memberLevelSql = (sourceType: SourceType, sourceIdSql: string, uid: string): string =>
  `(select m.access_level from members m where m.source_type = '${sourceType}' and m.source_id = ${sourceIdSql} and m.user_id = ${uid} and ${ACTIVE_MEMBER})`;

/** The caller's level in a group, inherited from its ancestors (the highest counts), or null. */
export const inheritedGroupLevelSql = (groupIdSql: string, uid: string): string =>
  `(select max(m.access_level) from namespace_closure c join members m on m.source_type = 'namespace' and m.source_id = c.ancestor_id
     where c.descendant_id = ${groupIdSql} and m.user_id = ${uid} and ${ACTIVE_MEMBER})`;

/** The owner level when the namespace is the caller's personal one, else null. */
export const personalOwnerLevelSql = (namespaceIdSql: string, uid: string): string =>
  `(select ${ACCESS.owner} from namespaces o where o.id = ${namespaceIdSql} and o.kind = 'user' and o.owner_id = ${uid})`;

/** `select m.source_id`: the groups or projects the caller is a direct member of. */
export const memberSourceIdsSql = (sourceType: SourceType, uid: string): string =>
  `select m.source_id from members m where m.source_type = '${sourceType}' and m.user_id = ${uid} and ${ACTIVE_MEMBER}`;

/**
 * `select <select>` over every group the caller belongs to, directly or through an ancestor, with
 * `join(groupIdSql)` appended to the FROM; `where` adds conditions (` and ...`) on what was joined.
 * Uncorrelated: a list evaluates it once into a hash (bench PERF-3).
 */
export const fromMemberGroupsSql = (
  uid: string,
  select: string,
  join: (groupIdSql: string) => string,
  where = '',
): string =>
  `select ${select} from members m join namespace_closure c on c.ancestor_id = m.source_id ${join('c.descendant_id')}
     where m.source_type = 'namespace' and m.user_id = ${uid} and ${ACTIVE_MEMBER}${where}`;

/** `select <select>` over the caller's personal namespace, with `join(namespaceIdSql)` appended to the FROM. */
export const fromPersonalNamespaceSql = (
  uid: string,
  select: string,
  join: (namespaceIdSql: string) => string,
): string => `select ${select} from namespaces o ${join('o.id')} where o.kind = 'user' and o.owner_id = ${uid}`;

/** `select m.user_id`: the direct members of one group or project. */
export const memberUserIdsSql = (sourceType: SourceType, sourceIdSql: string): string =>
  `select m.user_id from members m where m.source_type = '${sourceType}' and m.source_id = ${sourceIdSql} and ${ACTIVE_MEMBER}`;

/** `select m.user_id`: the members of the groups in `groupIdsSql` (a parenthesised subquery), inherited ones included. */
export const groupMemberUserIdsSql = (groupIdsSql: string): string =>
  `select m.user_id from namespace_closure c join members m on m.source_type = 'namespace' and m.source_id = c.ancestor_id
     where c.descendant_id in ${groupIdsSql} and ${ACTIVE_MEMBER}`;

/** `select n.owner_id`: the owner of the namespace, when it is a personal one. */
export const personalOwnerIdSql = (namespaceIdSql: string): string =>
  `select n.owner_id from namespaces n where n.id = ${namespaceIdSql} and n.kind = 'user'`;

/** `join namespaces <alias> on <alias>.id = <namespaceIdSql>`. */
export const namespaceJoinSql = (alias: string, namespaceIdSql: string): string =>
  `join namespaces ${alias} on ${alias}.id = ${namespaceIdSql}`;

/** The namespace columns of a project row (`ns_name`, `ns_path`, ...), read from the joined `alias`. */
export const namespaceColumnsSql = (alias: string): string =>
  `${alias}.name as ns_name, ${alias}.path as ns_path, ${alias}.kind as ns_kind, ${alias}.full_path as ns_full_path, ${alias}.full_name as ns_full_name,
  ${alias}.parent_id as ns_parent_id, ${alias}.visibility as ns_visibility`;

/** True when the joined namespace `alias` is the personal namespace of `uid`. */
export const personalNamespaceOfSql = (alias: string, uid: string): string =>
  `${alias}.kind = 'user' and ${alias}.owner_id = ${uid}`;

/**
 * `select source_id, source_type, access_level, created_at, group_name[, <extra>]` over a user's direct,
 * current memberships (GitLab's `user.members`: no inherited ones), of one `type` or both. A group's
 * name is read here; a project's comes from the caller's `join(projectIdSql)`, where `projectIdSql` is
 * the project's id for a project membership and null for a group's.
 */
export const userMembershipsSql = (
  uid: string,
  type: SourceType | undefined,
  extra: string,
  join: (projectIdSql: string) => string,
): string =>
  `select m.source_id, m.source_type, m.access_level, m.created_at, g.name as group_name${extra ? `, ${extra}` : ''}
     from members m left join namespaces g on m.source_type = 'namespace' and g.id = m.source_id
     ${join(`(case when m.source_type = 'project' then m.source_id end)`)}
    where m.user_id = ${uid} and ${ACTIVE_MEMBER}${type ? ` and m.source_type = '${type}'` : ''}`;
