import { bundleRepository, describeRepository, repositoryPath } from '@app/git';
import { buildRevision, pgSql, quoteIdent, withOwnConnection, type LodeConfig } from '@app/platform';
import { allProjectIds } from '@app/projects';
import { createReadStream } from 'node:fs';
import { lstat, readdir, rename, rm, stat } from 'node:fs/promises';
import { basename, join, relative, resolve, sep } from 'node:path';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import pg from 'pg';
import {
  BACKUP_FORMAT,
  HEADER_ENTRY,
  MANIFEST_ENTRY,
  EMBEDDED_DATABASE_PATHS,
  REGENERATED_PATHS,
  SECRET_PATHS,
  SEQUENCES_ENTRY,
  lodeVersion,
  type BackupHeader,
  type BackupManifest,
  type FileDump,
  type MigrationLevel,
  type ProgressListener,
  type RepositoryDump,
  type SequenceValue,
  type TableDump,
} from './archive-layout';
import { TarWriter, type WrittenEntry } from './tar';

const gzipAsync = promisify(gzip);

export interface BackupOptions {
  config: LodeConfig;
  /** The archive to write (must not exist), or an existing directory to write `lode-backup-<time>.tar` into. */
  to: string;
  /** Also carry the SSH host keys, the secret key file and `initial_root_token`. */
  withSecrets?: boolean;
  /** The database alone, no repositories or files (`lode migrate-embedded`, where they stay in place). */
  databaseOnly?: boolean;
  progress?: ProgressListener;
}

export interface BackupSummary {
  file: string;
  bytes: number;
  seconds: number;
  database: { tables: number; rows: number; events: number; sequences: number; migrationLevel: string | null };
  repositories: { total: number; empty: number; refs: number; bytes: number };
  files: { count: number; bytes: number };
  secrets: { included: string[]; leftOut: string[] };
  /** What was left out or found odd, and what it means, in sentences. */
  notes: string[];
}

/** Rows fetched from the cursor at a time, and the most (uncompressed) text one database entry holds. */
const FETCH_ROWS = 2000;
const ENTRY_TEXT_BYTES = 8 * 1024 * 1024;

const posix = (path: string): string => path.split(sep).join('/');

/**
 * Writes one archive of the whole installation while it keeps serving: the database as one
 * snapshot (a REPEATABLE READ READ ONLY transaction, so every table, the migration level and the
 * events agree with each other), then the repositories of the projects in that snapshot as git
 * bundles, then uploads and avatars (and the secrets when asked). The archive is written under a
 * `.partial` name and renamed when complete.
 */
