import {
  describeDatabaseUrl,
  embeddedPaths,
  LodeConfig,
  type DatabaseHandle,
  Logs,
  RedactingLogger,
  runMigrations,
  startDatabase,
  withOwnConnection,
} from '@app/platform';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Logger, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { LodeModule, MIGRATIONS } from '../lode.module';
import { DatabaseUnusable, UsageError } from './exit-codes';

/** An open Lode for one command: the whole application without HTTP or workers. */
export interface Lode {
  app: INestApplicationContext;
  config: LodeConfig;
  close(): Promise<void>;
}

/** How long the command line waits for PostgreSQL to answer before it gives up (exit 3). */
const PROBE_TIMEOUT_MS = 5000;

/** The settings from the environment, as the server reads them; only warnings and errors are logged (to stderr). */
export function cliConfig(env: NodeJS.ProcessEnv = process.env): LodeConfig {
  let config: LodeConfig;
  try {
    config = LodeConfig.fromEnv(env);
  } catch (err) {
    throw new UsageError((err as Error).message); // a setting with a bad value, named by the message
  }
  config.logLevel = 'warn';
  Logs.configure(config.logLevel, config.logFormat, 'stderr');
  // Nest's static Logger too (migrations, the embedded database): warnings and errors, to stderr, redacted.
  Logger.overrideLogger(new RedactingLogger(['error', 'warn']));
  return config;
}

/**
 * The one place the command line opens Lode. Unlike the server, which creates its database and
 * migrates it on first start, the command line only works on a database where Lode has run: it
 * refuses (exit 3) one that is unreachable, absent or holds no Lode schema, naming it, and does not
 * create it; run with the wrong settings, it must not leave an empty Lode behind. It does run the
 * migrations still pending on a Lode database (an upgrade's new tables), as the server would.
 */
export async function openLode(config: LodeConfig): Promise<Lode> {
  const database = await openDatabase(config);
  try {
    await requireLodeDatabase(config.databaseUrl);
    await runMigrations(config, MIGRATIONS);
    const app = await NestFactory.createApplicationContext(LodeModule.forRoot(config, { http: false, worker: false }), {
      logger: new RedactingLogger(['error', 'warn']),
    });
    return {
      app,
      config,
      close: async () => {
        await app.close();
        await database.stop();
      },
    };
  } catch (err) {
    await database.stop();
    throw err;
  }
}

/**
 * The database the command line works on. In embedded mode (no DATABASE_URL) that is the one a
 * running Lode serves on its socket, or, with Lode stopped, the data directory opened here; a data
 * directory without one is refused rather than given a new empty database (unless `create`: a
 * restore into an empty installation).
 */
export async function openDatabase(config: LodeConfig, options: { create?: boolean } = {}): Promise<DatabaseHandle> {
  if (config.embeddedDatabase && !options.create) {
    const { data } = embeddedPaths(config.dataDir);
    if (!existsSync(join(data, 'PG_VERSION')))
      throw new DatabaseUnusable(
        `no embedded database in ${data}; start Lode once with these settings first, or set DATABASE_URL (LODE_DATA_DIR is ${config.dataDir})`,
      );
  }
  try {
    return await startDatabase(config);
  } catch (err) {
    throw new DatabaseUnusable(`cannot open the embedded database: ${(err as Error).message}`);
  }
}

/** The database URL with its password replaced, fit to print. */
export const redactedUrl = describeDatabaseUrl;

/** Connects once and looks for Lode's migration table; throws DatabaseUnusable with what is wrong. */
export async function requireLodeDatabase(databaseUrl: string): Promise<void> {
  const shown = redactedUrl(databaseUrl);
  const found = await withOwnConnection(databaseUrl, { connectTimeoutMs: PROBE_TIMEOUT_MS }, async (client) => {
    const { rows } = await client.query<{ found: string | null }>(`select to_regclass('schema_migrations') as found`);
    return Boolean(rows[0]?.found);
  }).catch((err: Error & { code?: string }) => {
    if (err.code === '3D000')
      throw new DatabaseUnusable(
        `the database ${shown} does not exist; start Lode once with these settings first (DATABASE_URL)`,
      );
    throw new DatabaseUnusable(`cannot use the database ${shown}: ${err.message || err.code || String(err)}`);
  });
  if (!found)
    throw new DatabaseUnusable(
      `the database ${shown} holds no Lode (no schema_migrations table); start Lode once with these settings first`,
    );
}
