import { Invalidations, LodeConfig, type Metrics, type Recorded } from '@app/platform';
import {
  ALL_PUBLIC_PROJECTS,
  PublicProjectAnswers,
  publicProjectInvalidationRoute,
  publicProjectKey,
} from './public-project-answers';

const event = (type: string, data: Record<string, unknown>): Recorded =>
  ({
    type,
    data,
    streamId: 'x-1',
    streamVersion: 1,
    globalPosition: '1',
    metadata: {},
    recordedAt: new Date(),
  }) as Recorded;
const keys = (type: string, data: Record<string, unknown>) => {
  const out = publicProjectInvalidationRoute(event(type, data));
  return out === undefined ? [] : Array.isArray(out) ? out : [out];
};

describe('publicProjectInvalidationRoute', () => {
  it.each([
    'ProjectUpdated',
    'ProjectAvatarChanged',
    'ProjectArchived',
    'ProjectUnarchived',
    'ProjectTransferred',
    'ProjectStarred',
    'ProjectUnstarred',
    'RepositoryPushed',
    'ProjectImportStatusChanged',
    'ProjectMemberAdded',
    // An event no one has written yet that names a project: stale all the same.
    'ProjectSomethingNew',
  ])('stales the project a %s names', (type) => {
    expect(keys(type, { projectId: 7, at: 'now' })).toEqual([publicProjectKey(7)]);
  });

  it.each(['ProjectForked', 'ProjectForkRelationCreated', 'ProjectForkRelationRemoved'])(
    "stales the fork and its source's count on %s",
    (type) => {
      expect(keys(type, { projectId: 7, forkedFromId: 3 })).toEqual([publicProjectKey(7), publicProjectKey(3)]);
    },
  );

  it.each(['ProjectDeleted', 'GroupUpdated', 'GroupTransferred', 'GroupDeleted', 'UserUpdated', 'UserDeleted'])(
    'stales every answer on %s (a fork source, or a namespace shown in many answers)',
    (type) => {
      expect(keys(type, { projectId: 7, groupId: 2, userId: 4 })).toEqual([ALL_PUBLIC_PROJECTS]);
    },
  );

  it('leaves answers alone for events that name no project and change no namespace', () => {
    for (const type of ['UserActivityRecorded', 'AccessTokenCreated', 'GroupMemberAdded', 'SshKeyAdded', 'UserCreated'])
      expect(keys(type, { userId: 4, groupId: 2 })).toEqual([]);
  });
});

/** Takes every metric and keeps none: the class under test only registers them. */
const metricsSink = { counter: () => ({ inc: () => undefined }), gauge: () => undefined } as unknown as Metrics;

/**
 * Answers on one process of the embedded database, where `caughtUp` holds at once and only the
 * evictions decide; or on `fence`, an Invalidations of the test's own.
 */
function answersOn(
  projectCacheBytes = 8 * 1024 * 1024,
  fence?: (config: LodeConfig) => Invalidations,
): PublicProjectAnswers {
  const config = new LodeConfig();
  config.embeddedDatabase = fence === undefined;
  config.projectCacheBytes = projectCacheBytes;
  return new PublicProjectAnswers(config, fence ? fence(config) : new Invalidations(config), metricsSink);
}

describe('PublicProjectAnswers: projects remembered public for anonymous reads of their code', () => {
  it('remembers a project an anonymous read found public, until an eviction names it', async () => {
    const a = answersOn();
    expect(await a.isPublic(7)).toBe(false);
    a.notePublic(7, a.epoch);
    a.notePublic(8, a.epoch);
    expect(await a.isPublic(7)).toBe(true);
    a.evict([publicProjectKey(7)]);
    expect(await a.isPublic(7)).toBe(false);
    expect(await a.isPublic(8)).toBe(true);
    a.evict([ALL_PUBLIC_PROJECTS]);
    expect(await a.isPublic(8)).toBe(false);
    a.notePublic(8, a.epoch);
    a.evict('all');
    expect(await a.isPublic(8)).toBe(false);
  });

  it('does not remember a read that an eviction of its project (or of all) overtook', async () => {
    const a = answersOn();
    const before = a.epoch;
    a.evict([publicProjectKey(7)]);
    a.notePublic(7, before);
    expect(await a.isPublic(7)).toBe(false);
    // Another project's eviction leaves the read alone.
    const second = a.epoch;
    a.evict([publicProjectKey(9)]);
    a.notePublic(7, second);
    expect(await a.isPublic(7)).toBe(true);
    const third = a.epoch;
    a.evict('all');
    a.notePublic(8, third);
    expect(await a.isPublic(8)).toBe(false);
  });

  it('remembers nothing when LODE_PROJECT_CACHE_BYTES is 0', async () => {
    const a = answersOn(0);
    a.notePublic(7, a.epoch);
    expect(await a.isPublic(7)).toBe(false);
  });

  it('remembers at most 50,000 projects, the least recently asked out first', async () => {
    const a = answersOn();
    for (let id = 1; id <= 50_000; id += 1) a.notePublic(id, a.epoch);
    expect(await a.isPublic(1)).toBe(true); // asked: now the most recent
    a.notePublic(50_001, a.epoch);
    expect(await a.isPublic(2)).toBe(false);
    expect(await a.isPublic(1)).toBe(true);
    expect(await a.isPublic(50_001)).toBe(true);
  });
});

