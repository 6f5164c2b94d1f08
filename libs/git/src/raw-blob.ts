import { collectAsStreamed, ownBuffer } from '@app/platform';
import { spawn } from 'node:child_process';
import { trackProcess } from './process-gauges';
import { PassThrough } from 'node:stream';
import { BytesLru } from './bytes-lru';
import { CatFilePool, parseHeader, type ObjectHeader } from './cat-file';
import type { HeldBlob, RawBlob } from './git-repositories';

const SHA = /^[0-9a-f]{4,64}$/i;
/**
 * A blob's whole id as git prints it (SHA-1 or SHA-256, lower case): only such a name is kept by, since
 * an abbreviation that names one object today can name two after a push.
 */
const FULL_OBJECT_ID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;
const HEADER_LIMIT = 256;
/**
 * Ref names the cat-file path resolves: branch, tag and commit-id spellings only, which git and
 * libgit2's revparse read alike. Anything else (`@{upstream}`, which ends `cat-file --batch-command`
 * with a fatal error in a bare repository, `:/message`, `..`) goes through libgit2 as before.
 */
const PLAIN_REF = /^(?!-)(?!.*\.\.)[\w./+-]{1,255}$/;

/**
 * A path cat-file reads as libgit2's tree lookup does: no empty, `.` or `..` segment (git reads
 * `./x` relative to a working tree and dies in a bare repository), no newline (the command's end),
 * no control character, and no blank at either end.
 */
function plainPath(file: string): boolean {
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  if (!file || file.length > 4096 || /[\x00-\x1f\x7f]/.test(file) || file.trim() !== file) return false;
  return file.split('/').every((segment) => segment !== '' && segment !== '.' && segment !== '..');
}

/** git's own binary test: a NUL byte in the first 8,000 bytes. */
const SNIFF = 8000;

/** Blobs up to this size are read whole through the repository's long-lived cat-file process. */
const HELD_BLOB_BYTES = 1024 * 1024;

/**
 * What `<commit>:<path>` names, kept by commit id and path: a commit's tree never changes, so the
 * answer holds for as long as the commit exists. A few hundred bytes each; 2 MB keeps some 10,000.
 */
const PATH_ENTRY_CACHE_BYTES = 2 * 1024 * 1024;

/** The largest blob kept in memory by id: small files are what is read most often, one at a time. */
const KEPT_BLOB_LARGEST = 64 * 1024;
/** What a kept blob costs beyond its bytes (the entry, the object, the key). */
const KEPT_BLOB_OVERHEAD = 256;

/**
 * Raw blob reads. The size comes first, from the repository's long-lived `git cat-file` (no process
 * start per request); a small blob's bytes come through the same process and are sent with one
 * write, a larger one streams from a `git cat-file --batch` of its own, so a 100 MB blob neither
 * sits in memory nor holds up the small reads queued behind it.
 */
export class RawBlobs {
  private readonly pool = new CatFilePool();
  /** `<commit>:<path>`'s header by repository, commit id and path. */
  private readonly pathEntries = new BytesLru<ObjectHeader>(PATH_ENTRY_CACHE_BYTES, 4096);
  /**
   * Small blobs by repository and full id (LODE_BLOB_CACHE_BYTES): an object's bytes never change, and
   * a repository's path is never reused by another project (ids are not). What can end is the object
   * itself: housekeeping's `git gc` prunes unreachable objects (two weeks after they became so, git's
   * default) and a removed repository takes all, so `forget` drops a repository's blobs then.
   */
  private readonly blobs: BytesLru<HeldBlob>;
  private blobHits = 0;

  constructor(blobCacheBytes = 0) {
    this.blobs = new BytesLru<HeldBlob>(blobCacheBytes, Math.min(KEPT_BLOB_LARGEST, blobCacheBytes / 4));
  }

