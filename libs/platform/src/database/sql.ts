/**
 * What runs SQL here: an EntityManager, a DataSource or a QueryRunner. TypeORM answers `query()` with
 * `any`; these functions are the one place that names the row type instead, so no `any` flows on from
 * a query (issue 10). Each read declares the columns it selects as an interface next to its SQL.
 */
export interface Sql {
  query<T>(sql: string, params?: unknown[]): Promise<T>;
}

/**
 * The rows a `select` (or an `insert ... returning`) answers, typed as the caller's row shape. Not for
 * `update`/`delete ... returning`: TypeORM answers those with `[rows, rowCount]`, not the rows.
 */
export function rows<T>(db: Sql, sql: string, params: unknown[] = []): Promise<T[]> {
  return db.query<T[]>(sql, params);
}

/** The first row a query answers, or undefined when it answers none. */
export async function firstRow<T>(db: Sql, sql: string, params: unknown[] = []): Promise<T | undefined> {
  const [row] = await rows<T>(db, sql, params);
  return row;
}

/** The one row a query always answers (an aggregate such as `count(*)`). */
export async function oneRow<T>(db: Sql, sql: string, params: unknown[] = []): Promise<T> {
  const row = await firstRow<T>(db, sql, params);
  if (row === undefined) throw new Error('query answered no row');
  return row;
}

/** Runs a statement whose answer is not read. */
export async function execute(db: Sql, sql: string, params: unknown[] = []): Promise<void> {
  await db.query<unknown>(sql, params);
}

/** Whether the database answers at all: the readiness probe's `select 1`. */
export async function pingDatabase(db: Sql): Promise<void> {
  await execute(db, 'select 1');
}

/** An identifier (a table, a schema, a database) as PostgreSQL reads it quoted: `"` doubled inside. */
export const quoteIdent = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** What a plain `pg` client (`pg.Client`, a pool's client) offers: its answer holds the rows. */
export interface PgClient {
  query(text: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
}

/**
 * A plain `pg` client as `Sql`: the command line's backup and restore run below Nest on such clients,
 * and ask the contexts' query functions, which take `Sql`, for what they need of their tables.
 */
export function pgSql(client: PgClient): Sql {
  return { query: async <T>(sql: string, params?: unknown[]) => (await client.query(sql, params)).rows as T };
}
