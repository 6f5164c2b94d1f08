import { restoreRepository } from '@app/git';
import { sealedSecretSample } from '@app/hooks';
import {
  pgSql,
  quoteIdent,
  runMigrations,
  SECRET_KEY_FILE,
  SecretBox,
  withOwnConnection,
  type LodeConfig,
} from '@app/platform';
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { chmod, mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import pg from 'pg';
import type { MigrationInterface } from 'typeorm';
import { MIGRATIONS } from '../lode.module';
import {
  BACKUP_FORMAT,
  HEADER_ENTRY,
  MANIFEST_ENTRY,
  SECRET_PATHS,
  SEQUENCES_ENTRY,
  type BackupHeader,
  type BackupManifest,
  type ProgressListener,
  type SequenceValue,
} from './archive-layout';
import { ArchiveDamaged, TarReader, type TarEntry } from './tar';

const gunzipAsync = promisify(gunzip);

export interface RestoreOptions {
  config: LodeConfig;
  /** The archive a backup wrote. */
  from: string;
  /** The database alone: the data directory is left as it is (`lode migrate-embedded`). */
  databaseOnly?: boolean;
  progress?: ProgressListener;
}

export interface RestoreSummary {
  from: string;
  seconds: number;
  /** The archive's size. */
  bytes: number;
  createdAt: string;
  lodeVersion: string;
  database: { tables: number; rows: number; events: number; sequences: number; migrationLevel: string | null };
  repositories: { total: number; empty: number; refs: number };
  files: { count: number; bytes: number };
  secrets: { restored: string[] };
  /** Migrations this Lode has beyond the archive's level: they run at the next start, as after an upgrade. */
  pendingMigrations: string[];
  notes: string[];
}

/** A restore refused before it changed anything, or an archive that cannot be restored; the message says why. */
export class RestoreRefused extends Error {}

/** Rows sent in one `insert ... json_populate_recordset` (a database entry holds a few thousand). */
const INSERT_ROWS = 5000;

/**
 * Restores an archive `backup` wrote into an EMPTY installation (a database without rows, a data
 * directory without repositories or uploads): runs the migrations up to the archive's level, then in
 * ONE transaction inserts every row and sets every sequence; meanwhile it puts back every repository
 * (all refs, HEAD, config) and file. The transaction commits only after the whole archive has been
 * read and every entry's SHA-256 matched: on any failure the database is left empty (migrated) and
 * every repository and file put back is removed again. Secrets are written last, after the commit.
 */
export async function restore(options: RestoreOptions): Promise<RestoreSummary> {
  const started = Date.now();
  const { config, progress } = options;
  const from = resolve(options.from);
  const archive = await openArchive(from);
  try {
    const { header, manifest } = await readManifest(archive);
    const known = migrationNames(config);
    const unknown = manifest.migrations.filter((m) => !known.includes(m.name));
    if (unknown.length)
      throw new RestoreRefused(
        `the archive comes from a newer Lode: its database has ${unknown.length} migration(s) this Lode does not know ` +
          `(${unknown.map((m) => m.name).join(', ')}); restore it with that version or a later one`,
      );
    const archived = new Set(manifest.migrations.map((m) => m.name));
    if (!options.databaseOnly) await refuseNonEmptyDataDir(config.dataDir);
    await refuseNonEmptyDatabase(config, archived);

    // Creates the database if need be, and the schema as it was when the backup was taken.
    await runMigrations(
      config,
      MIGRATIONS.filter((m, i) => archived.has(known[i])),
    );

    const created: string[] = [];
    const secrets: { path: string; data: Buffer; mode: number }[] = [];
    let files = { count: 0, bytes: 0 };
    let refs = 0;
    // One transaction for the rows, held open while the repositories and files are written, so a failure
    // anywhere leaves neither rows nor files; no limit of the role's may end it.
    const restoreOptions = { applicationName: 'lode-restore', statementTimeoutMs: 0, idleInTransactionTimeoutMs: 0 };
    await withOwnConnection(config.databaseUrl, restoreOptions, async (client) => {
      try {
        await client.query('begin');
        await checkTables(client, manifest);
        const foreignKeys = await dropForeignKeys(client);
        await insertRows(client, archive, manifest, progress);
        for (const fk of foreignKeys)
          await client.query(`alter table ${fk.table} add constraint ${quoteIdent(fk.name)} ${fk.definition}`);
        await setSequences(client, archive, manifest);

        if (!options.databaseOnly) {
          refs = await restoreRepositories(config, archive, manifest, created, progress);
          files = await restoreFiles(config, archive, manifest, created, secrets, progress);
        }
        await client.query('commit');
      } catch (err) {
        await client.query('rollback').catch(() => undefined);
        for (const path of created.reverse()) await rm(path, { recursive: true, force: true });
        throw err;
      }
    });

    for (const s of secrets) await writeFileAtomically(join(config.dataDir, s.path), s.data, s.mode);
    progress?.({ phase: 'secrets', done: secrets.length, total: secrets.length });

    const notes = await secretNotes(config, manifest);
    const pendingMigrations = known.filter((name) => !archived.has(name));
    if (pendingMigrations.length)
      notes.push(
        `this Lode has ${pendingMigrations.length} migration(s) the archive predates; they run at the next start`,
      );
    return {
      from,
      seconds: (Date.now() - started) / 1000,
      bytes: archive.size,
      createdAt: header.createdAt,
      lodeVersion: `${header.lode.version} (${header.lode.revision})`,
      database: {
        tables: manifest.database.tables.length,
        rows: manifest.database.rows,
        events: manifest.database.events,
        sequences: manifest.database.sequences,
        migrationLevel: manifest.migrations.at(-1)?.name ?? null,
      },
      repositories: {
        total: manifest.repositories.length,
        empty: manifest.repositories.filter((r) => !r.bundle).length,
        refs,
      },
      files,
      secrets: { restored: secrets.map((s) => s.path) },
      pendingMigrations,
      notes,
    };
  } finally {
    await archive.close();
  }
}

/** The lines a command line prints after a restore. */
export function describeRestore(s: RestoreSummary): string[] {
  return [
    `restored ${s.from} (made ${s.createdAt} by Lode ${s.lodeVersion}) in ${s.seconds.toFixed(1)} s`,
    `database: ${s.database.rows} rows in ${s.database.tables} tables (${s.database.events} events), ` +
      `${s.database.sequences} sequences, migration level ${s.database.migrationLevel ?? 'none'}`,
    `repositories: ${s.repositories.total} (${s.repositories.empty} empty), ${s.repositories.refs} refs`,
    `files: ${s.files.count} uploads and avatars, ${(s.files.bytes / 1024 / 1024).toFixed(1)} MB`,
    s.secrets.restored.length ? `secrets restored: ${s.secrets.restored.join(', ')}` : 'secrets: none in the archive',
    ...s.notes.map((n) => `note: ${n}`),
  ];
}

async function openArchive(path: string): Promise<TarReader> {
  try {
    return await TarReader.open(path);
  } catch (err) {
    if (err instanceof ArchiveDamaged) throw new RestoreRefused(`${path} cannot be restored: ${err.message}`);
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new RestoreRefused(`${path} does not exist`);
    throw err;
  }
}

/** The header (first entry) and the manifest (last): both must be there, and the format one this Lode reads. */
async function readManifest(archive: TarReader): Promise<{ header: BackupHeader; manifest: BackupManifest }> {
  const first = archive.entries[0];
  const last = archive.entries.at(-1);
  if (first?.name !== HEADER_ENTRY)
    throw new RestoreRefused('this is not a Lode backup (it does not start with lode-backup.json)');
  const header = parseJson<BackupHeader>(await archive.read(first), HEADER_ENTRY);
  if (typeof header.format !== 'number' || header.format > BACKUP_FORMAT)
    throw new RestoreRefused(
      `the archive has format ${String(header.format)}, which this Lode (format ${BACKUP_FORMAT}) cannot read: restore it with a newer Lode`,
    );
  if (last?.name !== MANIFEST_ENTRY)
    throw new RestoreRefused('the archive is incomplete: it does not end with its manifest (the backup was cut short)');
  const manifest = parseJson<BackupManifest>(await archive.read(last), MANIFEST_ENTRY);
  const present = new Map(archive.entries.map((e) => [e.name, e]));
  for (const [name, { size }] of Object.entries(manifest.entries)) {
    const entry = present.get(name);
    if (!entry || entry.size !== size)
      throw new RestoreRefused(`the archive is damaged: ${name} is ${entry ? 'of another size' : 'missing'}`);
  }
  validatePaths(manifest);
  return { header, manifest };
}

/**
 * What the archive may write, checked before anything is: repositories only at hashed-storage paths,
 * files only under `uploads/` and, as secrets, only the host keys, the key file and the root token
 * file. Nothing else of the data directory (the hooks git runs, above all) comes from an archive.
 */
function validatePaths(manifest: BackupManifest): void {
  for (const repo of manifest.repositories)
    if (!REPOSITORY_PATH.test(repo.path))
      throw new RestoreRefused(`the archive names an odd repository path: ${repo.path}`);
  for (const file of manifest.files) {
    const allowed = file.secret
      ? SECRET_PATHS.includes(file.path) || /^ssh\/[^/]+$/.test(file.path)
      : file.path.startsWith('uploads/') && !file.path.split('/').includes('..');
    if (!allowed || file.entry !== `data/${file.path}`)
      throw new RestoreRefused(`the archive names a file Lode does not restore: ${file.path}`);
  }
}

const REPOSITORY_PATH = /^repositories\/@hashed\/[0-9a-f]{2}\/[0-9a-f]{2}\/[0-9a-f]{64}\.git$/;

function parseJson<T>(data: Buffer, name: string): T {
  try {
    return JSON.parse(data.toString('utf8')) as T;
  } catch {
    throw new RestoreRefused(`the archive is damaged: ${name} is not JSON`);
  }
}

/** An entry's data, checked against the SHA-256 the manifest holds. */
async function readChecked(archive: TarReader, manifest: BackupManifest, name: string): Promise<Buffer> {
  const entry = entryNamed(archive, name);
  const data = await archive.read(entry);
  verify(manifest, name, createHash('sha256').update(data).digest('hex'));
  return data;
}

function entryNamed(archive: TarReader, name: string): TarEntry {
  const entry = archive.entries.find((e) => e.name === name);
  if (!entry) throw new RestoreRefused(`the archive is damaged: ${name} is missing`);
  return entry;
}

function verify(manifest: BackupManifest, name: string, sha256: string): void {
  if (manifest.entries[name]?.sha256 !== sha256)
    throw new RestoreRefused(`the archive is damaged: ${name} does not have the content the backup wrote`);
}

/** Each migration's name as TypeORM records it in schema_migrations, in MIGRATIONS' order. */
function migrationNames(config: LodeConfig): string[] {
  return MIGRATIONS.map((m) => {
    const migration = typeof m === 'object' ? m.withConfig(config) : (m as new () => MigrationInterface);
    return new migration().name ?? migration.name;
  });
}

async function refuseNonEmptyDataDir(dataDir: string): Promise<void> {
  const repositories = join(dataDir, 'repositories', '@hashed');
  for (const a of await readdir(repositories).catch(() => []))
    for (const b of await readdir(join(repositories, a)).catch(() => []))
      for (const name of await readdir(join(repositories, a, b)).catch(() => []))
        if (name.endsWith('.git'))
          throw new RestoreRefused(
            `the data directory ${dataDir} holds repositories already: a restore goes into an empty installation`,
          );
  if (await hasFiles(join(dataDir, 'uploads')))
    throw new RestoreRefused(
      `the data directory ${dataDir} holds uploads already: a restore goes into an empty installation`,
    );
}

async function hasFiles(dir: string): Promise<boolean> {
  for (const e of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    if (e.isFile()) return true;
    if (e.isDirectory() && (await hasFiles(join(dir, e.name)))) return true;
  }
  return false;
}

/**
 * The target database must hold no row in any of Lode's tables, and no migration the archive lacks
 * (a later migration would not have changed the rows restored under it). A database that does not
 * exist yet is empty; runMigrations creates it.
 */
async function refuseNonEmptyDatabase(config: LodeConfig, archived: Set<string>): Promise<void> {
  try {
    await withOwnConnection(config.databaseUrl, {}, (client) => refuseRows(client, archived));
  } catch (err) {
    if ((err as { code?: string }).code === '3D000') return; // the database does not exist
    throw err;
  }
}

/** Refuses a database holding rows, or migrations later than the archive's. */
async function refuseRows(client: pg.Client, archived: Set<string>): Promise<void> {
  const { rows: tables } = await client.query<{ name: string }>(
    `select relname::text as name from pg_class where relnamespace = 'public'::regnamespace and relkind in ('r', 'p')`,
  );
  const names = tables.map((t) => t.name);
  if (names.includes('schema_migrations')) {
    const { rows } = await client.query<{ name: string }>(`select name from schema_migrations`);
    const later = rows.filter((r) => !archived.has(r.name));
    if (later.length)
      throw new RestoreRefused(
        `the target database has migrations the archive predates (${later.map((r) => r.name).join(', ')}): ` +
          'restore into a database no migration has run on yet',
      );
  }
  for (const name of names.filter((n) => n !== 'schema_migrations')) {
    const { rows } = await client.query<{ one: number }>(`select 1 as one from ${quoteIdent(name)} limit 1`);
    if (rows.length)
      throw new RestoreRefused(
        `the target database is not empty (${name} holds rows${name === 'events' ? ': it has events' : ''}): ` +
          'a restore goes into an empty installation; drop the database or name another one',
      );
  }
}

/** Every archived table exists here with at least the archived columns (the same migration level ensures it). */
async function checkTables(client: pg.Client, manifest: BackupManifest): Promise<void> {
  for (const table of manifest.database.tables) {
    const { rows } = await client.query<{ name: string }>(
      `select a.attname::text as name from pg_attribute a
        where a.attrelid = to_regclass($1) and a.attnum > 0 and not a.attisdropped`,
      [quoteIdent(table.name)],
    );
    const here = new Set(rows.map((r) => r.name));
    const missing = table.columns.filter((c) => !here.has(c));
    if (!rows.length || missing.length)
      throw new RestoreRefused(
        `the archive's table ${table.name} does not fit this database (${rows.length ? `no column ${missing.join(', ')}` : 'no such table'})`,
      );
  }
}

interface ForeignKey {
  table: string;
  name: string;
  definition: string;
}

/**
 * Drops the foreign keys for the inserts, to be added again (and so checked, all rows at once) before
 * the commit: rows then go in table by table in any order, and a table that points at itself
 * (namespaces' parents) needs no order among its rows.
 */
async function dropForeignKeys(client: pg.Client): Promise<ForeignKey[]> {
  const { rows } = await client.query<ForeignKey>(
    `select conrelid::regclass::text as table, conname::text as name, pg_get_constraintdef(oid) as definition
       from pg_constraint where contype = 'f' and connamespace = 'public'::regnamespace order by conrelid, conname`,
  );
  for (const fk of rows) await client.query(`alter table ${fk.table} drop constraint ${quoteIdent(fk.name)}`);
  return rows;
}

async function insertRows(
  client: pg.Client,
  archive: TarReader,
  manifest: BackupManifest,
  progress?: ProgressListener,
): Promise<void> {
  const total = manifest.database.rows;
  let done = 0;
  for (const table of manifest.database.tables) {
    const columns = table.columns.map(quoteIdent).join(', ');
    const insert = `insert into ${quoteIdent(table.name)} (${columns})
                    select ${columns} from json_populate_recordset(null::${quoteIdent(table.name)}, $1::json)`;
    let inserted = 0;
    for (const name of table.entries) {
      const text = (await gunzipAsync(await readChecked(archive, manifest, name))).toString('utf8');
      const lines = text.split('\n').filter(Boolean);
      for (let i = 0; i < lines.length; i += INSERT_ROWS) {
        const batch = lines.slice(i, i + INSERT_ROWS);
        // The rows go to PostgreSQL as the text it wrote: never parsed here, so nothing is lost.
        await client.query(insert, [`[${batch.join(',')}]`]);
        inserted += batch.length;
        done += batch.length;
        progress?.({ phase: 'database', done, total, item: table.name });
      }
    }
    if (inserted !== table.rows)
      throw new RestoreRefused(
        `the archive is damaged: ${table.name} has ${inserted} rows, its manifest says ${table.rows}`,
      );
  }
  progress?.({ phase: 'database', done, total });
}

async function setSequences(client: pg.Client, archive: TarReader, manifest: BackupManifest): Promise<void> {
  const sequences = parseJson<SequenceValue[]>(await readChecked(archive, manifest, SEQUENCES_ENTRY), SEQUENCES_ENTRY);
  for (const s of sequences) {
    const { rows } = await client.query<{ present: boolean }>(`select to_regclass($1) is not null as present`, [
      quoteIdent(s.name),
    ]);
    if (!rows[0].present) throw new RestoreRefused(`the archive's sequence ${s.name} does not exist in this database`);
    await client.query(`select setval($1::regclass, $2::bigint, $3)`, [quoteIdent(s.name), s.lastValue, s.isCalled]);
  }
}

/** A path from the archive, inside the data directory and nowhere else. */
function inside(dataDir: string, rel: string): string {
  const path = resolve(dataDir, rel);
  if (!path.startsWith(resolve(dataDir) + sep) || rel.includes('\0'))
    throw new RestoreRefused(`the archive names a path outside the data directory: ${rel}`);
  return path;
}

async function restoreRepositories(
  config: LodeConfig,
  archive: TarReader,
  manifest: BackupManifest,
  created: string[],
  progress?: ProgressListener,
): Promise<number> {
  const staging = join(config.dataDir, 'tmp', `restore-${randomBytes(4).toString('hex')}`);
  await mkdir(staging, { recursive: true });
  let refs = 0;
  try {
    const total = manifest.repositories.length;
    for (const [index, repo] of manifest.repositories.entries()) {
      progress?.({ phase: 'repositories', done: index, total, item: repo.path });
      const target = inside(config.dataDir, repo.path);
      let bundle: string | undefined;
      if (repo.bundle) {
        bundle = join(staging, 'repository.bundle');
        await extractChecked(archive, manifest, repo.bundle, bundle);
      }
      created.push(target);
      const restored = await restoreRepository(target, repo, bundle);
      if (bundle) await rm(bundle, { force: true });
      if (restored !== repo.refs)
        throw new RestoreRefused(`${repo.path} holds ${restored} refs after its restore, the archive ${repo.refs}`);
      refs += restored;
    }
    progress?.({ phase: 'repositories', done: total, total });
    return refs;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/** Copies an entry to a file, hashing it on the way; the hash must match the manifest's. */
async function extractChecked(archive: TarReader, manifest: BackupManifest, name: string, to: string): Promise<void> {
  const hash = createHash('sha256');
  const hashing = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      hash.update(chunk);
      callback(null, chunk);
    },
  });
  await pipeline(archive.stream(entryNamed(archive, name)), hashing, createWriteStream(to, { mode: 0o600 }));
  verify(manifest, name, hash.digest('hex'));
}

