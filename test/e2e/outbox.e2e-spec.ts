import { OutboxRelay } from '@app/platform';
import { MAINTENANCE_QUEUE } from '@app/users';
import { Queue } from 'bullmq';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createUser } from '../support/seed';
import { TcpProxy } from '../support/tcp-proxy';
import { eventually, outboxFinished, startTestApp, TEST_REDIS, type TestApp } from '../support/test-app';

// A 1x1 transparent PNG.
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

/**
 * The outbox proven end to end: a UserDeleted event writes an outbox row in its own transaction;
 * the relay turns it into a BullMQ job whose processor removes the user's avatar. Redis is reached
 * through a proxy the test stops: writes still succeed, rows wait, and nothing is lost or run twice.
 */
describe('outbox relay into BullMQ', () => {
  let t: TestApp;
  let proxy: TcpProxy;

  beforeAll(async () => {
    const redis = new URL(TEST_REDIS);
    proxy = new TcpProxy(redis.hostname, Number(redis.port || 6379));
    await proxy.start();
    t = await startTestApp({ redisUrl: `redis://127.0.0.1:${proxy.port}` });
  });

  afterAll(async () => {
    await proxy.start().catch(() => undefined);
    await t.close();
    await proxy.stop();
  });

  async function userWithAvatar(): Promise<{ id: number; dir: string }> {
    const u = await createUser(t);
    const res = await t
      .http()
      .put(`/api/v4/users/${u.id}`)
      .set('PRIVATE-TOKEN', t.rootToken)
      .attach('avatar', PNG, 'me.png');
    expect(res.status).toBe(200);
    const dir = join(t.config.dataDir, 'uploads', '-', 'system', 'user', 'avatar', String(u.id));
    expect(existsSync(join(dir, 'me.png'))).toBe(true);
    return { id: u.id, dir };
  }

  const pending = async () =>
    Number((await t.db.query(`select count(*) from outbox where dispatched_at is null`))[0].count);

  it('delivers a job for each UserDeleted event while Redis is up', async () => {
    const { id, dir } = await userWithAvatar();
    expect((await t.http().delete(`/api/v4/users/${id}`).set('PRIVATE-TOKEN', t.rootToken)).status).toBe(204);
    await eventually(() => !existsSync(dir));
    // A row is done when its job's processor recorded it finished (after the files went: wait for it).
    await outboxFinished(t);
    expect(await pending()).toBe(0);
  });

  it('keeps accepting writes while Redis is down and delivers every waiting job when it returns, once', async () => {
    const users = [await userWithAvatar(), await userWithAvatar(), await userWithAvatar()];
    await proxy.stop();

    for (const u of users) {
      expect((await t.http().delete(`/api/v4/users/${u.id}`).set('PRIVATE-TOKEN', t.rootToken)).status).toBe(204);
    }
    const ready = await t.http().get('/-/readiness');
    expect(ready.status).toBe(503);
    expect(ready.body.checks.redis.status).toBe('failed');
    expect(ready.body.checks.database.status).toBe('ok');

    // The relay tries and fails meanwhile: the rows wait, with the failure noted.
    await eventually(
      async () => Number((await t.db.query(`select count(*) from outbox where attempts > 0`))[0].count) > 0,
      15_000,
    );
    // Each UserDeleted waits with its jobs: the user's files, their group memberships, the erasure
    // of the sealed secrets of hooks that went with the user's projects, and, when a system hook
    // exists (the database is shared with other suites), its system hooks' fan-out.
    const waiting = await t.db.query(
      `select name, count(*)::int as n from outbox where dispatched_at is null group by name order by name`,
    );
    const [{ n: systemHooks }] = await t.db.query(`select count(*)::int as n from system_hooks`);
    expect(waiting).toEqual([
      { name: 'deleted-user', n: 3 },
      { name: 'erase-gone-secrets', n: 3 },
      { name: 'remove-user-files', n: 3 },
      ...(systemHooks ? [{ name: 'system-fanout', n: 3 }] : []),
    ]);
    for (const u of users) expect(existsSync(u.dir)).toBe(true);

    await proxy.start();
    await eventually(async () => (await pending()) === 0, 20_000);
    await eventually(() => users.every((u) => !existsSync(u.dir)), 20_000);
    await eventually(async () => (await t.http().get('/-/readiness')).status === 200, 10_000);

    // Relaying the same rows again (as after a crash between enqueue and stamp) runs nothing twice:
    // the stable job id makes BullMQ keep the finished job instead of adding a new one.
    const queue = new Queue(MAINTENANCE_QUEUE, {
      connection: { host: '127.0.0.1', port: proxy.port },
      prefix: t.config.redisPrefix,
    });
    try {
      // BullMQ's id is the logical id and the row's dispatch key.
      const jobIds = await Promise.all(
        users.map(
          async (u) =>
            (
              await t.db.query(`select job_id || '@' || dispatch_key as id from outbox where job_id = $1`, [
                `remove-user-files-${u.id}`,
              ])
            )[0].id as string,
        ),
      );
      const before = await Promise.all(jobIds.map(async (id) => (await queue.getJob(id))?.processedOn));
      expect(before.every((p) => typeof p === 'number')).toBe(true);
      await t.db.query(`update outbox set dispatched_at = null`);
      await t.app.get(OutboxRelay).drain();
      expect(await pending()).toBe(0);
      await new Promise((r) => setTimeout(r, 500));
      const after = await Promise.all(jobIds.map(async (id) => (await queue.getJob(id))?.processedOn));
      expect(after).toEqual(before);
      const counts = await queue.getJobCounts('completed', 'waiting', 'active', 'failed');
      expect(counts.waiting + counts.active + counts.failed).toBe(0);
    } finally {
      await queue.close();
    }
  });

  it('writes exactly one outbox row per UserDeleted event, in the same transaction', async () => {
    const [{ events }] = await t.db.query(`select count(*)::int as events from events where type = 'UserDeleted'`);
    const [{ rows }] = await t.db.query(`select count(*)::int as rows from outbox where name = 'remove-user-files'`);
    expect(rows).toBe(events);
    const orphans = await t.db.query(
      `select o.id from outbox o left join events e on e.global_position = o.global_position where e.type is distinct from 'UserDeleted' and o.name <> 'system-fanout'`,
    );
    expect(orphans).toEqual([]);
  });
});
