import { archiveCachePath, LodeConfig } from '@app/platform';
import { Injectable, Logger } from '@nestjs/common';
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { createGzip } from 'node:zlib';

/** GitLab's archive formats (`Gitlab::PathRegex.archive_formats_regex`) and the file each makes. */
const FORMATS: Record<string, 'tar.gz' | 'tar.bz2' | 'tar' | 'zip'> = {
  'tar.gz': 'tar.gz', tgz: 'tar.gz', gz: 'tar.gz', 'tar.bz2': 'tar.bz2', tbz: 'tar.bz2', tbz2: 'tar.bz2', tb2: 'tar.bz2', bz2: 'tar.bz2',
  tar: 'tar', zip: 'zip',
};
export type ArchiveExtension = (typeof FORMATS)[string];
export const archiveExtension = (format: string): ArchiveExtension | undefined => FORMATS[format];

export interface Archive {
  stream: Readable;
  /** Known when served from the cache. */
  size?: number;
  etag: string;
  cached: boolean;
}

/**
 * Repository archives made by `git archive` (streamed, compressed on the way) and cached per
 * project, commit, format and top directory under `$LODE_DATA_DIR/cache/archives/<project id>`
 * (removed with the project's repository): the first request
 * streams while the cache file is written beside it and renamed into place only when complete,
 * so a later request never reads half an archive.
 */
@Injectable()
export class ArchiveStore {
  private readonly logger = new Logger('Archives');

  constructor(private readonly config: LodeConfig) {}

  private get dataDir(): string {
    return this.config.dataDir;
  }

  static etag(projectId: number, sha: string, ext: string, prefix: string): string {
    return `"${createHash('sha256').update(`${projectId}\0${sha}\0${ext}\0${prefix}`).digest('hex').slice(0, 32)}"`;
  }

  private file(projectId: number, sha: string, ext: string, prefix: string): string {
    const key = createHash('sha256').update(prefix).digest('hex').slice(0, 16);
    return join(archiveCachePath(this.dataDir, projectId), `${sha}-${key}.${ext}`);
  }

  async open(repo: string, projectId: number, sha: string, ext: ArchiveExtension, prefix: string): Promise<Archive> {
    const etag = ArchiveStore.etag(projectId, sha, ext, prefix);
    const file = this.file(projectId, sha, ext, prefix);
    const existing = await stat(file).catch(() => undefined);
    if (existing) return { stream: createReadStream(file), size: existing.size, etag, cached: true };

    const git = spawn('git', ['archive', `--format=${ext === 'zip' ? 'zip' : 'tar'}`, `--prefix=${prefix}/`, sha], {
      cwd: repo, stdio: ['ignore', 'pipe', 'pipe'],
    });
    git.stderr.resume();
    let compressed: Readable = git.stdout;
    let compressor: ReturnType<typeof spawn> | undefined;
    if (ext === 'tar.gz') compressed = git.stdout.pipe(createGzip());
    else if (ext === 'tar.bz2') {
      compressor = spawn('bzip2', ['-c'], { stdio: ['pipe', 'pipe', 'ignore'] });
      git.stdout.pipe(compressor.stdin!);
      compressed = compressor.stdout!;
    }
    const out = new PassThrough();
    await mkdir(archiveCachePath(this.dataDir, projectId), { recursive: true });
    const tmp = `${file}.tmp-${randomBytes(4).toString('hex')}`;
    const cache = createWriteStream(tmp);
    let failed = false;
    const abandon = () => {
      if (failed) return;
      failed = true;
      git.kill();
      compressor?.kill();
      cache.destroy();
      void rm(tmp, { force: true });
    };
    // The client going away ends the work and the cache file with it.
    out.on('close', () => {
      if (!out.writableFinished) abandon();
    });
    git.on('close', (code) => {
      if (code !== 0) {
        abandon();
        out.destroy(new Error(`git archive exited with ${code}`));
      }
    });
    compressed.pipe(out);
    compressed.pipe(cache);
    cache.on('error', abandon);
    cache.on('finish', () => {
      if (failed) return;
      rename(tmp, file).catch((err: unknown) => this.logger.warn(`could not keep the archive ${file}: ${String(err)}`));
    });
    return { stream: out, etag, cached: false };
  }
}