/** Uploads and avatars go in place now; secrets are kept to be written after the commit. */
async function restoreFiles(
  config: LodeConfig,
  archive: TarReader,
  manifest: BackupManifest,
  created: string[],
  secrets: { path: string; data: Buffer; mode: number }[],
  progress?: ProgressListener,
): Promise<{ count: number; bytes: number }> {
  let bytes = 0;
  let count = 0;
  const total = manifest.files.length;
  for (const [index, file] of manifest.files.entries()) {
    progress?.({ phase: file.secret ? 'secrets' : 'files', done: index, total, item: file.path });
    const target = inside(config.dataDir, file.path);
    const entry = entryNamed(archive, file.entry);
    if (file.secret) {
      secrets.push({
        path: file.path,
        data: await readChecked(archive, manifest, file.entry),
        mode: entry.mode & 0o777,
      });
      continue;
    }
    await mkdir(dirname(target), { recursive: true });
    const tmp = `${target}.restore-${randomBytes(4).toString('hex')}`;
    created.push(tmp, target);
    await extractChecked(archive, manifest, file.entry, tmp);
    await chmod(tmp, entry.mode & 0o777 || 0o644);
    await rename(tmp, target);
    bytes += entry.size;
    count += 1;
  }
  progress?.({ phase: 'files', done: total, total });
  return { count, bytes };
}

