import {
  Invalidations,
  LodeConfig,
  Metrics,
  ownBuffer,
  type DomainEvent,
  type HotAnswer,
  type HotRead,
  type InvalidationRoute,
  type Recorded,
} from '@app/platform';
import { Injectable } from '@nestjs/common';

/** The cache key of one project's anonymous answer. */
export const publicProjectKey = (projectId: number) => `public-project:${projectId}`;
/** Stales every cached answer: what changes a namespace or a user's name shows in many projects' answers. */
export const ALL_PUBLIC_PROJECTS = 'public-project:*';

/** How many projects' last evictions are remembered one by one (see `evictedAt`). */
const MAX_EVICTION_MARKS = 10_000;
/** How many projects are remembered as public for anonymous reads of their code (`isPublic`), least recently used out. */
const MAX_PUBLIC_IDS = 50_000;
/** What a cached answer costs beyond its bytes (the Map entry, the Buffer object): counted against the limit. */
const ENTRY_OVERHEAD = 128;

const idOf = (data: unknown, field: string): number | undefined => {
  const v = data && typeof data === 'object' ? (data as Record<string, unknown>)[field] : undefined;
  return typeof v === 'number' && Number.isInteger(v) ? v : undefined;
};

/**
 * The events that change an anonymous `GET /projects/:id` answer (GitLab's BasicProjectDetails: name,
 * description, paths, namespace names, default branch, topics, avatar, star and fork counts, last
 * activity) or whether it is shown at all (visibility, deletion).
 *
 * - Any event whose data names a `projectId` stales that project: its own settings, visibility,
 *   archiving, avatar, transfer, stars, pushes (`last_activity_at`, `default_branch`) and, needlessly
 *   but safely, members, hooks, releases and protected refs. An event a later change adds is covered
 *   by the same rule.
 * - A fork, a fork relation made or removed: also the source, whose `forks_count` moved.
 * - A project deleted: everything, since the source it may have been forked from (whose count drops)
 *   is not in the event.
 * - A group updated, moved or deleted, a user updated or deleted: everything, since a namespace's
 *   name and full path (a user's name and username for a personal one) are in every answer below it.
 *   These are rare next to reads.
 */
export const publicProjectInvalidationRoute: InvalidationRoute = (event: Recorded<DomainEvent>) => {
  switch (event.type) {
    case 'ProjectDeleted':
    case 'GroupUpdated':
    case 'GroupTransferred':
    case 'GroupDeleted':
    case 'UserUpdated':
    case 'UserDeleted':
      return ALL_PUBLIC_PROJECTS;
    case 'ProjectForked':
    case 'ProjectForkRelationCreated':
    case 'ProjectForkRelationRemoved': {
      const keys = [idOf(event.data, 'projectId'), idOf(event.data, 'forkedFromId')];
      return keys.filter((id): id is number => id !== undefined).map(publicProjectKey);
    }
    default: {
      const id = idOf(event.data, 'projectId');
      return id === undefined ? undefined : publicProjectKey(id);
    }
  }
};

/**
 * A serialized answer kept for replay: its body and the headers the route set beyond the common ones,
 * as `writeHead` takes them (name, value, name, value...), so a replay copies nothing.
 */
export interface KeptAnswer {
  body: Buffer;
  headers: readonly string[];
}

/**
 * The serialized anonymous answer of `GET /api/v4/projects/:id` for public projects, kept in memory
 * and bounded by bytes (LODE_PROJECT_CACHE_BYTES, least recently used out first).
 *
 * Consistency: an event that changes an answer (`publicProjectInvalidationRoute`) evicts it in the
 * process that wrote it before the command returns, and in every other process through
 * `Invalidations`' NOTIFY. A kept answer is served only after `Invalidations.caughtUp()` (every
 * NOTIFY committed before the request arrived has been heard) and only if it is still there then, so
 * a project made private through any process is never shown by another after that write answered.
 * An answer read while an eviction of it (or of everything) landed is not kept (`epoch`). Only anonymous answers are kept:
 * they are the same for every anonymous caller, while a signed-in caller's carries their own
 * `permissions` and what their membership lets them see.
 *
 * Beside the answers it remembers which projects an anonymous read last found public (`notePublic`,
 * `isPublic`), under the same evictions: what lets an anonymous raw read of a blob by id (immutable
 * bytes) be answered without the project's query (libs/repositories' `publicRepositoryReads`). And it
 * keeps other anonymous answers of a public project by request URL (`keepUrl`, `lookupUrl`: the files
 * API's), under the same evictions too, within a second budget of LODE_PROJECT_CACHE_BYTES: what such
 * an answer shows of the repository changes only with a ref move, and every ref move is recorded as
 * an event naming the project before the push or write that made it is answered.
 */
