import { BytesLru } from './bytes-lru';
import type { CommitInfo } from './git-repositories';

/**
 * The ordered commit ids of a walk (newest first, as `git log` lists them), kept per what makes the
 * walk immutable: the resolved tip commit (or every ref's target), the path and the date range. A
 * page of the commits API is then a slice of it: page 40 of 5,000 commits no longer walks the 4,000
 * before it on every request (bench REPO-COMMITS, P90 687 ms under load), and the total (X-Total) is
 * the list's length. The ids are held as one string of fixed-width hex, so a list costs its id
 * count times 40 bytes (64 in a SHA-256 repository); the lists kept are bounded by their bytes
 * together (LODE_COMMIT_LIST_CACHE_BYTES), least recently used first out.
 */
export class CommitIdList {
  constructor(
    private readonly ids: string,
    /** Characters an id takes (40 for SHA-1, 64 for SHA-256); 0 for an empty list. */
    private readonly width: number,
  ) {}

  static parse(lines: string): CommitIdList {
    const ids = lines.split('\n').filter(Boolean);
    return new CommitIdList(ids.join(''), ids[0]?.length ?? 0);
  }

  get length(): number {
    return this.width ? this.ids.length / this.width : 0;
  }

  get bytes(): number {
    return this.ids.length;
  }

  slice(offset: number, limit: number): string[] {
    const out: string[] = [];
    for (let i = Math.max(0, offset); i < Math.min(this.length, offset + limit); i++)
      out.push(this.ids.slice(i * this.width, (i + 1) * this.width));
    return out;
  }
}

/**
 * Walks' id lists by key, bounded by bytes. A walk still running is shared by the callers who ask
 * meanwhile; a list larger than a quarter of the bound is not kept (nor walked twice at once: the
 * caller pages through git instead, see `maxIds`).
 */
export class CommitListCache {
  private readonly lists = new Map<string, Promise<CommitIdList | undefined>>();
  private readonly sizes = new Map<string, number>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  /** The most ids a walk may list to be kept (past it `walk` answers undefined); 0 when caching is off. */
  maxIds(width = 40): number {
    return Math.floor(this.maxBytes / 4 / width);
  }

  /** The list for `key`, walked by `walk` when not kept; undefined when the walk is too long to keep. */
  get(key: string, walk: () => Promise<CommitIdList | undefined>): Promise<CommitIdList | undefined> {
    const kept = this.lists.get(key);
    if (kept) {
      this.lists.delete(key);
      this.lists.set(key, kept);
      return kept;
    }
    if (this.maxBytes <= 0) return walk();
    const made = walk().then(
      (list) => {
        if (this.lists.get(key) !== made) return list;
        if (!list || list.bytes > this.maxBytes / 4) this.lists.delete(key);
        else this.account(key, list.bytes + key.length);
        return list;
      },
      (err: unknown) => {
        if (this.lists.get(key) === made) this.lists.delete(key);
        throw err;
      },
    );
    this.lists.set(key, made);
    return made;
  }

  private account(key: string, bytes: number): void {
    this.sizes.set(key, bytes);
    this.bytes += bytes;
    for (const oldest of this.lists.keys()) {
      if (this.bytes <= this.maxBytes) break;
      const size = this.sizes.get(oldest);
      // A walk still running is not counted yet and stays.
      if (size === undefined) continue;
      this.lists.delete(oldest);
      this.sizes.delete(oldest);
      this.bytes -= size;
    }
  }
}

/** About what a CommitInfo holds in memory: its strings at two bytes a character, and the object around them. */
export function commitInfoBytes(c: CommitInfo): number {
  const text =
    c.message.length +
    c.title.length +
    c.authorName.length +
    c.authorEmail.length +
    c.committerName.length +
    c.committerEmail.length +
    (c.parentIds.length + 2) * 40 +
    3 * 25;
  return 2 * text + 400;
}

/**
 * Commits as read for the commits API, by repository and id (a commit never changes), bounded by
 * bytes (LODE_COMMIT_CACHE_BYTES), least recently used first out: a page of 100 commits read again
 * costs no libgit2 job, where it cost 100 thread-pool round trips.
 */
export class CommitInfoCache {
  private readonly commits: BytesLru<CommitInfo>;

  constructor(maxBytes: number) {
    this.commits = new BytesLru(maxBytes, maxBytes / 16);
  }

  get(repo: string, sha: string): CommitInfo | undefined {
    return this.commits.get(`${repo}\0${sha}`);
  }

  set(repo: string, info: CommitInfo): void {
    const key = `${repo}\0${info.id}`;
    this.commits.set(key, info, commitInfoBytes(info) + key.length);
  }
}
