import {
  JobKinds,
  ProjectionRebuilder,
  ProjectionRegistry,
  QueueHandles,
  queueConnection,
  type QueueMetric,
  type WorkerProcess,
} from '@app/platform';
import { MAINTENANCE_QUEUE } from '@app/users';
import { Worker, type Job, type RedisOptions } from 'bullmq';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { QUEUE_DASHBOARD_CSP } from '../../apps/lode/src/queue-dashboard';
import { describeInBrowser, launchBrowser, screenshot, watchedPage } from '../support/browser';
import { getFrom } from '../support/from-address';
import { createUser, type SeededUser } from '../support/seed';
import { EMBEDDED, eventually, startTestApp, type TestApp } from '../support/test-app';

/** Another Lode process, as its worker's name tells it (see workerName). */
const ELSEWHERE = { pid: 4242, startedAt: 1_700_000_000, concurrency: 3, hostname: 'elsewhere.example' };
const QUEUES = ['git', 'groups', 'maintenance', 'webhooks'];

const basic = (password: string, user = 'anyone') => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

function sample(text: string, name: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

describe("queue monitoring: GitLab's Sidekiq metrics API, the queue dashboard, rebuild progress", () => {
  let t: TestApp;
  let port: number;
  let user: SeededUser;
  let elsewhere: Worker | undefined;
  /** Runs of the other process's processor, and what makes the running one finish. */
  const runs: { job: Job; finish: (fail: boolean) => void }[] = [];

  const admin = (path: string) => t.http().get(path).set('PRIVATE-TOKEN', t.rootToken);
  const maintenance = () => t.app.get(QueueHandles).get(MAINTENANCE_QUEUE);

  beforeAll(async () => {
    t = await startTestApp({ metricsAllow: ['127.0.0.1'] });
    await t.app.listen(0, '127.0.0.1');
    port = (t.app.getHttpServer().address() as AddressInfo).port;
    user = await createUser(t);
    // This process's maintenance worker stops (a paused one may still take the job its blocking wait
    // brings): the jobs below wait, or go to the other process's worker.
    const own = t.app
      .get(JobKinds)
      .workers()
      .find((w) => w.queue === MAINTENANCE_QUEUE)!.worker;
    await own.close();
  }, 60_000);

  afterAll(async () => {
    await elsewhere?.close(true);
    await t?.close();
  });

  it('answers 401 without a token and 403 to a user who is not an administrator, as GitLab', async () => {
    for (const what of ['queue_metrics', 'process_metrics', 'job_stats', 'compound_metrics']) {
      const anonymous = await t.http().get(`/api/v4/sidekiq/${what}`);
      expect([anonymous.status, anonymous.body]).toEqual([401, { message: '401 Unauthorized' }]);
      const refused = await t.http().get(`/api/v4/sidekiq/${what}`).set('PRIVATE-TOKEN', user.token);
      expect([refused.status, refused.body]).toEqual([403, { message: '403 Forbidden' }]);
      expect((await admin(`/api/v4/sidekiq/${what}`)).status).toBe(200);
    }
  });

  it('queue_metrics: every queue by name, its backlog (waiting and delayed) and the oldest job’s wait', async () => {
    const before = (await admin('/api/v4/sidekiq/queue_metrics')).body.queues as Record<string, QueueMetric>;
    expect(Object.keys(before).sort()).toEqual(QUEUES);
    expect(before.maintenance).toEqual({ backlog: 0, latency: 0 });
    // A job made 90 s ago that no worker took yet, and one delayed for a minute.
    await maintenance().add('probe', { kind: 'probe' }, { jobId: 'waiting-probe', timestamp: Date.now() - 90_000 });
    await maintenance().add('later', { kind: 'later' }, { jobId: 'delayed-probe', delay: 60_000 });
    const res = await admin('/api/v4/sidekiq/queue_metrics');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const m = res.body.queues.maintenance as QueueMetric;
    expect(m.backlog).toBe(2);
    expect(m.latency).toBeGreaterThanOrEqual(90);
    expect(m.latency).toBeLessThan(150);
    expect(Number.isInteger(m.latency)).toBe(true);
    for (const q of QUEUES.filter((name) => name !== 'maintenance'))
      expect(res.body.queues[q]).toEqual({ backlog: expect.any(Number), latency: expect.any(Number) });
  });

  it('process_metrics: this process’s workers and another process’s, with the jobs each is running', async () => {
    // Another Lode process's worker on the maintenance queue, named as Lode names its workers: it
    // takes the waiting job and holds it.
    elsewhere = new Worker(
      MAINTENANCE_QUEUE,
      (job) =>
        new Promise<void>((resolve, reject) => {
          runs.push({ job, finish: (fail) => (fail ? reject(new Error('boom')) : resolve()) });
        }),
      {
        // Redis or BullMQ's PostgreSQL backend, whichever this run uses (embedded mode has no Redis).
        ...(queueConnection(t.config, 'worker') as { connection: RedisOptions; prefix: string }),
        concurrency: ELSEWHERE.concurrency,
        name: `${ELSEWHERE.pid}:${ELSEWHERE.startedAt}:${ELSEWHERE.concurrency}:${ELSEWHERE.hostname}`,
        metrics: { maxDataPoints: 60 },
      },
    );
    elsewhere.on('error', () => undefined);
    await eventually(() => runs.length === 1, 10_000);
    expect(runs[0].job.id).toBe('waiting-probe');

    const res = await admin('/api/v4/sidekiq/process_metrics');
    expect(res.status).toBe(200);
    const processes = res.body.processes as WorkerProcess[];
    const own = processes.find((p) => p.pid === process.pid)!;
    expect(own).toEqual({
      hostname: hostname(),
      pid: process.pid,
      tag: 'lode',
      started_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      // Its maintenance worker was stopped above.
      queues: ['git', 'groups', 'webhooks'],
      labels: [],
      // git 2, groups 1, webhooks 16
      concurrency: 19,
      busy: 0,
    });
    expect(Math.abs(Date.parse(own.started_at) - performance.timeOrigin)).toBeLessThan(1000);
    expect(processes.find((p) => p.pid === ELSEWHERE.pid)).toEqual({
      hostname: ELSEWHERE.hostname,
      pid: ELSEWHERE.pid,
      tag: 'lode',
      started_at: new Date(ELSEWHERE.startedAt * 1000).toISOString(),
      queues: ['maintenance'],
      labels: [],
      concurrency: ELSEWHERE.concurrency,
      busy: 1,
    });
    expect(processes).toHaveLength(2);
    // The job it runs left the backlog: the delayed one is what remains.
    expect((await admin('/api/v4/sidekiq/queue_metrics')).body.queues.maintenance).toEqual({ backlog: 1, latency: 0 });
  });

  it('job_stats: processed and failed from BullMQ’s metrics, enqueued as the backlogs, dead as the failed jobs kept', async () => {
    const before = (await admin('/api/v4/sidekiq/job_stats')).body.jobs;
    expect(before).toEqual({
      processed: expect.any(Number),
      failed: expect.any(Number),
      enqueued: expect.any(Number),
      dead: expect.any(Number),
    });
    runs[0].finish(true);
    await eventually(async () => (await maintenance().getJobState('waiting-probe')) === 'failed');
    const after = (await admin('/api/v4/sidekiq/job_stats')).body.jobs;
    expect(after.processed).toBe(before.processed + 1);
    expect(after.failed).toBe(before.failed + 1);
    expect(after.dead).toBe(before.dead + 1);
    const queues = (await admin('/api/v4/sidekiq/queue_metrics')).body.queues as Record<string, QueueMetric>;
    expect(after.enqueued).toBe(Object.values(queues).reduce((n, q) => n + q.backlog, 0));
  });

  it('compound_metrics: the three answers in one', async () => {
    const res = await admin('/api/v4/sidekiq/compound_metrics');
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['jobs', 'processes', 'queues']);
    expect(res.body.jobs).toEqual((await admin('/api/v4/sidekiq/job_stats')).body.jobs);
    expect(Object.keys(res.body.queues).sort()).toEqual(QUEUES);
    expect(res.body.processes.map((p: WorkerProcess) => p.pid).sort((a: number, b: number) => a - b)).toEqual(
      [process.pid, ELSEWHERE.pid].sort((a, b) => a - b),
    );
  });

  describe('the queue dashboard at /-/queues', () => {
    const dashboard = (path: string, authorization?: string) => {
      const req = t.http().get(path);
      return authorization ? req.set('Authorization', authorization) : req;
    };

    it('challenges a request without accepted Basic credentials (401), so a browser asks for them', async () => {
      for (const path of ['/-/queues', '/-/queues/api/queues', '/-/queues/static/js/main.js'])
        for (const authorization of [undefined, basic('not-a-token'), basic(''), `Bearer ${t.rootToken}`]) {
          const res = await dashboard(path, authorization);
          expect([path, authorization, res.status, res.body]).toEqual([
            path,
            authorization,
            401,
            { message: '401 Unauthorized' },
          ]);
          expect(res.headers['www-authenticate']).toBe('Basic realm="Lode queues", charset="UTF-8"');
        }
    });

    it('is not there (404, no challenge) for a signed-in user who is no administrator', async () => {
      const nowhere = await t.http().get('/-/nothing-here');
      expect(nowhere.status).toBe(404);
      for (const path of ['/-/queues', '/-/queues/api/queues', '/-/queues/static/js/main.js']) {
        const res = await dashboard(path, basic(user.token));
        expect([path, res.status]).toEqual([path, 404]);
        expect(res.headers['www-authenticate']).toBeUndefined();
        expect(res.body).toEqual(nowhere.body);
      }
      // A token of an administrator without the api scope is refused the same way.
      const readOnly = await t
        .http()
        .post('/api/v4/users/1/impersonation_tokens')
        .set('PRIVATE-TOKEN', t.rootToken)
        .send({ name: 'read', scopes: ['read_user'] });
      expect(readOnly.status).toBe(201);
      expect((await dashboard('/-/queues', basic(readOnly.body.token))).status).toBe(404);
    });

    it('shows an administrator the queues, with any user name and the token as the password', async () => {
      const page = await dashboard('/-/queues', basic(t.rootToken, 'root'));
      expect(page.status).toBe(200);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      expect(page.text).toContain('<base href="/-/queues/" />');
      expect(page.text).toContain('<title>Lode queues</title>');
      const script = /src="(static\/js\/main\.[0-9a-f]+\.js)"/.exec(page.text)![1];
      const asset = await dashboard(`/-/queues/${script}`, basic(t.rootToken));
      expect([asset.status, asset.headers['content-type']]).toEqual([200, expect.stringMatching(/javascript/)]);
      expect((await dashboard(`/-/queues/${script}`)).status).toBe(401);
      expect(page.headers['cache-control']).toBe('private, no-store');
      // Nothing from another origin: bull-board's link to Google Fonts is taken out, and the policy
      // refuses whatever else would be.
      expect(page.text).not.toMatch(/googleapis|https?:\/\//);
      expect(page.text).toContain('static/css/main.');
      expect(page.headers['content-security-policy']).toBe(QUEUE_DASHBOARD_CSP);
      const api = await dashboard(
        '/-/queues/api/queues?activeQueue=maintenance&status=failed&page=1&jobsPerPage=10',
        basic(t.rootToken),
      );
      expect(api.status).toBe(200);
      expect(api.body.queues.map((q: { name: string }) => q.name).sort()).toEqual(QUEUES);
      // This process works every queue but maintenance (its worker was stopped above): no false "No
      // workers" badge, on either database (the embedded one's queue backend lists no connections;
      // the process's own running workers are counted).
      const idle = api.body.queues.filter((q: { hasWorkers: boolean }) => q.hasWorkers !== true);
      expect(idle.map((q: { name: string }) => q.name)).toEqual(EMBEDDED ? ['maintenance'] : []);
      const queue = api.body.queues.find((q: { name: string }) => q.name === 'maintenance');
      expect(queue.counts.failed).toBe(1);
      expect(queue.jobs).toEqual([expect.objectContaining({ id: 'waiting-probe', failedReason: 'boom' })]);
    });

    describeInBrowser('in a browser', () => {
      it('shows every queue, asking nothing of another origin and breaking no rule of its policy', async () => {
        const browser = await launchBrowser();
        try {
          const { page, dialogs, errors } = await watchedPage(browser);
          const origin = `http://127.0.0.1:${port}`;
          const requested: string[] = [];
          const refused: string[] = [];
          page.on('request', (r) => requested.push(r.url()));
          page.on('console', (m) => {
            if (/Content Security Policy/i.test(m.text())) refused.push(m.text());
          });
          await page.authenticate({ username: 'root', password: t.rootToken });
          const answer = await page.goto(`${origin}/-/queues`, { waitUntil: 'networkidle0' });
          expect(answer?.status()).toBe(200);
          await page.waitForFunction(
            (names: string[]) => names.every((n) => document.body.innerText.includes(n)),
            { timeout: 15_000 },
            QUEUES,
          );
          // The window as the administrator sees it: a full-page capture resizes the window, and the
          // board's transitions then photograph its cards half-way under the sidebar.
          await screenshot(page, 'queue-dashboard', { fullPage: false });
          expect(requested.filter((u) => !u.startsWith(`${origin}/`) && !u.startsWith('data:'))).toEqual([]);
          // The page read the queues from its own API.
          expect(requested.some((u) => u.startsWith(`${origin}/-/queues/api/queues`))).toBe(true);
          expect(refused).toEqual([]);
          expect([dialogs, errors]).toEqual([[], []]);
        } finally {
          await browser.close();
        }
      }, 60_000);
    });

    it('retries a failed job', async () => {
      const before = (await admin('/api/v4/sidekiq/job_stats')).body.jobs;
      const refused = await t
        .http()
        .put('/-/queues/api/queues/maintenance/waiting-probe/retry')
        .set('Authorization', basic(user.token));
      expect(refused.status).toBe(404);
      expect(await maintenance().getJobState('waiting-probe')).toBe('failed');

      const retry = await t
        .http()
        .put('/-/queues/api/queues/maintenance/waiting-probe/retry')
        .set('Authorization', basic(t.rootToken));
      expect(retry.status).toBe(204);
      await eventually(() => runs.length === 2, 10_000);
      expect(runs[1].job.id).toBe('waiting-probe');
      runs[1].finish(false);
      await eventually(async () => (await maintenance().getJobState('waiting-probe')) === 'completed');
      const after = (await admin('/api/v4/sidekiq/job_stats')).body.jobs;
      expect(after.processed).toBe(before.processed + 1);
      expect(after.failed).toBe(before.failed);
      expect(after.dead).toBe(before.dead - 1);
      await maintenance().remove('delayed-probe');
    });
  });

  describe('/-/metrics', () => {
    const scrape = (from: string, headers: Record<string, string> = {}) => getFrom(port, from, '/-/metrics', headers);

    it('answers 404, not 401, to a refused or non-administrator token from an address outside the allowlist', async () => {
      const attempts: Record<string, string>[] = [
        { 'PRIVATE-TOKEN': 'not-a-token' },
        { Authorization: 'Bearer not-a-token' },
        { 'PRIVATE-TOKEN': user.token },
        {},
      ];
      for (const headers of attempts) {
        const res = await scrape('127.0.0.5', headers);
        expect([headers, res.status]).toEqual([headers, 404]);
        expect(res.body).not.toContain('lode_');
      }
      // An administrator's token still reads it from anywhere; the allowlist needs no token, a refused one included.
      expect((await scrape('127.0.0.5', { 'PRIVATE-TOKEN': t.rootToken })).status).toBe(200);
      expect((await scrape('127.0.0.1', { 'PRIVATE-TOKEN': 'not-a-token' })).status).toBe(200);
      // The API itself still refuses the token.
      expect((await t.http().get('/api/v4/user').set('PRIVATE-TOKEN', 'not-a-token')).status).toBe(401);
    });

    // Read from pg_stat_activity, beside the rebuild's transaction: the embedded database's one session
    // is that transaction's until it ends, so nothing can be read meanwhile (README says so).
    (EMBEDDED ? it.skip : it)(
      'reports a projection rebuild’s progress while it runs',
      async () => {
        const idle = (await scrape('127.0.0.1')).body;
        expect(sample(idle, 'lode_projection_rebuild_running')).toBe(0);
        expect(sample(idle, 'lode_projection_rebuild_events_done')).toBe(0);
        expect(sample(idle, 'lode_projection_rebuild_events_total')).toBe(0);
        const [{ count }] = await t.db.query<{ count: string }[]>(`select count(*)::int as count from events`);
        // A projector that holds the rebuild at its first UserCreated event until told.
        let release!: () => void;
        const held = new Promise<void>((r) => (release = r));
        let reached = false;
        t.app.get(ProjectionRegistry).register({
          name: 'queue-monitoring-test-gate',
          tables: [],
          eventTypes: ['UserCreated'],
          apply: async () => {
            reached = true;
            await held;
          },
        });
        const progress: number[] = [];
        const rebuild = t.app.get(ProjectionRebuilder).rebuild((p) => progress.push(p.done));
        try {
          await eventually(() => reached, 10_000);
          const during = (await scrape('127.0.0.1')).body;
          expect(sample(during, 'lode_projection_rebuild_running')).toBe(1);
          expect(sample(during, 'lode_projection_rebuild_events_done')).toBe(0);
          expect(sample(during, 'lode_projection_rebuild_events_total')).toBe(Number(count));
        } finally {
          release();
        }
        expect((await rebuild).done).toBe(Number(count));
        expect(progress).toEqual([0, Number(count)]);
        const after = (await scrape('127.0.0.1')).body;
        expect(sample(after, 'lode_projection_rebuild_running')).toBe(0);
        expect(sample(after, 'lode_projection_rebuild_events_total')).toBe(0);
        // The read models came back whole.
        expect((await t.http().get('/api/v4/user').set('PRIVATE-TOKEN', user.token)).body.id).toBe(user.id);
      },
      30_000,
    );
  });
});