export async function backup(options: BackupOptions): Promise<BackupSummary> {
  const started = Date.now();
  const { config, progress } = options;
  const withSecrets = options.withSecrets ?? false;
  const file = await archivePath(options.to);
  const partial = `${file}.partial`;
  const createdAt = new Date();
  const mtime = Math.floor(createdAt.getTime() / 1000);
  const notes: string[] = [];
  const entries: BackupManifest['entries'] = {};
  const record = (e: WrittenEntry): string => {
    entries[e.name] = { size: e.size, sha256: e.sha256 };
    return e.name;
  };

  const tar = await TarWriter.create(partial);
  try {
    // The snapshot may take long on a large installation; the role's own limits must not end it. The
    // read-only transaction ends with its connection, before the repositories are bundled.
    const snapshotOptions = { applicationName: 'lode-backup', statementTimeoutMs: 0, idleInTransactionTimeoutMs: 0 };
    const { at, header, tables, sequences, projectIds } = await withOwnConnection(
      config.databaseUrl,
      snapshotOptions,
      async (client) => {
        await client.query(`begin isolation level repeatable read read only`);
        const { rows } = await client.query<{ at: Date }>(`select now() as at`); // takes the snapshot
        const header: BackupHeader = {
          format: BACKUP_FORMAT,
          lode: lodeVersion(buildRevision()),
          createdAt: createdAt.toISOString(),
          withSecrets,
          migrations: await readMigrations(client),
        };
        record(await tar.addBuffer(HEADER_ENTRY, json(header), { mtime }));
        const tables = await dumpTables(client, tar, record, mtime, progress);
        const sequences = await readSequences(client);
        record(await tar.addBuffer(SEQUENCES_ENTRY, json(sequences), { mtime }));
        const projectIds = await allProjectIds(pgSql(client));
        await client.query('commit');
        return { at: rows[0].at, header, tables, sequences, projectIds };
      },
    );
    const migrations = header.migrations;

    const repositories = options.databaseOnly
      ? []
      : await dumpRepositories(config, projectIds, tar, record, mtime, notes, progress);
    const files = options.databaseOnly ? [] : await dumpFiles(config, withSecrets, tar, record, notes, progress);
    const secretKey = config.secretKey
      ? 'environment'
      : (await exists(join(config.dataDir, 'secret.key')))
        ? 'file'
        : 'none';
    const leftOut = withSecrets ? [] : await presentSecrets(config.dataDir);
    notes.push(...secretNotes(config, withSecrets, leftOut));

    const rows = tables.reduce((n, t) => n + t.rows, 0);
    const events = tables.find((t) => t.name === 'events')?.rows ?? 0;
    const manifest: BackupManifest = {
      ...header,
      snapshotAt: at.toISOString(),
      database: { tables, sequences: sequences.length, rows, events },
      repositories,
      files,
      secretKey,
      entries,
    };
    await tar.addBuffer(MANIFEST_ENTRY, json(manifest), { mtime });
    await tar.finish();
    await rename(partial, file);

    const bundleBytes = repositories.reduce((n, r) => n + (r.bundle ? entries[r.bundle].size : 0), 0);
    const fileBytes = files.reduce((n, f) => n + entries[f.entry].size, 0);
    return {
      file,
      bytes: (await stat(file)).size,
      seconds: (Date.now() - started) / 1000,
      database: {
        tables: tables.length,
        rows,
        events,
        sequences: sequences.length,
        migrationLevel: migrations.at(-1)?.name ?? null,
      },
      repositories: {
        total: repositories.length,
        empty: repositories.filter((r) => !r.bundle).length,
        refs: repositories.reduce((n, r) => n + r.refs, 0),
        bytes: bundleBytes,
      },
      files: { count: files.filter((f) => !f.secret).length, bytes: fileBytes },
      secrets: { included: files.filter((f) => f.secret).map((f) => f.path), leftOut },
      notes,
    };
  } catch (err) {
    await tar.abandon();
    await rm(partial, { force: true });
    throw err;
  }
}

/** The lines a command line prints after a backup. */
export function describeBackup(s: BackupSummary): string[] {
  const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
  return [
    `wrote ${s.file} (${mb(s.bytes)}) in ${s.seconds.toFixed(1)} s`,
    `database: ${s.database.rows} rows in ${s.database.tables} tables (${s.database.events} events), ` +
      `${s.database.sequences} sequences, migration level ${s.database.migrationLevel ?? 'none'}`,
    `repositories: ${s.repositories.total} (${s.repositories.empty} empty), ${s.repositories.refs} refs, ` +
      `${mb(s.repositories.bytes)} of bundles`,
    `files: ${s.files.count} uploads and avatars, ${mb(s.files.bytes)}`,
    s.secrets.included.length
      ? `secrets included: ${s.secrets.included.join(', ')} (keep this archive as safe as the server itself)`
      : `secrets: none included`,
    ...s.notes.map((n) => `note: ${n}`),
  ];
}

async function archivePath(to: string): Promise<string> {
  const target = resolve(to);
  const isDirectory = await stat(target).then(
    (s) => s.isDirectory(),
    () => false,
  );
  if (!isDirectory) {
    if (await exists(target)) throw new Error(`${target} exists already; a backup never overwrites a file`);
    return target;
  }
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '');
  return join(target, `lode-backup-${stamp}.tar`);
}

const exists = (path: string) =>
  lstat(path).then(
    () => true,
    () => false,
  );

const json = (value: unknown): Buffer => Buffer.from(`${JSON.stringify(value, null, 1)}\n`);

async function readMigrations(client: pg.Client): Promise<MigrationLevel[]> {
  const { rows } = await client.query<{ timestamp: string; name: string }>(
    `select timestamp::text as timestamp, name from schema_migrations order by id`,
  );
  return rows.map((r) => ({ timestamp: Number(r.timestamp), name: r.name }));
}

