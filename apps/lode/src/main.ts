import 'reflect-metadata';
import { cpus } from 'node:os';
import { LodeConfig, Logs, RedactingLogger, runMigrations, startDatabase, type DatabaseHandle } from '@app/platform';
import { drainHandedOff } from '@app/git';
import { GitSshServer } from '@app/repositories';
import { SeedRoot } from '@app/users';
import { Logger, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { CommandBus } from '@nestjs/cqrs';
import { createHttpApp, logLevels } from './http-app';
import { LodeModule, MIGRATIONS } from './lode.module';

// Repository reads run libgit2 (nodegit) on libuv's thread pool, beside file I/O, DNS and zlib; its
// default of 4 threads would queue them. The pool starts at its first use, after this line.
process.env.UV_THREADPOOL_SIZE ??= String(Math.max(8, cpus().length * 2));

/**
 * `npm start`: migrations, then the API and the workers in one process (`LODE_ROLE=all`), or one
 * side of them (`api`, `worker`), then root's first start.
 */
async function bootstrap(): Promise<void> {
  const config = LodeConfig.fromEnv();
  // Every line this process logs is a pino line (LODE_LOG_FORMAT) through redactSecrets (no token,
  // password or URL credentials).
  Logs.configure(config.logLevel, config.logFormat);
  Logger.overrideLogger(new RedactingLogger(logLevels(config.logLevel)));
  const logger = new Logger('Lode');
  const database = await startDatabase(config);
  if (database.mode === 'embedded-shared')
    // A command line has the stopped instance's files open: serving through it would lose the
    // database the moment the command ends.
    throw new Error(
      `another process (a lode command?) has the embedded database in ${database.location} open; wait for it to end, then start Lode`,
    );
  logger.log(startupMode(config, database));
  const { maintenanceWarning } = await runMigrations(config, MIGRATIONS);
  if (maintenanceWarning) logger.warn(maintenanceWarning);
  const app = config.runsApi
    ? await createHttpApp(config)
    : await NestFactory.createApplicationContext(LodeModule.forRoot(config), {
        logger: new RedactingLogger(logLevels(config.logLevel)),
      });
  await app.init(); // registers command handlers before the first command
  await app.get(CommandBus).execute(new SeedRoot());
  if (config.runsApi) {
    await (app as INestApplication).listen(config.port, config.host);
    logger.log(
      `Lode (${config.role}) listening on http://${config.host}:${config.port}, external URL ${config.externalUrl}`,
    );
  } else {
    logger.log(`Lode worker running`);
  }
  stopGracefully(app, database, config.runsApi, config.shutdownTimeout * 1000, logger);
}

/** The start-up line that says which mode runs and where the data lives. */
function startupMode(config: LodeConfig, database: DatabaseHandle): string {
  const queues =
    config.queueBackend === 'redis'
      ? 'job queues in Redis'
      : "job queues in the database (BullMQ's PostgreSQL backend)";
  if (database.mode === 'postgres') return `database ${database.location}; ${queues}`;
  return `embedded mode: database PGlite in ${database.location} (one machine, one process; set DATABASE_URL for PostgreSQL); ${queues}`;
}

/**
 * SIGTERM and SIGINT first stop taking connections and let the requests and git-over-SSH commands in
 * flight finish (up to LODE_SHUTDOWN_TIMEOUT, `drainMs`), then close the application (workers, queues, the database pool). Nest's own shutdown
 * hooks close the pool while requests still run, which fails them with `Connection terminated`.
 */
function stopGracefully(
  app: INestApplication | Awaited<ReturnType<typeof NestFactory.createApplicationContext>>,
  database: DatabaseHandle,
  http: boolean,
  drainMs: number,
  logger: Logger,
): void {
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.log(`${signal}: stopping`);
    if (http) {
      const server = (app as INestApplication).getHttpServer() as import('node:http').Server;
      await Promise.all([
        new Promise<void>((resolve) => {
          let drained = false;
          server.close(() => {
            drained = true;
            resolve();
          });
          server.closeIdleConnections();
          setTimeout(() => {
            if (drained) return;
            // The window is over: what still runs (a slow push, a stalled download) is cut, so the
            // process stops within docker-compose's stop_grace_period instead of being killed.
            logger.warn(`closing the HTTP connections still open after ${drainMs / 1000} s`);
            server.closeAllConnections();
            resolve();
          }, drainMs).unref();
        }),
        // Running clones and pushes over SSH get the same window, and so do the archive downloads
        // handed to the git helper (the HTTP server no longer counts their connections).
        app.get(GitSshServer).stop(drainMs),
        drainHandedOff(drainMs),
      ]);
    }
    await app.close();
    await database.stop();
    process.exit(0);
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => void stop(signal));
}

bootstrap().catch((err) => {
  new Logger('Lode').error(`start-up failed: ${err instanceof Error ? err.stack : String(err)}`);
  process.exit(1);
});
