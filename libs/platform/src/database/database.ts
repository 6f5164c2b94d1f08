import { Logger } from '@nestjs/common';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { DataSource, DataSourceOptions, type MigrationInterface } from 'typeorm';
import { LodeConfig } from '../config/lode-config';
import { EmbeddedPostgres, SESSION_WAIT_MS } from './embedded-postgres';
import { quoteIdent } from './sql';

/**
 * A migration that needs the configuration (the data directory, the secret key): TypeORM builds
 * migrations with `new` and no arguments, so this one is made into a class when migrations run.
 */
export interface ConfiguredMigration {
  readonly withConfig: (config: LodeConfig) => new () => MigrationInterface;
}
type Migration = string | (new () => unknown) | ConfiguredMigration;
type Migrations = Migration[];

const forConfig = (config: LodeConfig, migrations: Migrations): (string | (new () => unknown))[] =>
  migrations.map((m) => (typeof m === 'object' ? m.withConfig(config) : m));

/** The database a process uses, once started: what to say about it, and how to let it go. */
export interface DatabaseHandle {
  /** `postgres` (DATABASE_URL), `embedded` (PGlite served by this process) or `embedded-shared` (by another). */
  readonly mode: 'postgres' | 'embedded' | 'embedded-shared';
  /** Where the data lives, for the start-up log: the server and database, or the embedded data directory. */
  readonly location: string;
  stop(): Promise<void>;
}

/** The embedded database's files and the directory of the socket it is served on. */
export function embeddedPaths(dataDir: string): { data: string; socketDir: string } {
  return { data: join(dataDir, 'pglite'), socketDir: join(dataDir, 'run') };
}

/** Written beside the embedded database by `lode migrate-embedded`: where the data went, and when. */
export const movedMarker = (dataDir: string) => join(dataDir, 'pglite.moved');

export interface EmbeddedMove {
  to: string;
  at: string;
}

/** The embedded database's move, if `lode migrate-embedded` copied it away. */
export function embeddedMove(dataDir: string): EmbeddedMove | undefined {
  try {
    return JSON.parse(readFileSync(movedMarker(dataDir), 'utf8')) as EmbeddedMove;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    // A marker that cannot be read still says the database moved.
    return { to: '(unreadable: see pglite.moved)', at: '?' };
  }
}

/** A start on an embedded database that was moved to PostgreSQL, refused unless the operator asks for it. */
export class EmbeddedDatabaseMoved extends Error {}

/**
 * Makes the configured database reachable at `config.databaseUrl` (docs/architecture.md, Embedded mode).
 * With DATABASE_URL set there is nothing to start. Without it, PGlite on `$LODE_DATA_DIR/pglite` is
 * served over a Unix socket in `$LODE_DATA_DIR/run`, or, when a running Lode already serves it (the
 * command line beside `npm start`), that server is used.
 */
export async function startDatabase(config: LodeConfig): Promise<DatabaseHandle> {
  if (!config.embeddedDatabase) {
    return { mode: 'postgres', location: describeDatabaseUrl(config.databaseUrl), stop: async () => undefined };
  }
  const paths = embeddedPaths(config.dataDir);
  const moved = embeddedMove(config.dataDir);
  if (moved && !config.serveMovedEmbedded)
    throw new EmbeddedDatabaseMoved(
      `the embedded database in ${paths.data} was moved to ${moved.to} by lode migrate-embedded (${moved.at}): ` +
        `set DATABASE_URL to it (the repositories and files stay in ${config.dataDir}), or set ` +
        `LODE_SERVE_MOVED_EMBEDDED=true to open this older copy anyway`,
    );
  config.databaseUrl = EmbeddedPostgres.urlFor(paths.socketDir);
  if (await EmbeddedPostgres.answers(paths.socketDir)) {
    return { mode: 'embedded-shared', location: paths.data, stop: async () => undefined };
  }
  const server = await EmbeddedPostgres.start(paths.data, paths.socketDir);
  return { mode: 'embedded', location: paths.data, stop: () => server.stop() };
}

/** A connection string without its password, for messages. */
export function describeDatabaseUrl(databaseUrl: string): string {
  try {
    const url = new URL(databaseUrl);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return '(unparsable DATABASE_URL)';
  }
}

/**
 * The one place that turns configuration into a database connection (docs/architecture.md, Embedded mode).
 */