/**
 * Every table of the `public` schema (Lode's; other schemas, such as a queue's, are not Lode's
 * state), each row as `row_to_json` text: never parsed here, so no bigint or timestamp loses
 * precision on the way. Batches of rows become gzipped entries.
 */
async function dumpTables(
  client: pg.Client,
  tar: TarWriter,
  record: (e: WrittenEntry) => string,
  mtime: number,
  progress?: ProgressListener,
): Promise<TableDump[]> {
  const { rows: tables } = await client.query<{ name: string; columns: string[] }>(
    `select c.relname::text as name,
            array(select a.attname::text from pg_attribute a
                   where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped and a.attgenerated = ''
                   order by a.attnum) as columns
       from pg_class c
      where c.relnamespace = 'public'::regnamespace and c.relkind in ('r', 'p') and c.relname <> 'schema_migrations'
      order by c.relname`,
  );
  const total = await tableCounts(
    client,
    tables.map((t) => t.name),
  );
  const all = [...total.values()].reduce((a, b) => a + b, 0);
  const dumps: TableDump[] = [];
  let done = 0;
  for (const table of tables) {
    const dump: TableDump = { name: table.name, columns: table.columns, rows: 0, entries: [] };
    await client.query(
      `declare backup_rows no scroll cursor for select row_to_json(t)::text as j from ${quoteIdent(table.name)} t`,
    );
    let lines: string[] = [];
    let bytes = 0;
    const flush = async () => {
      if (!lines.length) return;
      const name = `database/${table.name}/${String(dump.entries.length + 1).padStart(6, '0')}.ndjson.gz`;
      dump.entries.push(record(await tar.addBuffer(name, await gzipAsync(`${lines.join('\n')}\n`), { mtime })));
      lines = [];
      bytes = 0;
    };
    for (;;) {
      const { rows } = await client.query<{ j: string }>(`fetch forward ${FETCH_ROWS} from backup_rows`);
      for (const row of rows) {
        lines.push(row.j);
        bytes += row.j.length;
      }
      dump.rows += rows.length;
      done += rows.length;
      progress?.({ phase: 'database', done, total: all, item: table.name });
      if (bytes >= ENTRY_TEXT_BYTES) await flush();
      if (rows.length < FETCH_ROWS) break;
    }
    await flush();
    await client.query(`close backup_rows`);
    dumps.push(dump);
  }
  return dumps;
}

async function tableCounts(client: pg.Client, names: string[]): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const name of names) {
    const { rows } = await client.query<{ n: string }>(`select count(*)::text as n from ${quoteIdent(name)}`);
    counts.set(name, Number(rows[0].n));
  }
  return counts;
}

/**
 * Sequences are not transactional: their value is read now, which is at least every id the
 * snapshot holds (those were taken before it), so a restored sequence never hands out an id again.
 */
async function readSequences(client: pg.Client): Promise<SequenceValue[]> {
  const { rows: names } = await client.query<{ name: string }>(
    `select relname::text as name from pg_class where relnamespace = 'public'::regnamespace and relkind = 'S' order by relname`,
  );
  const values: SequenceValue[] = [];
  for (const { name } of names) {
    const { rows } = await client.query<{ last_value: string; is_called: boolean }>(
      `select last_value::text as last_value, is_called from ${quoteIdent(name)}`,
    );
    values.push({ name, lastValue: rows[0].last_value, isCalled: rows[0].is_called });
  }
  return values;
}

/**
 * The repositories of the projects in the snapshot, each as git bundled it (refs listed once, so
 * consistent with themselves even while pushes run). They are read after the snapshot, so a push
 * made meanwhile may be in a repository and not yet in the database (as after a crash between a
 * push and its record); never the reverse. A repository on disk whose project the snapshot does
 * not hold (created since, or a leftover) is not carried: restored, it would be taken over by the
 * next project given that id.
 */
