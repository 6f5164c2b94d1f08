import { Metrics } from '@app/platform';
import type { AddressInfo } from 'node:net';
import { getFrom } from '../support/from-address';
import { createUser, type SeededUser } from '../support/seed';
import { startTestApp, type TestApp } from '../support/test-app';

/** LODE_RATE_LIMIT_*: per user and per anonymous address, 429 with Retry-After and GitLab's RateLimit-* headers. */
describe('request rate limits', () => {
  let t: TestApp;
  let port: number;
  let limited: SeededUser;
  let other: SeededUser;

  const from = (address: string, path: string, headers: Record<string, string> = {}) =>
    getFrom(port, address, path, headers);

  beforeAll(async () => {
    t = await startTestApp({ rateLimitUnauthenticated: 2, rateLimitPeriod: 60 });
    await t.app.listen(0, '127.0.0.1');
    port = (t.app.getHttpServer().address() as AddressInfo).port;
    limited = await createUser(t);
    other = await createUser(t);
    // Set up as root first, then limit signed-in callers (the setting is read on each request).
    t.config.rateLimitAuthenticated = 3;
  });
  afterAll(() => t.close());

  it('counts each user’s requests and answers 429 with Retry-After past the limit', async () => {
    const remaining: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await from('127.0.0.31', '/api/v4/user', { 'PRIVATE-TOKEN': limited.token });
      expect(r.status).toBe(200);
      expect(r.headers['ratelimit-limit']).toBe('3');
      remaining.push(String(r.headers['ratelimit-remaining']));
    }
    expect(remaining).toEqual(['2', '1', '0']);
    // The same user from another address is the same budget.
    const refused = await from('127.0.0.32', '/api/v4/user', { 'PRIVATE-TOKEN': limited.token });
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.body)).toEqual({ message: '429 Too Many Requests' });
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(refused.headers['ratelimit-observed']).toBe('4');
    expect(Number(refused.headers['ratelimit-reset'])).toBeGreaterThan(Date.now() / 1000);
    expect(new Date(String(refused.headers['ratelimit-resettime'])).getTime()).toBeGreaterThan(Date.now() - 1000);
    // Another user is not affected.
    expect((await from('127.0.0.31', '/api/v4/user', { 'PRIVATE-TOKEN': other.token })).status).toBe(200);
    // Git over HTTP counts against the same budget, in Rack::Attack's words.
    const git = await from('127.0.0.31', `/${limited.username}/none.git/info/refs?service=git-upload-pack`, {
      Authorization: `Basic ${Buffer.from(`git:${limited.token}`).toString('base64')}`,
    });
    expect(git.status).toBe(429);
    expect(git.body).toBe('Retry later\n');
    expect(Number(git.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('counts requests without credentials by address', async () => {
    expect((await from('127.0.0.33', '/api/v4/projects')).status).toBe(200);
    expect((await from('127.0.0.33', '/api/v4/projects')).status).toBe(200);
    const refused = await from('127.0.0.33', '/api/v4/projects');
    expect(refused.status).toBe(429);
    expect(refused.headers['ratelimit-limit']).toBe('2');
    // Another address, and a signed-in caller from the same one, are not.
    expect((await from('127.0.0.34', '/api/v4/projects')).status).toBe(200);
    expect((await from('127.0.0.33', '/api/v4/projects', { 'PRIVATE-TOKEN': other.token })).status).toBe(200);
  });

  it("counts an answer from the cache of public projects as the route's own", async () => {
    const made = await t.http().post('/api/v4/projects').set('PRIVATE-TOKEN', t.rootToken).send({
      name: 'Rate limited',
      visibility: 'public',
    });
    expect(made.status).toBe(201);
    const path = `/api/v4/projects/${made.body.id}`;
    const hits = async () => {
      const m = t.app.get(Metrics).registry.getSingleMetric('lode_project_cache_hits_total');
      return m ? ((await m.get()).values[0]?.value ?? 0) : 0;
    };
    // Kept by one address's reads, then read from another: each answer counted, the third refused.
    expect((await from('127.0.0.36', path)).status).toBe(200);
    expect((await from('127.0.0.36', path)).status).toBe(200);
    const before = await hits();
    const first = await from('127.0.0.37', path);
    const second = await from('127.0.0.37', path);
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(await hits()).toBe(before + 2);
    expect([first.headers['ratelimit-remaining'], second.headers['ratelimit-remaining']]).toEqual(['1', '0']);
    const refused = await from('127.0.0.37', path);
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.body)).toEqual({ message: '429 Too Many Requests' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('never counts the probes or the metrics scrape (GitLab skips health-check requests)', async () => {
    for (let i = 0; i < 4; i++) {
      for (const path of ['/-/health', '/-/liveness', '/-/readiness', '/-/metrics']) {
        const r = await from('127.0.0.35', path);
        expect([path, r.status]).toEqual([path, 200]);
        expect(r.headers['ratelimit-limit']).toBeUndefined();
      }
    }
    // The address's API allowance is untouched by them.
    expect((await from('127.0.0.35', '/api/v4/projects')).status).toBe(200);
  });
});
