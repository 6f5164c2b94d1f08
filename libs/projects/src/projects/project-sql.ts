import { rows, type Sql } from '@app/platform';

/** SQL over the projects read model for the code above (contexts and the app never name the table). */

/** True while the project exists: a projection of a context above guards its writes with it. */
export const projectExistsSql = (projectIdSql: string): string =>
  `exists (select 1 from projects where id = ${projectIdSql})`;

/**
 * Every project's id, in order, as `db` sees them (a backup's snapshot transaction); none in a
 * database the projects migration has not reached yet.
 */
export async function allProjectIds(db: Sql): Promise<number[]> {
  const [table] = await rows<{ present: boolean }>(db, `select to_regclass('public.projects') is not null as present`);
  if (!table.present) return [];
  return (await rows<{ id: number }>(db, `select id from projects order by id`)).map((r) => r.id);
}