async function dumpRepositories(
  config: LodeConfig,
  projectIds: number[],
  tar: TarWriter,
  record: (e: WrittenEntry) => string,
  mtime: number,
  notes: string[],
  progress?: ProgressListener,
): Promise<RepositoryDump[]> {
  const dumps: RepositoryDump[] = [];
  const missing: number[] = [];
  const carried = new Set<string>();
  for (const [index, projectId] of projectIds.entries()) {
    const path = repositoryPath(config.dataDir, projectId);
    const rel = posix(relative(config.dataDir, path));
    progress?.({ phase: 'repositories', done: index, total: projectIds.length, item: rel });
    const dump = await dumpRepository(projectId, path, rel, tar, record, mtime);
    if (dump) {
      dumps.push(dump);
      carried.add(rel);
    } else missing.push(projectId);
  }
  progress?.({ phase: 'repositories', done: projectIds.length, total: projectIds.length });
  if (missing.length)
    notes.push(
      `${missing.length} project(s) had no repository on disk (removed since the snapshot, or lost): ${missing.join(', ')}`,
    );
  const extra = (await repositoriesOnDisk(config.dataDir)).filter((rel) => !carried.has(rel));
  if (extra.length)
    notes.push(
      `${extra.length} repository(ies) on disk belong to no project of the snapshot (created since, or left over) and were not backed up`,
    );
  return dumps;
}

async function dumpRepository(
  projectId: number,
  path: string,
  rel: string,
  tar: TarWriter,
  record: (e: WrittenEntry) => string,
  mtime: number,
): Promise<RepositoryDump | undefined> {
  for (let attempt = 0; ; attempt++) {
    const description = await describeRepository(path);
    if (!description) return undefined;
    const base = { projectId, path: rel, head: description.head, config: description.config };
    const dump: RepositoryDump = { ...base, objectFormat: description.objectFormat, refs: 0, bundle: null };
    if (description.refs === 0) return dump;
    const { stream, done } = bundleRepository(path);
    const refs = new BundleRefCounter();
    const start = tar.bytes;
    try {
      const written = await tar.addStream(`${rel}.bundle`, refs.count(stream), { mtime });
      await done;
      dump.bundle = record(written);
      dump.refs = refs.refs;
      return dump;
    } catch (err) {
      await done.catch(() => undefined);
      // git may fail after its output ended (the stream closed cleanly): that entry must not stay in
      // the archive beside the next attempt's, under the same name.
      await tar.cutBackTo(start);
      // Its last ref deleted, or the repository removed, between the look and the bundle: look again.
      if (attempt < 2) continue;
      throw err;
    }
  }
}

/** Counts the refs a bundle's header lists (`<id> <ref>` lines up to the blank line), HEAD left out. */
class BundleRefCounter {
  refs = 0;
  private header = '';
  private ended = false;

  async *count(stream: AsyncIterable<Buffer>): AsyncIterable<Buffer> {
    for await (const chunk of stream) {
      if (!this.ended) this.read(chunk);
      yield chunk;
    }
  }

  private read(chunk: Buffer): void {
    this.header += chunk.toString('latin1', 0, Math.min(chunk.length, 1 << 20));
    const end = this.header.indexOf('\n\n');
    if (end < 0 && this.header.length < 1 << 26) return;
    this.ended = true;
    this.refs = (end >= 0 ? this.header.slice(0, end) : this.header)
      .split('\n')
      .filter((line) => /^[0-9a-f]{40,64} refs\//.test(line)).length;
    this.header = '';
  }
}

/** Every `*.git` repository under `repositories/@hashed`, relative to the data directory. */
async function repositoriesOnDisk(dataDir: string): Promise<string[]> {
  const found: string[] = [];
  const root = join(dataDir, 'repositories', '@hashed');
  const list = (dir: string) => readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const a of await list(root))
    for (const b of a.isDirectory() ? await list(join(root, a.name)) : [])
      for (const e of b.isDirectory() ? await list(join(root, a.name, b.name)) : [])
        if (e.isDirectory() && e.name.endsWith('.git'))
          found.push(posix(relative(dataDir, join(root, a.name, b.name, e.name))));
  return found;
}

/** Regular files under `dir`, relative to `base`; a directory removed while walking is skipped. */
async function filesUnder(base: string, dir: string): Promise<string[]> {
  const found: string[] = [];
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const path = join(dir, e.name);
    if (e.isDirectory()) found.push(...(await filesUnder(base, path)));
    else if (e.isFile()) found.push(posix(relative(base, path)));
  }
  return found;
}