@Injectable()
export class PublicProjectAnswers {
  private readonly entries = new Map<number, Buffer>();
  private bytes = 0;
  /** Bumped by every eviction; `epoch` hands it out. */
  private evictions = 0;
  /** The eviction that last forgot everything: no answer read before it is kept. */
  private allEvictedAt = 0;
  /**
   * Per project, the eviction that last named it: an answer of that project read before it is not
   * kept, while evictions of other projects (a background job's event) leave its read alone.
   */
  private readonly evictedAt = new Map<number, number>();
  /** Projects an anonymous read found public since their last eviction, least recently used first. */
  private readonly publicIds = new Set<number>();
  /** Anonymous answers by request URL, least recently used first, and the URLs kept of each project. */
  private readonly urlAnswers = new Map<string, { projectId: number; answer: KeptAnswer; cost: number }>();
  private readonly urlsOf = new Map<number, Set<string>>();
  private urlBytes = 0;
  private readonly hits: { inc(by?: number): void };
  private readonly misses: { inc(by?: number): void };

  constructor(
    private readonly config: LodeConfig,
    private readonly invalidations: Invalidations,
    metrics: Metrics,
  ) {
    invalidations.subscribe((keys) => this.evict(keys));
    this.hits = metrics.counter(
      'lode_project_cache_hits_total',
      'Anonymous GET /projects/:id answered from the cache of public projects',
    );
    this.misses = metrics.counter(
      'lode_project_cache_misses_total',
      'Anonymous GET /projects/:id that the cache of public projects could not answer',
    );
    metrics.gauge('lode_project_cache_bytes', 'Bytes held by the cache of public project answers', () => this.bytes);
    metrics.gauge(
      'lode_project_cache_entries',
      'Answers held by the cache of public project answers',
      () => this.entries.size,
    );
    metrics.gauge(
      'lode_project_url_cache_bytes',
      'Bytes held of anonymous answers of public projects kept by URL (the files API)',
      () => this.urlBytes,
    );
  }

  /** Taken before reading a project: hand it back to `keep`. */
  get epoch(): number {
    return this.evictions;
  }

  /** The kept answer of a project, once every earlier eviction has been heard; undefined otherwise. */
  async lookup(projectId: number): Promise<Buffer | undefined> {
    const body = this.entries.get(projectId);
    if (!body || !(await this.invalidations.caughtUp()) || this.entries.get(projectId) !== body) {
      this.misses.inc();
      return undefined;
    }
    // Least recently used first: a hit moves to the end.
    this.entries.delete(projectId);
    this.entries.set(projectId, body);
    this.hits.inc();
    return body;
  }

  /** Keeps a public project's anonymous answer, unless an eviction landed since `epoch` was taken. */
  keep(projectId: number, answer: unknown, epoch: number): void {
    const limit = this.config.projectCacheBytes;
    if (limit <= 0 || this.allEvictedAt > epoch || (this.evictedAt.get(projectId) ?? 0) > epoch) return;
    // One already kept is as current (evictions remove, never replace) and may be awaited by lookups
    // that compare it by identity: replacing it would send them all to the database.
    if (this.entries.has(projectId)) return;
    const body = ownBuffer(JSON.stringify(answer));
    const cost = body.length + ENTRY_OVERHEAD;
    // One answer may not push out a sixteenth of the others (a description can be long).
    if (cost > limit / 16) return;
    this.entries.set(projectId, body);
    this.bytes += cost;
    for (const [oldest, kept] of this.entries) {
      if (this.bytes <= limit) break;
      this.entries.delete(oldest);
      this.bytes -= kept.length + ENTRY_OVERHEAD;
    }
  }

  /**
   * Remembers that an anonymous caller may read project `projectId` (its row, read after `epoch` was
   * taken, said public), unless an eviction of it landed since.
   */
  notePublic(projectId: number, epoch: number): void {
    if (this.config.projectCacheBytes <= 0) return;
    if (this.allEvictedAt > epoch || (this.evictedAt.get(projectId) ?? 0) > epoch) return;
    if (this.publicIds.has(projectId)) return;
    this.publicIds.add(projectId);
    if (this.publicIds.size > MAX_PUBLIC_IDS) this.publicIds.delete(this.publicIds.values().next().value as number);
  }

  /**
   * Whether project `projectId` is public as far as anonymous callers go, once every earlier eviction
   * has been heard; false when not remembered (the caller asks the database).
   */
  async isPublic(projectId: number): Promise<boolean> {
    if (!this.publicIds.has(projectId) || !(await this.invalidations.caughtUp())) return false;
    if (!this.publicIds.delete(projectId)) return false; // evicted while the fence was out
    this.publicIds.add(projectId);
    return true;
  }