  /** The blob `sha` (a full id) of `repo` when it is kept in memory; no git, no wait. */
  kept(repo: string, sha: string): HeldBlob | undefined {
    if (!FULL_OBJECT_ID.test(sha)) return undefined;
    const blob = this.blobs.get(`${repo}\0${sha}`);
    if (blob) this.blobHits += 1;
    return blob;
  }

  /** Drops the kept blobs of `repo` (after housekeeping pruned objects, or the repository went). */
  forget(repo: string): void {
    const prefix = `${repo}\0`;
    this.blobs.deleteWhere((key) => key.startsWith(prefix));
  }

  /** The bytes kept of small blobs, and how many reads they answered. */
  get blobCache(): { bytes: number; hits: number } {
    return { bytes: this.blobs.bytes, hits: this.blobHits };
  }

  /** A held blob from cat-file's answer, kept when small. */
  private held(repo: string, sha: string, content: Buffer): HeldBlob {
    const key = `${repo}\0${sha}`;
    const cost = content.length + 2 * key.length + KEPT_BLOB_OVERHEAD;
    // A kept blob holds memory of its own, so the bound counts what is held (see ownBuffer).
    const own = cost <= this.blobs.largestBytes ? ownBuffer(content) : content;
    const blob = { sha, size: own.length, binary: own.subarray(0, SNIFF).includes(0), content: own };
    this.blobs.set(key, blob, cost);
    return blob;
  }

  async open(repo: string, sha: string): Promise<HeldBlob | RawBlob | undefined> {
    if (!SHA.test(sha)) return undefined;
    const kept = this.kept(repo, sha);
    if (kept) return kept;
    let header;
    try {
      header = await this.pool.info(repo, sha);
    } catch {
      return openRawBlob(repo, sha); // the long-lived process failed: read this one the old way
    }
    if (!header || header.type !== 'blob') return undefined;
    if (header.size > HELD_BLOB_BYTES) return openRawBlob(repo, header.sha);
    const answer = await this.pool.contents(repo, header.sha).catch(() => undefined);
    if (!answer) return openRawBlob(repo, header.sha);
    return this.held(repo, header.sha, answer.content);
  }

  /**
   * The commit `ref` names and the small blob at `file` in it, through the repository's long-lived
   * cat-file process (three pipe round trips, two for a path read before at that commit; no process
   * start, no libgit2 thread-pool job): what the files API reads. `undefined` when this path cannot
   * answer (a name cat-file might read otherwise than libgit2, or die on; a blob larger than
   * HELD_BLOB_BYTES; the process failed): the caller reads through libgit2 then. `{ commit: undefined }` when the ref names no commit, `file`
   * undefined when the path is no blob at that commit (missing, a directory, a submodule).
   */
  async fileAt(
    repo: string,
    ref: string,
    file: string,
  ): Promise<{ commit?: string; file?: { sha: string; content: Buffer } } | undefined> {
    if (!PLAIN_REF.test(ref) || !plainPath(file)) return undefined;
    try {
      const commit = await this.pool.info(repo, `${ref}^{commit}`);
      if (!commit) return { commit: undefined };
      if (commit.type !== 'commit') return undefined;
      const entry = await this.pathEntry(repo, commit.sha, file);
      if (!entry || entry.type !== 'blob') return { commit: commit.sha };
      if (entry.size > HELD_BLOB_BYTES) return undefined;
      const kept = this.kept(repo, entry.sha);
      if (kept) return { commit: commit.sha, file: { sha: entry.sha, content: kept.content } };
      const answer = await this.pool.contents(repo, entry.sha);
      if (!answer) return undefined;
      return {
        commit: commit.sha,
        file: { sha: entry.sha, content: this.held(repo, entry.sha, answer.content).content },
      };
    } catch {
      return undefined;
    }
  }