export function dataSourceOptions(config: LodeConfig, migrations: Migrations = []): DataSourceOptions {
  return {
    type: 'postgres',
    url: config.databaseUrl,
    migrations: forConfig(config, migrations) as DataSourceOptions['migrations'],
    migrationsTableName: 'schema_migrations',
    synchronize: false,
    logging: false,
    extra: poolOptions(config),
  };
}

/**
 * The pool's limits, so no request waits on a PostgreSQL that stopped answering: taking a connection
 * (from the pool or a new one) fails after LODE_DB_CONNECT_TIMEOUT_MS; the server cancels a statement
 * after LODE_DB_STATEMENT_TIMEOUT_MS and the client gives up a second later (a silent network never
 * delivers the cancellation); a session left idle inside a transaction (its client gone) is ended by
 * the server, releasing its locks; TCP keepalive finds dead idle connections. 0 turns the statement
 * limit off. DatabaseWatch cuts the connections in use as soon as the database stops answering.
 */
function poolOptions(config: LodeConfig): Record<string, unknown> {
  const statement = config.dbStatementTimeoutMs;
  return {
    max: 20,
    // Idle connections are kept (pg closes them after 10 s by default). A load arriving after a quiet
    // spell otherwise opens up to 20 backends at once, each planning Lode's statements afresh: measured
    // (bench/RESULTS.md, twelfth session) 100 creations a second after 20-25 s of quiet answered
    // 400-800 ms for their first 2-3 s with the default, under 250 ms with the connections kept. A
    // process holds no more connections than its busiest moment needed; a dead one is dropped by the
    // pool on its error, as before.
    idleTimeoutMillis: 0,
    connectionTimeoutMillis: connectTimeoutMs(config),
    application_name: `lode-${config.role}`,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    ...(statement > 0 ? { statement_timeout: statement, query_timeout: statement + 1000 } : {}),
    idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_MS,
    // No JIT: Lode's statements are short, and PostgreSQL compiles one whenever its estimated cost passes
    // jit_above_cost, which a statement's estimate does on tables without statistics. Measured: a signed-in
    // `GET /projects?per_page=100` on 10,000 projects spent 393 of its 651 ms of count in compiling
    // (PostgreSQL 19 turns JIT off by default). The embedded database is built without it.
    // pg reads PGOPTIONS only when no `options` is given, so the operator's are kept in front; an
    // `options` in DATABASE_URL replaces this whole value (pg lets the URL win).
    ...(config.embeddedDatabase
      ? {}
      : { options: [process.env.PGOPTIONS, '-c jit=off'].filter((o) => o?.trim()).join(' ') }),
  };
}

/**
 * How long taking a connection may wait. On the embedded database a new connection's start-up waits
 * for the one session like any statement (a long transaction holds it), which is no outage: the
 * wait is as long as a statement's wait for the session.
 */
export function connectTimeoutMs(config: LodeConfig): number {
  return config.embeddedDatabase ? Math.max(config.dbConnectTimeoutMs, SESSION_WAIT_MS) : config.dbConnectTimeoutMs;
}

/** No transaction of Lode's waits on its client for long; one idle this long lost its client. */
const IDLE_IN_TRANSACTION_MS = 60_000;

/** What a connection of its own (`withOwnConnection`) sets up beyond the URL; unset means pg's default. */
export interface OwnConnectionOptions {
  /** Unset: no limit. */
  connectTimeoutMs?: number;
  applicationName?: string;
  /**
   * Set once connected, so 0 means no limit even where the role or the database sets one (pg's own
   * `statement_timeout` setting sends nothing for 0). Unset: the server's setting.
   */
  statementTimeoutMs?: number;
  /** Set like the statement limit (0: a long transaction of its own is never ended). */
  idleInTransactionTimeoutMs?: number;
}

/**
 * Runs `use` on a connection of its own, outside any pool, and closes it after: for one-off work
 * that comes before there is a pool (creating the database, a command's first look at it) or must
 * not carry the pool's limits (a vacuum). A connection lost meanwhile fails `use`'s query, not the
 * process (pg emits 'error' on a client nobody listens to).
 */
