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

/** A group share counts until the day it expires (`ggl`: a `group_group_links` row). */
export const ACTIVE_GROUP_LINK = `(ggl.expires_at is null or ggl.expires_at > current_date)`;

/*
 * The ways into a group: a membership of the group or of an ancestor (inherited), and a membership of
 * a group that the group or an ancestor is shared with (GitLab's group_group_links), where the share's
 * `group_access` is a ceiling: the member gets the lower of it and their level in the invited group
 * (its own ancestors' members included, GitLab's `members_with_parents`). Shares do not chain: a
 * group shared with the invited group gives nothing further.
 * The aliases inside (`c`, `m`, `ggl`, `swc`) must not be the ones the caller's expressions name.
 */

/**
 * `select m.user_id, m.access_level, m.expires_at` for every membership that reaches the group
 * `groupIdSql`, one row per way in; `throughShares: false` keeps the memberships of the group and its
 * ancestors only (what a project's share with the group passes on: shares do not chain).
 */
export const groupMembershipsSql = (groupIdSql: string, userFilter = '', throughShares = true): string =>
  `select m.user_id, m.access_level, m.expires_at
     from namespace_closure c join members m on m.source_type = 'namespace' and m.source_id = c.ancestor_id
    where c.descendant_id = ${groupIdSql} and ${ACTIVE_MEMBER}${userFilter}` +
  (throughShares
    ? `
   union all
   select m.user_id, least(ggl.group_access, m.access_level) as access_level, m.expires_at
     from namespace_closure c
     join group_group_links ggl on ggl.shared_group_id = c.ancestor_id and ${ACTIVE_GROUP_LINK}
     join namespace_closure swc on swc.descendant_id = ggl.shared_with_group_id
     join members m on m.source_type = 'namespace' and m.source_id = swc.ancestor_id
    where c.descendant_id = ${groupIdSql} and ${ACTIVE_MEMBER}${userFilter}`
    : '');

/**
 * The caller's level in a group, inherited from its ancestors or given by a share (the highest
 * counts), or null; `throughShares: false` as for groupMembershipsSql.
 */
export const inheritedGroupLevelSql = (groupIdSql: string, uid: string, throughShares = true): string =>
  `(select max(ways.access_level) from (${groupMembershipsSql(groupIdSql, ` and m.user_id = ${uid}`, throughShares)}) ways)`;

/** `select m.user_id, m.access_level, m.expires_at`: the direct members of one group or project. */
export const directMembershipsSql = (sourceType: SourceType, sourceIdSql: string): string =>
  `select m.user_id, m.access_level, m.expires_at from members m
    where m.source_type = '${sourceType}' and m.source_id = ${sourceIdSql} and ${ACTIVE_MEMBER}`;

/** `select user_id, access_level, expires_at`: the owner of the namespace at owner level, when it is a personal one. */
export const personalOwnerMembershipSql = (namespaceIdSql: string): string =>
  `select o.owner_id as user_id, ${ACCESS.owner} as access_level, null::date as expires_at
     from namespaces o where o.id = ${namespaceIdSql} and o.kind = 'user'`;

/** The owner level when the namespace is the caller's personal one, else null. */
export const personalOwnerLevelSql = (namespaceIdSql: string, uid: string): string =>
  `(select ${ACCESS.owner} from namespaces o where o.id = ${namespaceIdSql} and o.kind = 'user' and o.owner_id = ${uid})`;

/** `select m.source_id`: the groups or projects the caller is a direct member of. */
export const memberSourceIdsSql = (sourceType: SourceType, uid: string): string =>
  `select m.source_id from members m where m.source_type = '${sourceType}' and m.user_id = ${uid} and ${ACTIVE_MEMBER}`;

/** `select group_id`: every group the caller has a level in (a membership of it or an ancestor, or a share), uncorrelated. */
export const memberGroupIdsSql = (uid: string, throughShares = true): string =>
  `select c.descendant_id as group_id from members m join namespace_closure c on c.ancestor_id = m.source_id
     where m.source_type = 'namespace' and m.user_id = ${uid} and ${ACTIVE_MEMBER}` +
  (throughShares
    ? `
   union
   select c.descendant_id from members m
     join namespace_closure swc on swc.ancestor_id = m.source_id
     join group_group_links ggl on ggl.shared_with_group_id = swc.descendant_id and ${ACTIVE_GROUP_LINK}
     join namespace_closure c on c.ancestor_id = ggl.shared_group_id
    where m.source_type = 'namespace' and m.user_id = ${uid} and ${ACTIVE_MEMBER}`
    : '');

/**
 * `select <select>` over every group the caller has a level in (`memberGroupIdsSql`), with
 * `join(groupIdSql)` appended to the FROM; `where` adds conditions (` and ...`) on what was joined.
 * Uncorrelated: a list evaluates it once into a hash (bench PERF-3). `throughShares: false` as for groupMembershipsSql.
 */
export const fromMemberGroupsSql = (
  uid: string,
  select: string,
  join: (groupIdSql: string) => string,
  where = '',
  throughShares = true,
): string =>
  `select ${select} from (${memberGroupIdsSql(uid, throughShares)}) member_groups ${join('member_groups.group_id')} where true${where}`;

/** `select <select>` over the caller's personal namespace, with `join(namespaceIdSql)` appended to the FROM. */
export const fromPersonalNamespaceSql = (
  uid: string,
  select: string,
  join: (namespaceIdSql: string) => string,
): string => `select ${select} from namespaces o ${join('o.id')} where o.kind = 'user' and o.owner_id = ${uid}`;

/** `select m.user_id`: the direct members of one group or project. */
export const memberUserIdsSql = (sourceType: SourceType, sourceIdSql: string): string =>
  `select m.user_id from members m where m.source_type = '${sourceType}' and m.source_id = ${sourceIdSql} and ${ACTIVE_MEMBER}`;

/**
 * `select m.user_id`: the members of the groups in `groupIdsSql` (a parenthesised subquery), inherited
 * ones included, and shared ones unless `throughShares` is false.
 */
export const groupMemberUserIdsSql = (groupIdsSql: string, throughShares = true): string =>
  `select m.user_id from namespace_closure c join members m on m.source_type = 'namespace' and m.source_id = c.ancestor_id
     where c.descendant_id in ${groupIdsSql} and ${ACTIVE_MEMBER}` +
  (throughShares
    ? `
   union
   select m.user_id from namespace_closure c
     join group_group_links ggl on ggl.shared_group_id = c.ancestor_id and ${ACTIVE_GROUP_LINK}
     join namespace_closure swc on swc.descendant_id = ggl.shared_with_group_id
     join members m on m.source_type = 'namespace' and m.source_id = swc.ancestor_id
    where c.descendant_id in ${groupIdsSql} and ${ACTIVE_MEMBER}`
    : '');

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
