import { Logger } from '@nestjs/common';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { archiveStarted, trackProcess } from './process-gauges';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { archiveCachePath } from './git-cli';
import type { Archive, ArchiveExtension, RepoRef } from './git-repositories';
import type { GitWorkBudget } from './work-budget';

/** GitLab's archive formats (`Gitlab::PathRegex.archive_formats_regex`) and the file each makes. */
const FORMATS: Record<string, ArchiveExtension> = {
  'tar.gz': 'tar.gz',
  tgz: 'tar.gz',
  gz: 'tar.gz',
  'tar.bz2': 'tar.bz2',
  tbz: 'tar.bz2',
  tbz2: 'tar.bz2',
  tb2: 'tar.bz2',
  bz2: 'tar.bz2',
  tar: 'tar',
  zip: 'zip',
};
const ARCHIVE_CHUNK = 1024 * 1024;
/** The file a GitLab archive format name (`tar.gz`, `tgz`, `zip`, ...) makes; undefined for an unknown one. */
export const archiveExtension = (format: string): ArchiveExtension | undefined => FORMATS[format];

/** The archive's ETag, known before it is made: an archive is named by project, commit, format and top directory. */
export function archiveEtag(repo: RepoRef, sha: string, ext: ArchiveExtension, prefix: string): string {
  return `"${createHash('sha256').update(`${repo.projectId}\0${sha}\0${ext}\0${prefix}`).digest('hex').slice(0, 32)}"`;
}

/**
 * Repository archives made by `git archive` (compressed on the way, never held in memory) and
 * cached per project, commit, format and top directory under
 * `$LODE_DATA_DIR/cache/archives/<project id>` (removed with the project's repository). Every
 * answer streams a complete cache file with its length, so nobody ever reads half an archive.
 */
export class ArchiveStore {
  private readonly logger = new Logger('Archives');

  constructor(
    private readonly dataDir: string,
    private readonly budget: GitWorkBudget,
  ) {}

  private file(projectId: number, sha: string, ext: string, prefix: string): string {
    const key = createHash('sha256').update(prefix).digest('hex').slice(0, 16);
    return join(archiveCachePath(this.dataDir, projectId), `${sha}-${key}.${ext}`);
  }

  /** `repo` is where the repository `ref` lives. */
  async open(ref: RepoRef, repo: string, sha: string, ext: ArchiveExtension, prefix: string): Promise<Archive> {
    const etag = archiveEtag(ref, sha, ext, prefix);
    const file = this.file(ref.projectId, sha, ext, prefix);
    let existing = await stat(file).catch(() => undefined);
    const cached = existing !== undefined;
    if (!existing) {
      // One `git archive` per cache file however many ask at once, in the budget's archive slots.
      // A caller whose client goes away leaves it running: the others (and the cache) get it whole.
      await this.budget.singleFlight('archive', file, async () => {
        // Made meanwhile, by a flight that ended while this one waited or by another process.
        if (await stat(file).catch(() => undefined)) return;
        await this.make(repo, sha, ext, prefix, file);
      });
      existing = await stat(file);
    }
    return {
      // 1 MB reads instead of 64 KB where this process sends it (HEAD, no helper): a 100 MB archive
      // is 100 writes to the socket rather than 1,600.
      read: () => createReadStream(file, { highWaterMark: ARCHIVE_CHUNK }),
      sendTo: (socket, head, handedOver) => this.budget.sendFile(socket, head, file, handedOver),
      size: existing.size,
      etag,
      cached,
    };
  }

  /**
   * Has git write the archive to a temporary file beside its cache name and renames it into place
   * when complete. git writes the file itself (`--output`), compressing tar.gz in process (git
   * 2.38+) and tar.bz2 through the bzip2 it starts (`tar.<format>.command`, at git's nice level): no
   * byte of it passes this process. (Piping it here cost the server's loop a 100 MB copy per cold
   * archive, and Node's zlib cost a cold archive 1.8 x `git archive --format=tar.gz`, bench PERF-10.)
   * Two requests racing for the same archive in two processes each write their own file; the last
   * rename wins, and both are whole (within a process the budget's single flight makes it once).
   */
  private async make(repo: string, sha: string, ext: ArchiveExtension, prefix: string, file: string): Promise<void> {
    await mkdir(dirname(file), { recursive: true });
    const tmp = `${file}.tmp-${randomBytes(4).toString('hex')}`;
    archiveStarted();
    const compressor = ext === 'tar.bz2' ? ['-c', 'tar.tar.bz2.command=bzip2 -c'] : [];
    const git = trackProcess(
      this.budget.spawn(
        'git',
        [...compressor, 'archive', `--format=${ext}`, `--prefix=${prefix}/`, `--output=${tmp}`, sha],
        {
          cwd: repo,
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      ) as ChildProcessWithoutNullStreams,
    );
    let stderr = '';
    git.stderr.on('data', (d: Buffer) => {
      if (stderr.length < 4096) stderr += d.toString();
    });
    git.stdout.resume();
    try {
      const code = await new Promise<number | null>((resolve, reject) => {
        git.on('error', reject);
        git.on('close', resolve);
      });
      if (code !== 0) throw new Error(`git archive exited with ${code}: ${stderr.trim()}`);
      await rename(tmp, file);
    } catch (err) {
      git.kill();
      await rm(tmp, { force: true });
      this.logger.error(`archive of ${sha} in ${repo} failed: ${String(err)}`);
      throw err;
    }
  }
}
