import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/*
 * The layout of a Lode backup: one tar file (README.md, Backup and restore, describes it for people).
 *
 *   lode-backup.json                          the header: format, Lode's version, creation time, migrations
 *   database/<table>/<n>.ndjson.gz            the table's rows, one `row_to_json` a line, in batches
 *   database/sequences.json                   every sequence's value and is_called
 *   repositories/@hashed/ab/cd/<sha256>.git.bundle   `git bundle create --all` of a repository with refs, at its
 *                                             path under the data directory
 *   data/<path under the data dir>            uploads and avatars; with secrets also ssh/, secret.key,
 *                                             initial_root_token
 *   manifest.json                             last: counts, every repository's HEAD and config, every
 *                                             entry's size and SHA-256; its absence means a cut archive
 */

/** The format this Lode writes; it restores this one and older ones. */
export const BACKUP_FORMAT = 1;
export const HEADER_ENTRY = 'lode-backup.json';
export const MANIFEST_ENTRY = 'manifest.json';
export const SEQUENCES_ENTRY = 'database/sequences.json';

/** The files of the data directory that a backup carries only when asked to (`withSecrets`). */
export const SECRET_PATHS = ['ssh', 'secret.key', 'initial_root_token'];
/** The data directory's parts a backup leaves out on purpose: rebuilt or refilled by Lode itself. */
export const REGENERATED_PATHS = ['cache', 'tmp', 'hooks'];
/** The embedded database's files and socket (embedded mode): carried as the database's rows instead. */
export const EMBEDDED_DATABASE_PATHS = ['pglite', 'run'];

export interface MigrationLevel {
  timestamp: number;
  name: string;
}

export interface LodeVersion {
  version: string;
  revision: string;
}

/** The first entry: what a reader needs to know whether it can restore the rest. */
export interface BackupHeader {
  format: number;
  lode: LodeVersion;
  createdAt: string;
  withSecrets: boolean;
  migrations: MigrationLevel[];
}

export interface TableDump {
  name: string;
  /** The columns each row holds, in table order. */
  columns: string[];
  rows: number;
  /** The entries holding its rows, in order. */
  entries: string[];
}

export interface SequenceValue {
  name: string;
  lastValue: string;
  isCalled: boolean;
}

export interface RepositoryDump {
  projectId: number;
  /** Relative to the data directory, `/`-separated. */
  path: string;
  head: string;
  config: string;
  objectFormat: string;
  /** Refs in the bundle (HEAD not counted); 0: an empty repository, without a bundle. */
  refs: number;
  bundle: string | null;
}

export interface FileDump {
  /** Relative to the data directory, `/`-separated. */
  path: string;
  entry: string;
  secret: boolean;
}

export interface BackupManifest extends BackupHeader {
  /** When the database snapshot was taken (the snapshot transaction's start). */
  snapshotAt: string;
  database: { tables: TableDump[]; sequences: number; rows: number; events: number };
  repositories: RepositoryDump[];
  files: FileDump[];
  /** Where the key sealing hook secrets came from, never the key: `file`, `environment` or `none`. */
  secretKey: 'file' | 'environment' | 'none';
  /** Every other entry's size and SHA-256, checked as a restore reads it. */
  entries: Record<string, { size: number; sha256: string }>;
}

/** Lode's package version (from package.json above the working directory) and build revision. */
export function lodeVersion(revision: string, from = process.cwd()): LodeVersion {
  for (let dir = from; ; dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      try {
        const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
        if (pkg.name === 'lode') return { version: pkg.version ?? 'unknown', revision };
      } catch {
        // not ours: keep looking upwards
      }
    }
    if (dirname(dir) === dir) return { version: 'unknown', revision };
  }
}

/** What a backup or a restore is doing, for a progress bar. */
export interface OperationProgress {
  phase: 'database' | 'repositories' | 'files' | 'secrets';
  done: number;
  total: number;
  /** The table, repository or file at hand. */
  item?: string;
}

export type ProgressListener = (progress: OperationProgress) => void;