export async function withOwnConnection<T>(
  databaseUrl: string,
  options: OwnConnectionOptions,
  use: (client: Client) => Promise<T>,
): Promise<T> {
  const client = new Client({
    connectionString: databaseUrl,
    connectionTimeoutMillis: options.connectTimeoutMs,
    application_name: options.applicationName,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    // Set by statement, not as start-up options: an `options` in DATABASE_URL would replace those, and
    // pg's own `statement_timeout: 0` sends nothing. A SET outranks the role's and the database's settings.
    if (options.statementTimeoutMs !== undefined)
      await client.query(`set statement_timeout = ${Math.trunc(options.statementTimeoutMs)}`);
    if (options.idleInTransactionTimeoutMs !== undefined)
      await client.query(`set idle_in_transaction_session_timeout = ${Math.trunc(options.idleInTransactionTimeoutMs)}`);
    return await use(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Creates the configured database when the server answers but the database does not exist yet. */
export async function ensureDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.slice(1));
  if (!name) return;
  try {
    await withOwnConnection(databaseUrl, {}, async () => undefined);
    return;
  } catch (err) {
    if ((err as { code?: string }).code !== '3D000') throw err; // 3D000: database does not exist
  }
  url.pathname = '/postgres';
  await withOwnConnection(url.toString(), {}, async (admin) => {
    try {
      await admin.query(`create database ${quoteIdent(name)}`);
      new Logger('Database').log(`created database ${name}`);
    } catch (err) {
      // Created meanwhile by another process (an API and a worker starting together): 42P04 when the
      // other creation had committed, 23505 (pg_database_datname_index) when both ran at once.
      const code = (err as { code?: string }).code;
      if (code !== '42P04' && code !== '23505') throw err;
    }
  });
}

const MIGRATION_LOCK = 7_402_113; // any constant: one migrator at a time per database

/** What `runMigrations` found beside the migrations: a warning for the start-up log, if any (`maintenanceWarning`). */
export interface MigratedDatabase {
  maintenanceWarning?: string;
}

/**
 * Runs pending migrations under an advisory lock, so an API and a worker starting together do not
 * race, and reads on the same connection the server settings the start-up warns about.
 */
export async function runMigrations(config: LodeConfig, migrations: Migrations): Promise<MigratedDatabase> {
  await ensureDatabase(config.databaseUrl);
  const ds = new DataSource({ ...dataSourceOptions(config, migrations), extra: { max: 1 } });
  await ds.initialize();
  try {
    await ds.query(`select pg_advisory_lock($1)`, [MIGRATION_LOCK]);
    try {
      const ran = await ds.runMigrations({ transaction: 'each' });
      if (ran.length)
        new Logger('Database').log(`ran ${ran.length} migration(s): ${ran.map((m) => m.name).join(', ')}`);
    } finally {
      await ds.query(`select pg_advisory_unlock($1)`, [MIGRATION_LOCK]).catch(() => undefined);
    }
    return { maintenanceWarning: await maintenanceWarning(config, ds) };
  } finally {
    await ds.destroy();
  }
}

/**
 * A warning for the start-up log when the PostgreSQL server will never vacuum or analyze Lode's
 * tables by itself (`autovacuum` or `track_counts` off), or undefined. Lode updates rows all the
 * time (the outbox's outcomes, projects' and users' edits), and a table that is never vacuumed keeps
 * every dead row version and never gets planner statistics: queries slow down as it is used. Where
 * only autovacuum is off, Lode's workers analyze the tables (PlannerStatistics); Lode does not vacuum
 * on a schedule of its own (a rebuild does, once, for the tables it rewrote): that is the server's
 * job, and the operator's choice.
 */
async function maintenanceWarning(config: LodeConfig, ds: DataSource): Promise<string | undefined> {
  if (config.embeddedDatabase) return undefined; // PGlite: one session, nothing to run autovacuum
  const settings = await ds
    .query<{ autovacuum: string; track_counts: string }[]>(
      `select current_setting('autovacuum') as autovacuum, current_setting('track_counts') as track_counts`,
    )
    .catch(() => []); // the start-up goes on; a database that cannot answer this fails it soon enough
  if (!settings.length) return undefined;
  const off = Object.entries(settings[0])
    .filter(([, value]) => value !== 'on')
    .map(([name]) => name);
  if (!off.length) return undefined;
  const named = `PostgreSQL runs with ${off.map((name) => `${name} = off`).join(' and ')} for this database`;
  // With the changes counted, PlannerStatistics keeps the statistics; without, nothing knows what changed.
  if (!off.includes('track_counts'))
    return (
      `${named}: it never vacuums Lode's tables, which keep every dead row, so queries slow down with use ` +
      `(Lode's workers analyze the tables for the planner themselves); turn it on, or run "vacuumdb" on this database regularly`
    );
  return (
    `${named}: it never vacuums or analyzes Lode's tables, which keep every dead row and have no planner statistics, ` +
    `so queries slow down with use; turn ${off.length > 1 ? 'them' : 'it'} on, or run "vacuumdb --analyze" on this database regularly`
  );
}