describe('PublicProjectAnswers: anonymous answers kept by URL', () => {
  const answer = (text: string) => ({ body: Buffer.from(text), headers: ['X-Gitlab-Ref', 'master'] });
  const url = (id: number, n = 0) => `/api/v4/projects/${id}/repository/files/f${n}?ref=master`;

  it('answers a URL of its own project until an event names the project', async () => {
    const a = answersOn();
    a.keepUrl(7, url(7), answer('seven'), a.epoch);
    a.keepUrl(7, url(7, 1), answer('seven again'), a.epoch);
    a.keepUrl(8, url(8), answer('eight'), a.epoch);
    expect((await a.lookupUrl(7, url(7)))?.body.toString()).toBe('seven');
    // Asked as another project's, it is not that project's answer.
    expect(await a.lookupUrl(8, url(7))).toBeUndefined();
    a.evict([publicProjectKey(7)]);
    expect(await a.lookupUrl(7, url(7))).toBeUndefined();
    expect(await a.lookupUrl(7, url(7, 1))).toBeUndefined();
    expect((await a.lookupUrl(8, url(8)))?.body.toString()).toBe('eight');
    expect(a.urlCache.entries).toBe(1);
    a.evict('all');
    expect(a.urlCache).toEqual({ bytes: 0, entries: 0 });
  });

  it('does not keep an answer read before an eviction of its project landed', async () => {
    const a = answersOn();
    const before = a.epoch;
    a.evict([publicProjectKey(7)]);
    a.keepUrl(7, url(7), answer('stale'), before);
    expect(await a.lookupUrl(7, url(7))).toBeUndefined();
  });

  it('keeps within LODE_PROJECT_CACHE_BYTES, the least recently used out first, and nothing at 0', async () => {
    const a = answersOn(16 * 1024);
    for (let n = 0; n < 40; n += 1) a.keepUrl(7, url(7, n), answer('x'.repeat(500)), a.epoch);
    expect(a.urlCache.bytes).toBeLessThanOrEqual(16 * 1024);
    expect(await a.lookupUrl(7, url(7, 0))).toBeUndefined();
    expect(await a.lookupUrl(7, url(7, 39))).toBeDefined();
    // One answer over a sixteenth of the budget is not kept.
    a.keepUrl(9, url(9), answer('y'.repeat(2000)), a.epoch);
    expect(await a.lookupUrl(9, url(9))).toBeUndefined();
    const off = answersOn(0);
    off.keepUrl(7, url(7), answer('seven'), off.epoch);
    expect(await off.lookupUrl(7, url(7))).toBeUndefined();
  });
});

describe('PublicProjectAnswers: an eviction heard while the fence is out', () => {
  /** `caughtUp` answers when the test says: what a NOTIFY arriving during the fence's round trip looks like. */
  class HeldFence extends Invalidations {
    release: () => void = () => undefined;
    override caughtUp(): Promise<boolean> {
      return new Promise((resolve) => (this.release = () => resolve(true)));
    }
  }
  const setUp = () => {
    let fence!: HeldFence;
    const a = answersOn(undefined, (config) => (fence = new HeldFence(config)));
    return { a, fence };
  };

  it('is not public once an eviction of it landed during the fence', async () => {
    const { a, fence } = setUp();
    a.notePublic(7, a.epoch);
    const asked = a.isPublic(7);
    a.evict([publicProjectKey(7)]);
    fence.release();
    expect(await asked).toBe(false);
  });

  it('answers no URL evicted during the fence, nor one replaced meanwhile', async () => {
    const { a, fence } = setUp();
    const url = '/api/v4/projects/7/repository/files/f?ref=master';
    a.keepUrl(7, url, { body: Buffer.from('old'), headers: [] }, a.epoch);
    const asked = a.lookupUrl(7, url);
    a.evict([publicProjectKey(7)]);
    a.keepUrl(7, url, { body: Buffer.from('new'), headers: [] }, a.epoch);
    fence.release();
    expect(await asked).toBeUndefined();
    const again = a.lookupUrl(7, url);
    fence.release();
    expect((await again)?.body.toString()).toBe('new');
  });
});
