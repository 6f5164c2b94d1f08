import {
  EmbeddedPostgres,
  embeddedPaths,
  LodeConfig,
  movedMarker,
  runMigrations,
  type DatabaseHandle,
} from '@app/platform';
import type { Command } from 'commander';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MIGRATIONS } from '../lode.module';
import {
  backup,
  describeBackup,
  describeRestore,
  restore,
  RestoreRefused,
  type OperationProgress,
} from '../operations';
import { CliFailure, EXIT, UsageError, type ExitCode } from './exit-codes';
import type { LodeRun } from './lode-run';
import { cliConfig, openDatabase, redactedUrl, requireLodeDatabase } from './open-lode';
import { note, print, progress } from './output';

/** One progress bar per phase of a backup or restore (database, repositories, files), on a terminal. */
function phases(): { listener: (p: OperationProgress) => void; stop: () => void } {
  let phase = '';
  let bar: ReturnType<typeof progress> | undefined;
  return {
    listener: (p) => {
      if (p.phase !== phase) {
        bar?.stop();
        phase = p.phase;
        bar = progress(p.phase, p.total);
      }
      bar?.update(p.done, p.total);
    },
    stop: () => bar?.stop(),
  };
}

/** A restore refused before it changed anything is the command failing (exit 1), in its own words. */
async function refusalsAsFailures<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof RestoreRefused) throw new CliFailure(err.message);
    throw err;
  }
}

async function runBackup(config: LodeConfig, o: { to: string; withSecrets?: boolean }): Promise<ExitCode> {
  const database = await openDatabase(config);
  const bars = phases();
  try {
    await requireLodeDatabase(config.databaseUrl);
    const summary = await backup({ config, to: o.to, withSecrets: o.withSecrets ?? false, progress: bars.listener });
    bars.stop();
    for (const line of describeBackup(summary)) print(line);
    return EXIT.ok;
  } finally {
    bars.stop();
    await database.stop();
  }
}

async function runRestore(config: LodeConfig, o: { from: string }): Promise<ExitCode> {
  // Into an empty installation: in embedded mode a data directory with no database yet gets one here.
  const database = await openDatabase(config, { create: true });
  const bars = phases();
  let summary;
  try {
    summary = await refusalsAsFailures(() => restore({ config, from: o.from, progress: bars.listener }));
  } finally {
    bars.stop();
    await database.stop();
  }
  // The whole command, from the process's start: loading Lode, the embedded database's start and its
  // flush to disk at the end can take longer than the copy itself, and the operator waits for all of it.
  const seconds = process.uptime();
  for (const line of describeRestore({ ...summary, seconds })) print(line);
  return EXIT.ok;
}

/**
 * Copies the embedded database into an empty PostgreSQL database: a database-only backup of the
 * embedded instance into a file of the system's temporary directory, restored into the target in
 * one transaction. The data directory (repositories, uploads, keys) stays where it is, for the new
 * setup to keep using.
 */
async function migrateEmbedded(config: LodeConfig, o: { to: string }): Promise<ExitCode> {
  if (!config.embeddedDatabase)
    throw new UsageError('DATABASE_URL is set: there is no embedded database to migrate (unset it to name the source)');
  let target: URL;
  try {
    target = new URL(o.to);
  } catch {
    throw new UsageError(`--to must be a PostgreSQL connection string (postgres://user:password@host/database)`);
  }
  if (target.protocol !== 'postgres:' && target.protocol !== 'postgresql:')
    throw new UsageError(`--to must be a postgres:// connection string, not ${target.protocol}//...`);
  if (await EmbeddedPostgres.answers(embeddedPaths(config.dataDir).socketDir))
    throw new CliFailure(
      'a running Lode serves the embedded database: stop it first, so no change is made after the copy',
    );
  const database: DatabaseHandle = await openDatabase(config);
  const work = await mkdtemp(join(tmpdir(), 'lode-migrate-'));
  const bars = phases();
  try {
    await requireLodeDatabase(config.databaseUrl);
    // The copy is taken at this Lode's level, which the target then gets too.
    await runMigrations(config, MIGRATIONS);
    note(`copying the embedded database in ${embeddedPaths(config.dataDir).data} to ${redactedUrl(o.to)}`);
    const file = join(work, 'database.tar');
    const copied = await backup({ config, to: file, databaseOnly: true, progress: bars.listener });
    bars.stop();
    const into = Object.assign(new LodeConfig(), config, { databaseUrl: o.to, embeddedDatabase: false });
    const summary = await refusalsAsFailures(() =>
      restore({ config: into, from: file, databaseOnly: true, progress: bars.listener }),
    );
    bars.stop();
    print(
      `copied ${summary.database.rows} rows in ${summary.database.tables} tables (${summary.database.events} events) ` +
        `and ${summary.database.sequences} sequences to ${redactedUrl(o.to)} in ${(copied.seconds + summary.seconds).toFixed(1)} s`,
    );
    // The copy left behind is marked, so a start without DATABASE_URL is refused rather than serving it.
    await writeFile(
      movedMarker(config.dataDir),
      `${JSON.stringify({ to: redactedUrl(o.to), at: new Date().toISOString() })}\n`,
    );
    print(`start Lode with DATABASE_URL set to it; the repositories and files stay in ${config.dataDir}`);
    return EXIT.ok;
  } finally {
    bars.stop();
    await rm(work, { recursive: true, force: true });
    await database.stop();
  }
}

/** `backup`, `restore` and `migrate-embedded`: whole-installation operations that work below Nest. */
export function registerBackupCommands(program: Command, run: LodeRun): void {
  program
    .command('backup')
    .description('write one archive of the database snapshot, every repository, uploads and avatars, while Lode serves')
    .requiredOption('--to <file|dir>', 'the archive to write (must not exist), or a directory to write it into')
    .option('--with-secrets', 'also carry the SSH host keys, the secret key file and initial_root_token')
    .action(run.withConfig((o: { to: string; withSecrets?: boolean }) => runBackup(cliConfig(), o)));
  program
    .command('restore')
    .description(
      'put an archive back into an EMPTY installation (database without rows, data directory without repositories)',
    )
    .requiredOption('--from <file>', 'the archive `lode backup` wrote')
    .action(run.withConfig((o: { from: string }) => runRestore(cliConfig(), o)));
  program
    .command('migrate-embedded')
    .description('copy the embedded database (no DATABASE_URL) into an empty PostgreSQL database; stop Lode first')
    .requiredOption('--to <url>', 'the PostgreSQL database to copy into (postgres://user:password@host/database)')
    .action(run.withConfig((o: { to: string }) => migrateEmbedded(cliConfig(), o)));
}