/**
 * Uploads and avatars (`uploads/`), and with `withSecrets` the SSH host keys, the secret key file
 * and `initial_root_token`. An avatar being replaced (`.incoming-*`) or a file removed while the
 * backup runs is skipped: the snapshot's record of it is what counts.
 */
async function dumpFiles(
  config: LodeConfig,
  withSecrets: boolean,
  tar: TarWriter,
  record: (e: WrittenEntry) => string,
  notes: string[],
  progress?: ProgressListener,
): Promise<FileDump[]> {
  const dataDir = config.dataDir;
  const uploads = (await filesUnder(dataDir, join(dataDir, 'uploads'))).filter(
    (p) => !basename(p).startsWith('.incoming-'),
  );
  const secrets = withSecrets ? await secretFiles(dataDir) : [];
  const dumps: FileDump[] = [];
  let vanished = 0;
  const all = [...uploads.map((p) => ({ p, secret: false })), ...secrets.map((p) => ({ p, secret: true }))];
  for (const [index, { p, secret }] of all.entries()) {
    progress?.({ phase: secret ? 'secrets' : 'files', done: index, total: all.length, item: p });
    const full = join(dataDir, p);
    const info = await stat(full).catch(() => undefined);
    if (!info?.isFile()) {
      vanished += 1;
      continue;
    }
    try {
      const written = await tar.addStream(`data/${p}`, createReadStream(full), {
        mode: info.mode,
        mtime: info.mtimeMs / 1000,
      });
      dumps.push({ path: p, entry: record(written), secret });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      vanished += 1;
    }
  }
  progress?.({ phase: 'files', done: all.length, total: all.length });
  if (vanished) notes.push(`${vanished} file(s) were removed while the backup ran and are not in it`);
  const unknown = (await readdir(dataDir).catch(() => [] as string[])).filter(
    (name) =>
      !['repositories', 'uploads', ...REGENERATED_PATHS, ...EMBEDDED_DATABASE_PATHS, ...SECRET_PATHS].includes(name) &&
      !name.startsWith('secret.key.'),
  );
  if (unknown.length) notes.push(`not backed up, unknown to this Lode: ${unknown.map((n) => `${n}`).join(', ')}`);
  return dumps;
}

async function secretFiles(dataDir: string): Promise<string[]> {
  const found: string[] = [];
  for (const p of SECRET_PATHS) {
    const info = await stat(join(dataDir, p)).catch(() => undefined);
    if (info?.isDirectory())
      found.push(...(await filesUnder(dataDir, join(dataDir, p))).filter((f) => !/\.tmp-[0-9a-f]+$/.test(f)));
    else if (info?.isFile()) found.push(p);
  }
  return found;
}

/** The secret files present in the data directory (directories as `ssh/`). */
async function presentSecrets(dataDir: string): Promise<string[]> {
  const present: string[] = [];
  for (const p of SECRET_PATHS) {
    const info = await stat(join(dataDir, p)).catch(() => undefined);
    if (info?.isDirectory()) present.push(`${p}/`);
    else if (info?.isFile()) present.push(p);
  }
  return present;
}

/** What leaving the secrets out means for the restored installation, in words. */
function secretNotes(config: LodeConfig, withSecrets: boolean, leftOut: string[]): string[] {
  const notes: string[] = [];
  if (config.secretKey)
    notes.push(
      'hook secrets are sealed with LODE_SECRET_KEY, which no backup holds: the restored installation needs the same LODE_SECRET_KEY to deliver hooks with their tokens',
    );
  if (withSecrets) return notes;
  if (leftOut.includes('secret.key'))
    notes.push(
      'secret.key was left out (no --with-secrets): the restored installation cannot open the sealed hook tokens and URL passwords unless its data directory gets this same secret.key (or LODE_SECRET_KEY names the same key)',
    );
  if (leftOut.includes('ssh/'))
    notes.push(
      'the SSH host keys (ssh/) were left out: the restored installation makes new ones, and git clients over SSH will see a changed host key and refuse to connect until they accept it',
    );
  if (leftOut.includes('initial_root_token'))
    notes.push(
      'initial_root_token was left out: the token itself still works after a restore (tokens are kept as digests), only the file with its text is not restored',
    );
  return notes;
}
