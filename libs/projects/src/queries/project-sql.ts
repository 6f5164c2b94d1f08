/** SQL fragments over the projects read model, for the contexts above (they never name the table). */

/** True while the project exists: a projection of a context above guards its writes with it. */
export const projectExistsSql = (projectIdSql: string): string =>
  `exists (select 1 from projects where id = ${projectIdSql})`;