  /**
   * The object at `file` in the commit, read once per commit and path: a file read again at an
   * unchanged tip costs two pipe round trips (the ref, the bytes), as the raw blob read does.
   */
  private async pathEntry(repo: string, commit: string, file: string): Promise<ObjectHeader | undefined> {
    const key = `${repo}\0${commit}\0${file}`;
    const kept = this.pathEntries.get(key);
    if (kept) return kept;
    const entry = await this.pool.info(repo, `${commit}:${file}`);
    // A miss is not kept: rare, and a transient one (a pack being replaced) must not stick.
    if (entry) this.pathEntries.set(key, entry, 2 * key.length + 128);
    return entry;
  }

  /** Ends the long-lived cat-file processes (at shutdown). */
  close(): void {
    this.pool.closeAll();
  }
}

/**
 * A blob's bytes streamed from `git cat-file --batch`, which answers the object's type and size in
 * its first line and then the content: one process, nothing held in memory, first byte at once.
 * libgit2 inflates a whole object into memory and nodegit has no header-only read, which would
 * cost a 100 MB blob 100 MB of memory; so a large raw read is the one blob read that spawns git.
 * Resolves undefined for a missing object or one that is not a blob.
 */
export function openRawBlob(repo: string, sha: string): Promise<RawBlob | undefined> {
  if (!SHA.test(sha)) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    // git streams a packed blob only above core.bigFileThreshold (512 MB by default) and inflates
    // anything smaller whole before writing its first byte: 130 ms for a 100 MB blob (bench PERF-8).
    const git = trackProcess(
      spawn('git', ['-c', 'core.bigFileThreshold=1m', 'cat-file', '--batch'], {
        cwd: repo,
        stdio: ['pipe', 'pipe', 'ignore'],
      }),
    );
    const cancel = () => {
      if (git.exitCode === null && git.signalCode === null) git.kill();
    };
    let settled = false;
    const settle = (value: RawBlob | undefined) => {
      if (settled) return;
      settled = true;
      if (!value) cancel();
      resolve(value);
    };
    git.on('error', () => settle(undefined));
    git.stdin.on('error', () => undefined);
    git.stdin.end(`${sha}\n`);
    collectAsStreamed(git.stdout);

    let buffered = Buffer.alloc(0);
    let header: { id: string; size: number } | undefined;
    let left = 0;
    const out = new PassThrough();
    out.on('drain', () => git.stdout.resume());
    const forward = (buf: Buffer) => {
      if (left <= 0) return;
      const part = buf.length > left ? buf.subarray(0, left) : buf;
      left -= part.length;
      if (!out.write(part)) git.stdout.pause();
      if (left === 0) {
        out.end();
        cancel();
      }
    };
    const start = () => {
      const sniffed = buffered.subarray(0, Math.min(SNIFF, buffered.length));
      settle({ sha: header!.id, size: header!.size, binary: sniffed.includes(0), stream: out, cancel });
      const first = buffered;
      buffered = Buffer.alloc(0);
      forward(first);
    };
    git.stdout.on('data', (chunk: Buffer) => {
      if (settled) return forward(chunk);
      buffered = Buffer.concat([buffered, chunk]);
      if (!header) {
        const nl = buffered.indexOf(10);
        if (nl < 0) {
          if (buffered.length > HEADER_LIMIT) settle(undefined);
          return;
        }
        const parsed = parseHeader(buffered.subarray(0, nl).toString('latin1'));
        if (parsed?.type !== 'blob') return settle(undefined);
        header = { id: parsed.sha, size: parsed.size };
        left = header.size;
        buffered = buffered.subarray(nl + 1);
        if (left === 0) {
          settle({ sha: header.id, size: 0, binary: false, stream: out, cancel });
          out.end();
          return;
        }
      }
      // Enough to tell text from binary (or the whole, smaller blob): headers can be chosen now.
      if (buffered.length >= Math.min(SNIFF, left)) start();
    });
    git.stdout.on('end', () => {
      if (!settled) return settle(undefined);
      if (left > 0) out.destroy(new Error('git cat-file ended early'));
    });
  });
}