async function writeFileAtomically(path: string, data: Buffer, mode: number): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.restore-${randomBytes(4).toString('hex')}`;
  await writeFile(tmp, data, { mode: mode || 0o600 });
  await chmod(tmp, mode || 0o600);
  await rename(tmp, path);
}

/**
 * Whether this installation can open the sealed hook secrets it now holds, found by trying one; and
 * what the secrets' absence means. The key file is not created here when missing (Lode does that at
 * its first use of it).
 */
async function secretNotes(config: LodeConfig, manifest: BackupManifest): Promise<string[]> {
  const notes: string[] = [];
  if (!manifest.withSecrets)
    notes.push(
      'the archive holds no secrets: the SSH host keys are new (SSH clients will see a changed host key), and sealed hook secrets open only with the original key',
    );
  const sample = await withOwnConnection(config.databaseUrl, {}, (client) => sealedSecretSample(pgSql(client)));
  if (!sample) return notes;
  const keyFile = join(config.dataDir, SECRET_KEY_FILE);
  const hasKey =
    config.secretKey !== undefined ||
    (await stat(keyFile).then(
      () => true,
      () => false,
    ));
  let opens = false;
  if (hasKey)
    try {
      SecretBox.forConfig(config).open(sample.sealed);
      opens = true;
    } catch {
      opens = false;
    }
  if (!opens)
    notes.push(
      `${sample.hooks} hook(s) have sealed secrets (tokens, URL passwords) that ` +
        (hasKey ? 'this installation’s key does not open' : 'no key here opens (no LODE_SECRET_KEY, no secret.key)') +
        `: set LODE_SECRET_KEY to the original installation's key or copy its ${SECRET_KEY_FILE} into the data directory before starting, or set those hooks' tokens again`,
    );
  return notes;
}
