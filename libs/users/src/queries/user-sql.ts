/*
 * SQL fragments over the users read model, for the contexts above that must stay one statement
 * (member lists, project lists): they join or test users through these and never name the table.
 * `alias` is the alias the caller reads columns through; `uid` names the parameter holding a user id.
 */

/** `join users <alias> on <alias>.id = <userIdSql>`; a caller may append `and ...` to the condition. */
export const userJoinSql = (alias: string, userIdSql: string, join: 'join' | 'left join' = 'join'): string =>
  `${join} users ${alias} on ${alias}.id = ${userIdSql}`;

/** The users read model as a FROM item, aliased `alias`. */
export const usersFromSql = (alias: string): string => `users ${alias}`;

/** True when the user exists and is not external (false for no user). */
export const isInternalUserSql = (uid: string): string =>
  `exists (select 1 from users u where u.id = ${uid} and not u.external)`;

/** True when the user is external (false for no user): an uncorrelated subquery, read once per statement. */
export const isExternalUserSql = (uid: string): string =>
  `coalesce((select u.external from users u where u.id = ${uid}), false)`;
