import { MAX_REDISPATCHES } from '@app/platform';
import { Queue } from 'bullmq';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gitOk, tempDirs } from '../support/git';
import { OwnRedis } from '../support/redis-server';
import { createUser } from '../support/seed';
import {
  dropDatabase,
  eventually,
  outboxFinished,
  startTestApp,
  type TestApp,
  describeOnServers,
} from '../support/test-app';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

const QUEUES = ['git', 'webhooks', 'maintenance', 'groups'];

/**
 * Jobs survive a Redis that loses its data: the test's own redis-server (never the shared one) is
 * killed with jobs queued and started again empty. Every job the outbox had handed over runs all
 * the same: a push's webhook deliveries, a fork's copy, a housekeeping run (whose lease then ends).
 */
describeOnServers('a Redis that loses its data', () => {
  const redis = new OwnRedis();
  const tmp = tempDirs();
  let receiver: WebhookReceiver;
  let hookUrl: string;

  beforeAll(async () => {
    await redis.start();
    receiver = await startWebhookReceiver();
    hookUrl = `${receiver.url}/hook`;
  });

  afterAll(async () => {
    tmp.removeAll();
    await receiver?.close();
    await redis.stop();
  });

  async function pause(t: TestApp): Promise<void> {
    for (const name of QUEUES) {
      const q = new Queue(name, { connection: { host: '127.0.0.1', port: redis.port }, prefix: t.config.redisPrefix });
      await q.pause();
      await q.close();
    }
  }

  it('runs every job it had handed over when Redis comes back empty', async () => {
    const t = await startTestApp({
      redisUrl: redis.url,
      outboxSweepMs: 1000,
      allowLocalWebhooks: true,
      webhookRetryDelayMs: 200,
      webhookTimeoutMs: 2000,
    });
    try {
      await t.app.listen(0, '127.0.0.1');
      const root = (path: string) => ({
        get: () => t.http().get(`/api/v4${path}`).set('PRIVATE-TOKEN', t.rootToken),
        post: () => t.http().post(`/api/v4${path}`).set('PRIVATE-TOKEN', t.rootToken),
      });
      const project = (await root('/projects').post().send({ name: 'kept', visibility: 'public' })).body;
      expect((await root(`/projects/${project.id}/hooks`).post().send({ url: hookUrl })).status).toBe(201);
      const port = (t.app.getHttpServer().address() as AddressInfo).port;
      const remote = `http://root:${t.rootToken}@127.0.0.1:${port}/${project.path_with_namespace}.git`;
      const work = tmp.make();
      await gitOk(['init', '-q', '-b', 'master', work]);
      writeFileSync(join(work, 'a.txt'), 'a\n');
      await gitOk(['add', '.'], work);
      await gitOk(['commit', '-q', '-m', 'first'], work);
      await gitOk(['push', '-q', remote, 'master'], work);
      await eventually(() => receiver.received.length === 1, 20_000);
      receiver.received.length = 0;

      // Workers stop taking jobs; everything below is handed to Redis and waits there.
      await pause(t);
      for (const branch of ['one', 'two', 'three']) await gitOk(['push', '-q', remote, `master:${branch}`], work);
      const other = await createUser(t);
      const fork = await t.http().post(`/api/v4/projects/${project.id}/fork`).set('PRIVATE-TOKEN', other.token);
      expect(fork.status).toBe(201);
      expect((await root(`/projects/${project.id}/housekeeping`).post()).status).toBe(201);
      expect((await root(`/projects/${project.id}/housekeeping`).post()).status).toBe(409);
      await eventually(
        async () => (await t.db.query(`select count(*)::int as n from outbox where dispatched_at is null`))[0].n === 0,
        10_000,
      );
      expect(receiver.received).toEqual([]);

      await redis.restartEmpty();

      // The three pushes' deliveries, each once; the fork copied; the housekeeping run and its lease ended.
      await eventually(() => receiver.received.length >= 3, 30_000, 200);
      await eventually(
        async () =>
          (await t.http().get(`/api/v4/projects/${fork.body.id}`).set('PRIVATE-TOKEN', other.token)).body
            .import_status === 'finished',
        30_000,
        200,
      );
      await eventually(
        async () => (await root(`/projects/${project.id}/housekeeping`).post()).status === 201,
        30_000,
        200,
      );
      await outboxFinished(t, 30_000, 200);
      await new Promise((r) => setTimeout(r, 500));
      expect(receiver.received).toHaveLength(3);
      expect(new Set(receiver.received.map((d) => String(d.headers['x-gitlab-event-uuid']))).size).toBe(3);
      // Each push's fan-out ran to the end (it makes the first attempts itself: no delivery failed, so no job of its own).
      const finished = await t.db.query(
        `select name, outcome, count(*)::int as n from outbox where queue = 'webhooks' group by name, outcome order by name`,
      );
      expect(finished).toEqual([{ name: 'push-fanout', outcome: 'completed', n: 4 }]);
    } finally {
      await t.close();
    }
  }, 120_000);

  it('gives up a job Redis keeps losing: the fork fails with the reason, the housekeeping lease ends', async () => {
    const t = await startTestApp({ redisUrl: redis.url, outboxSweepMs: 1000 });
    try {
      const source = (
        await t
          .http()
          .post('/api/v4/projects')
          .set('PRIVATE-TOKEN', t.rootToken)
          .send({ name: 'lost', visibility: 'public' })
      ).body;
      await pause(t);
      const other = await createUser(t);
      const fork = await t.http().post(`/api/v4/projects/${source.id}/fork`).set('PRIVATE-TOKEN', other.token);
      expect(fork.status).toBe(201);
      const housekeeping = () =>
        t.http().post(`/api/v4/projects/${source.id}/housekeeping`).set('PRIVATE-TOKEN', t.rootToken);
      expect((await housekeeping()).status).toBe(201);
      await eventually(
        async () => (await t.db.query(`select count(*)::int as n from outbox where dispatched_at is null`))[0].n === 0,
      );
      // As if Redis had already lost these jobs MAX_REDISPATCHES times.
      await t.db.query(`update outbox set redispatches = $1 where name in ('fork-repository', 'housekeeping')`, [
        MAX_REDISPATCHES,
      ]);
      await redis.restartEmpty();

      const admin = () => t.http().get(`/api/v4/projects/${fork.body.id}`).set('PRIVATE-TOKEN', t.rootToken);
      await eventually(async () => (await admin()).body.import_status === 'failed', 20_000, 200);
      expect((await admin()).body.import_error).toMatch(/lost this job 6 times/);
      // The housekeeping job is given up by the same sweep or the next one (on a loaded machine the
      // fork's may land first): until then a new request is still 409, and a 409 changes nothing.
      await eventually(async () => (await housekeeping()).status === 201, 20_000, 200);
      const given = await t.db.query(
        `select name, outcome from outbox where name in ('fork-repository', 'housekeeping') order by id`,
      );
      expect(given).toEqual([
        { name: 'fork-repository', outcome: 'failed' },
        { name: 'housekeeping', outcome: 'failed' },
        { name: 'housekeeping', outcome: null },
      ]);
    } finally {
      await t.close();
    }
  }, 60_000);

  it('does not skip the jobs of a restored database beside a Redis that remembers the same job ids', async () => {
    // The first life: a fork whose job completes, its id kept by Redis.
    const first = await startTestApp({ redisUrl: redis.url });
    const forkOnce = async (t: TestApp) => {
      const other = await createUser(t);
      const source = (
        await t
          .http()
          .post('/api/v4/projects')
          .set('PRIVATE-TOKEN', t.rootToken)
          .send({ name: 'src', visibility: 'public' })
      ).body;
      const fork = await t.http().post(`/api/v4/projects/${source.id}/fork`).set('PRIVATE-TOKEN', other.token);
      expect(fork.status).toBe(201);
      const jobs = (await t.db.query(`select job_id from outbox where name = 'fork-repository'`)) as {
        job_id: string;
      }[];
      return {
        jobIds: jobs.map((j) => j.job_id),
        status: async () =>
          (await t.http().get(`/api/v4/projects/${fork.body.id}`).set('PRIVATE-TOKEN', other.token)).body
            .import_status as string,
      };
    };
    const before = await forkOnce(first);
    await eventually(async () => (await before.status()) === 'finished', 20_000);
    await first.app.close();
    await dropDatabase(first.config.databaseUrl);

    // The database starts over (a restore to before that fork); Redis keeps its completed jobs.
    const second = await startTestApp({ redisUrl: redis.url, redisPrefix: first.config.redisPrefix });
    try {
      const after = await forkOnce(second);
      expect(after.jobIds).toEqual(before.jobIds);
      await eventually(async () => (await after.status()) === 'finished', 20_000);
    } finally {
      await second.close();
    }
  }, 60_000);
});
