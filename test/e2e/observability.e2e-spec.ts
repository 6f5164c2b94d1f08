import { DependencyProbe, LodeConfig } from '@app/platform';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { getFrom } from '../support/from-address';
import { gitOk, tempDirs } from '../support/git';
import { createUser, type SeededUser } from '../support/seed';
import { EMBEDDED, eventually, startTestApp, type TestApp } from '../support/test-app';
import { bytes } from '../support/bytes';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

/** One sample of Prometheus' text format: name, labels, value. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the exposition format (the lines that are samples; `# HELP`/`# TYPE` are checked apart). */
function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, k, v] of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[k] = v;
    samples.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return samples;
}

function value(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  return samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
}

describe('observability: metrics, JSON logs, liveness and readiness', () => {
  let t: TestApp;
  let port: number;
  let receiver: WebhookReceiver;
  let user: SeededUser;
  let project: { id: number; path_with_namespace: string };
  const tmp = tempDirs();
  const logged: string[] = [];
  const stdoutWrite = process.stdout.write.bind(process.stdout);

  const scrape = (from: string, headers: Record<string, string> = {}) => getFrom(port, from, '/-/metrics', headers);

  beforeAll(async () => {
    // Everything the server logs, kept for the assertions (and kept out of the test output).
    process.stdout.write = ((chunk: unknown) => {
      logged.push(String(chunk));
      return true;
    }) as typeof process.stdout.write;
    receiver = await startWebhookReceiver();
    t = await startTestApp({
      allowLocalWebhooks: true,
      defaultBranchProtection: 0,
      // Only 127.0.0.1: the tests' other loopback addresses stand for a stranger.
      metricsAllow: ['127.0.0.1'],
      logLevel: 'log',
      logFormat: 'json',
    });
    await t.app.listen(0, '127.0.0.1');
    port = (t.app.getHttpServer().address() as AddressInfo).port;
    user = await createUser(t);
    project = (await t.http().post('/api/v4/projects').set('PRIVATE-TOKEN', user.token).send({ name: 'Observed' }))
      .body;
  }, 60_000);

  afterAll(async () => {
    process.stdout.write = stdoutWrite;
    tmp.removeAll();
    await t?.close();
    await receiver?.close();
  });

  it('counts requests by route template, appends, the outbox, queues, deliveries and git processes', async () => {
    const hook = await t
      .http()
      .post(`/api/v4/projects/${project.id}/hooks`)
      .set('PRIVATE-TOKEN', user.token)
      .send({ url: `${receiver.url}/observed`, push_events: true });
    expect(hook.status).toBe(201);
    expect((await t.http().get(`/api/v4/projects/${project.id}`).set('PRIVATE-TOKEN', user.token)).status).toBe(200);
    expect((await t.http().get('/api/v4/projects/999999').set('PRIVATE-TOKEN', user.token)).status).toBe(404);

    const work = tmp.make();
    await gitOk(['init', '-q', '-b', 'master', work]);
    writeFileSync(join(work, 'README.md'), '# observed\n');
    await gitOk(['add', '-A'], work);
    await gitOk(['commit', '-q', '-m', 'first'], work);
    await gitOk(
      ['push', '-q', `http://git:${user.token}@127.0.0.1:${port}/${project.path_with_namespace}.git`, 'master'],
      work,
    );
    await eventually(() => receiver.received.length > 0, 15_000);
    // A raw blob read goes through the long-lived cat-file pool.
    const raw = await t
      .http()
      .get(`/api/v4/projects/${project.id}/repository/files/README.md/raw?ref=master`)
      .set('PRIVATE-TOKEN', user.token);
    expect(raw.status).toBe(200);

    const samples = (await eventually(async () => {
      const res = await scrape('127.0.0.1');
      expect(res.status).toBe(200);
      const s = parseMetrics(res.body);
      // The delivery is counted once the job has recorded it.
      return (value(s, 'lode_webhook_deliveries_total', { outcome: 'delivered' }) ?? 0) >= 1 && s;
    }, 15_000)) as Sample[];
    const res = await scrape('127.0.0.1');
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.body).toContain('# TYPE lode_http_request_duration_seconds histogram');

    // By route template: the project's id is no label value anywhere.
    const get = { method: 'GET', route: '/api/v4/projects/:id' };
    expect(
      value(samples, 'lode_http_request_duration_seconds_count', { ...get, status: '200' }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      value(samples, 'lode_http_request_duration_seconds_count', { ...get, status: '404' }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      value(samples, 'lode_http_request_duration_seconds_bucket', { ...get, status: '200', le: '+Inf' }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      value(samples, 'lode_http_request_duration_seconds_count', {
        method: 'POST',
        route: '/*path.git/git-receive-pack',
        status: '200',
      }),
    ).toBe(1);
    const routes = new Set(samples.filter((s) => s.labels.route).map((s) => s.labels.route));
    for (const route of routes) {
      expect(route).not.toContain(String(project.id));
      expect(route).not.toContain('999999');
      expect(route).not.toContain(project.path_with_namespace);
    }

    expect(value(samples, 'lode_event_store_append_duration_seconds_count')).toBeGreaterThanOrEqual(3);
    expect(value(samples, 'lode_event_store_append_duration_seconds_sum')).toBeGreaterThan(0);
    expect(value(samples, 'lode_outbox_backlog')).toBeGreaterThanOrEqual(0);
    expect(value(samples, 'lode_outbox_oldest_undone_age_seconds')).toBeGreaterThanOrEqual(0);
    // The push's fan-out and its delivery completed on the webhooks queue; every state is reported.
    expect(value(samples, 'lode_queue_jobs', { queue: 'webhooks', state: 'completed' })).toBeGreaterThanOrEqual(2);
    for (const state of ['waiting', 'active', 'delayed', 'failed'])
      expect(value(samples, 'lode_queue_jobs', { queue: 'webhooks', state })).toBeDefined();
    expect(value(samples, 'lode_queue_jobs', { queue: 'git', state: 'waiting' })).toBeDefined();
    expect(value(samples, 'lode_webhook_deliveries_total', { outcome: 'delivered' })).toBe(1);
    expect(value(samples, 'lode_webhook_deliveries_total', { outcome: 'http_error' })).toBe(0);
    const pool = value(samples, 'lode_git_cat_file_pool_size') ?? 0;
    expect(pool).toBeGreaterThanOrEqual(1);
    // The pool's processes are running git processes too.
    expect(value(samples, 'lode_git_processes_running')).toBeGreaterThanOrEqual(pool);
    // Node's default metrics.
    expect(value(samples, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(value(samples, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
  }, 60_000);

  it('backlog and the age of the oldest undone row follow the outbox', async () => {
    // A row written long ago that no job finished (its queue unknown to the relay's workers).
    await t.db.query(
      `insert into outbox (global_position, queue, name, job_id, data, created_at, dispatched_at)
       values (0, 'nowhere', 'stuck', 'observability-stuck', '{}', clock_timestamp() - interval '1 hour', clock_timestamp())`,
    );
    try {
      const samples = parseMetrics((await scrape('127.0.0.1')).body);
      expect(value(samples, 'lode_outbox_backlog')).toBeGreaterThanOrEqual(1);
      expect(value(samples, 'lode_outbox_oldest_undone_age_seconds')).toBeGreaterThanOrEqual(3600);
    } finally {
      await t.db.query(`delete from outbox where job_id = 'observability-stuck'`);
    }
    const after = parseMetrics((await scrape('127.0.0.1')).body);
    expect(value(after, 'lode_outbox_oldest_undone_age_seconds')).toBeLessThan(3600);
  });

  it('serves metrics only to LODE_METRICS_ALLOW and to administrators', async () => {
    const stranger = await scrape('127.0.0.5');
    expect(stranger.status).toBe(404);
    expect(stranger.body).not.toContain('lode_');
    expect((await scrape('127.0.0.5', { 'PRIVATE-TOKEN': user.token })).status).toBe(404);
    const admin = await scrape('127.0.0.5', { 'PRIVATE-TOKEN': t.rootToken });
    expect(admin.status).toBe(200);
    expect(admin.body).toContain('lode_http_request_duration_seconds_bucket');
    expect((await scrape('127.0.0.1')).status).toBe(200);
  });

  it('logs one JSON line per request with its request id, route, status, duration and user, and no secret', async () => {
    const requestId = `obs-${Date.now()}`;
    const res = await t
      .http()
      .get(`/api/v4/projects/${project.id}?private_token=${user.token}`)
      .set('X-Request-Id', requestId);
    expect(res.status).toBe(200);
    expect(res.headers['x-request-id']).toBe(requestId);
    const anonymous = await t.http().get('/api/v4/version');
    // An archive's body is sent by another process (the git helper's cat): the request is logged
    // when the connection is handed over, with the status sent.
    const archiveId = `obs-archive-${Date.now()}`;
    const archive = await t
      .http()
      .get(`/api/v4/projects/${project.id}/repository/archive.tar`)
      .set('PRIVATE-TOKEN', user.token)
      .set('X-Request-Id', archiveId)
      .buffer(true)
      .parse(bytes);
    expect(archive.status).toBe(200);
    expect((archive.body as Buffer).length).toBe(Number(archive.headers['content-length']));
    const lines = (await eventually(() => {
      const parsed = logged
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      return parsed.some((l) => l.request_id === requestId) && parsed.some((l) => l.request_id === archiveId) && parsed;
    })) as Record<string, unknown>[];
    const line = lines.find((l) => l.request_id === requestId)!;
    expect(line).toMatchObject({
      level: 'info',
      msg: 'GET /api/v4/projects/:id 200',
      method: 'GET',
      route: '/api/v4/projects/:id',
      status: 200,
      user_id: user.id,
      path: `/api/v4/projects/${project.id}?private_token=[FILTERED]`,
    });
    expect(typeof line.time).toBe('string');
    expect(new Date(line.time as string).getTime()).toBeGreaterThan(Date.now() - 60_000);
    expect(line.duration).toBeGreaterThan(0);
    expect(lines.find((l) => l.request_id === archiveId)).toMatchObject({
      msg: 'GET /api/v4/projects/:id/repository/archive.:format 200',
      status: 200,
      user_id: user.id,
    });
    const other = lines.find((l) => l.request_id === anonymous.headers['x-request-id'])!;
    expect(other).toMatchObject({ route: '/api/v4/version', user_id: null });
    // Nest's own lines are pino lines too, but its start-up chatter (a line per module, controller
    // and route) is debug: at info, a start says what an operator reads.
    expect(
      lines.filter((l) => ['RouterExplorer', 'RoutesResolver', 'InstanceLoader'].includes(l.context as string)),
    ).toEqual([]);
    // The push's fan-out (which makes the deliveries' first attempts) logs under the request id of the push that caused it.
    const push = lines.find((l) => l.route === '/*path.git/git-receive-pack')!;
    expect(push).toMatchObject({ method: 'POST', status: 200, user_id: user.id });
    for (const kind of ['push-fanout'])
      expect(lines.find((l) => l.msg === `job webhooks/${kind} completed`)).toMatchObject({
        request_id: push.request_id,
        queue: 'webhooks',
        kind,
        attempt: 1,
      });
    const all = logged.join('');
    for (const secret of [user.token, t.rootToken]) expect(all.includes(secret)).toBe(false);
  });

  it('liveness fails while the event loop has been blocked for more than 5 s, and recovers', async () => {
    const live = await t.http().get('/-/liveness');
    expect(live.status).toBe(200);
    expect(live.body).toEqual({ status: 'ok' });
    // The server runs in this process: block its loop for 5.5 s.
    const until = Date.now() + 5500;
    while (Date.now() < until);
    const stuck = await t.http().get('/-/liveness');
    expect(stuck.status).toBe(503);
    expect(stuck.body.status).toBe('failed');
    expect(stuck.body.message).toMatch(/^the event loop was blocked for \d+ ms$/);
    await eventually(async () => (await t.http().get('/-/liveness')).status === 200, 20_000, 500);
  }, 40_000);

  it('readiness?all=1 answers each check', async () => {
    const res = await t.http().get('/-/readiness?all=1');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 'ok',
      master_check: [{ status: 'ok' }],
      db_check: [{ status: 'ok' }],
      queues_check: [{ status: 'ok' }],
      storage_check: [{ status: 'ok', labels: { shard: 'default' } }],
    });
    // Without `all`, the short answer stays.
    expect((await t.http().get('/-/readiness')).body).toEqual({
      status: 'ok',
      // Without Redis (embedded mode) the database serves the queues, and the answer says so.
      checks: EMBEDDED
        ? { database: { status: 'ok' }, queues: { status: 'ok', backend: 'database' } }
        : { database: { status: 'ok' }, redis: { status: 'ok' } },
    });
  });

  it('the storage check fails when the repository storage cannot take a file', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'lode-storage-'));
    try {
      writeFileSync(join(dataDir, 'repositories'), 'a file where the directory should be');
      const config = Object.assign(new LodeConfig(), { dataDir });
      const probe = new DependencyProbe(t.app.get(DataSource), config);
      expect(await probe.storage()).toMatch(/EEXIST|ENOTDIR/);
      await probe.onApplicationShutdown();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