  /**
   * Keeps an anonymous answer of public project `projectId` to the request `url` (read after `epoch`
   * was taken), unless an eviction of the project landed since.
   */
  keepUrl(projectId: number, url: string, answer: KeptAnswer, epoch: number): void {
    const limit = this.config.projectCacheBytes;
    if (limit <= 0 || this.allEvictedAt > epoch || (this.evictedAt.get(projectId) ?? 0) > epoch) return;
    if (this.urlAnswers.has(url)) return; // as current, and compared by identity (see `keep`)
    let cost = answer.body.length + 2 * url.length + ENTRY_OVERHEAD;
    for (const part of answer.headers) cost += 2 * part.length;
    if (cost > limit / 16) return;
    this.urlAnswers.set(url, { projectId, answer: { ...answer, body: ownBuffer(answer.body) }, cost });
    let urls = this.urlsOf.get(projectId);
    if (!urls) this.urlsOf.set(projectId, (urls = new Set()));
    urls.add(url);
    this.urlBytes += cost;
    for (const [oldest] of this.urlAnswers) {
      if (this.urlBytes <= limit) break;
      this.dropUrl(oldest);
    }
  }

  /** The kept anonymous answer to `url` of project `projectId`, once every earlier eviction has been heard. */
  async lookupUrl(projectId: number, url: string): Promise<KeptAnswer | undefined> {
    const kept = this.urlAnswers.get(url);
    if (!kept || kept.projectId !== projectId) return undefined;
    if (!(await this.invalidations.caughtUp()) || this.urlAnswers.get(url) !== kept) return undefined;
    this.urlAnswers.delete(url);
    this.urlAnswers.set(url, kept);
    return kept.answer;
  }

  /** Bytes and entries of the answers kept by URL. */
  get urlCache(): { bytes: number; entries: number } {
    return { bytes: this.urlBytes, entries: this.urlAnswers.size };
  }

  private dropUrl(url: string): void {
    const kept = this.urlAnswers.get(url);
    if (!kept) return;
    this.urlAnswers.delete(url);
    this.urlBytes -= kept.cost;
    const urls = this.urlsOf.get(kept.projectId);
    urls?.delete(url);
    if (urls?.size === 0) this.urlsOf.delete(kept.projectId);
  }

  /** Forgets the answers named by `keys`, or all of them. */
  evict(keys: readonly string[] | 'all'): void {
    this.evictions += 1;
    if (keys === 'all' || keys.includes(ALL_PUBLIC_PROJECTS)) {
      this.forgetAll();
      return;
    }
    for (const key of keys) {
      if (!key.startsWith('public-project:')) continue;
      const id = Number(key.slice('public-project:'.length));
      if (!Number.isInteger(id)) continue;
      this.drop(id);
      this.evictedAt.set(id, this.evictions);
    }
    // The marks are bounded too: past the limit, one mark for everything (reads in flight are not kept).
    if (this.evictedAt.size > MAX_EVICTION_MARKS) this.forgetAll();
  }

  private forgetAll(): void {
    this.entries.clear();
    this.publicIds.clear();
    this.urlAnswers.clear();
    this.urlsOf.clear();
    this.urlBytes = 0;
    this.bytes = 0;
    this.evictedAt.clear();
    this.allEvictedAt = this.evictions;
  }

  private drop(projectId: number): void {
    this.publicIds.delete(projectId);
    for (const url of this.urlsOf.get(projectId) ?? []) this.dropUrl(url);
    const kept = this.entries.get(projectId);
    if (!kept) return;
    this.entries.delete(projectId);
    this.bytes -= kept.length + ENTRY_OVERHEAD;
  }
}

/** `/api/v4/projects/<id>` exactly: no trailing slash, no query string (the whole URL). */
const PROJECT_URL = /^\/api\/v4\/projects\/(\d{1,9})$/;
/** The route template the Nest route has, for the request log and `lode_http_request_duration_seconds`. */
const PROJECT_ROUTE = '/api/v4/projects/:id';
const PROJECT_ANSWER_HEADERS: readonly string[] = ['Content-Type', 'application/json'];

/**
 * An anonymous `GET /api/v4/projects/<id>` answered from `PublicProjectAnswers` ahead of the Nest
 * pipeline (guard, pipes, interceptors, the route), which is most of such a request's cost once the
 * project's query is gone (platform's `frontDoor`, or `hotReadsMiddleware` where the rate limit
 * counts it). Whatever it does not answer (a miss, another path, any credentials) goes on to Nest
 * unchanged, and the route keeps the answer it makes.
 */
export function publicProjectReads(answers: PublicProjectAnswers): HotRead {
  const found = (body: Buffer | undefined): HotAnswer | undefined =>
    body && { route: PROJECT_ROUTE, headers: PROJECT_ANSWER_HEADERS, body };
  return (url) => {
    const m = PROJECT_URL.exec(url);
    return m ? answers.lookup(Number(m[1])).then(found) : undefined;
  };
}
