import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import type { DataSource } from 'typeorm';
import { LodeConfig } from '../config/lode-config';
import { Invalidations } from '../outbox/invalidations';
import { TcpProxy } from '../../../../test/support/tcp-proxy';
import { DatabaseWatch, isDatabaseUnavailable } from './database-watch';

const TEST_PG = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** A watch with no pool to cut, whose probes the test runs one at a time. */
function watchOf(databaseUrl: string, invalidations = new Invalidations(new LodeConfig())) {
  const config = Object.assign(new LodeConfig(), { databaseUrl, embeddedDatabase: false });
  const watch = new DatabaseWatch({ driver: {} } as unknown as DataSource, config, invalidations);
  const check = () => (watch as unknown as { check(): Promise<void> }).check();
  return { watch, check };
}

/** A proxy in front of the test database, and the database's URL through it. */
async function proxied(): Promise<{ proxy: TcpProxy; url: string }> {
  const target = new URL(TEST_PG);
  const proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
  await proxy.start();
  target.host = `127.0.0.1:${proxy.port}`;
  return { proxy, url: target.toString() };
}

/** Blocks this process's event loop, as a long garbage collection does. */
function stall(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // busy
  }
}

describe('DatabaseWatch', () => {
  // Each stall blocks the event loop while a probe is out, as a long garbage collection does; the
  // probe's answer (or its connection's start-up) waits in the socket, and a timer fires first
  // once the process runs again.
  it.each([
    { stalled: 'while the probe waits for its answer', connectedFirst: true, ms: 2500 },
    // pg's own connect timer would fire first here: the watch's deadline must govern the connecting.
    { stalled: "during the probe's own connecting", connectedFirst: false, ms: 2500 },
    // 100 ms over the 1.5 s deadline: less than the stall allowance.
    { stalled: 'to just past the probe deadline', connectedFirst: true, ms: 1600 },
  ])('does not take a stall of its own process $stalled for a silent database', async ({ connectedFirst, ms }) => {
    const { watch, check } = watchOf(TEST_PG);
    try {
      if (connectedFirst) {
        await check();
        expect(watch.unreachable).toBeUndefined();
      }
      const checking = check();
      stall(ms);
      await checking;
      expect(watch.unreachable).toBeUndefined();
    } finally {
      await watch.onApplicationShutdown();
    }
  });

  it('still knows within two seconds that a database went silent', async () => {
    const sockets: Socket[] = [];
    const silent: Server = createServer((s) => void sockets.push(s));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
    const { watch, check } = watchOf(`postgres://postgres@127.0.0.1:${(silent.address() as AddressInfo).port}/x`);
    try {
      const started = Date.now();
      await check();
      expect(watch.unreachable).toMatch(/PostgreSQL did not answer/);
      expect(Date.now() - started).toBeLessThan(2000);
    } finally {
      await watch.onApplicationShutdown();
      for (const s of sockets) s.destroy();
      await new Promise((r) => silent.close(r));
    }
  });

  it("cuts the LISTEN connection too: a cache's fence waiting on the silence answers false at once", async () => {
    const { proxy, url } = await proxied();
    const invalidations = new Invalidations(
      Object.assign(new LodeConfig(), { databaseUrl: url, embeddedDatabase: false }),
    );
    await invalidations.onApplicationBootstrap();
    const { watch, check } = watchOf(url, invalidations);
    try {
      await check();
      expect(watch.unreachable).toBeUndefined();
      expect(await invalidations.caughtUp()).toBe(true);
      proxy.partition();
      const started = Date.now();
      const fence = invalidations.caughtUp();
      await check();
      expect(watch.unreachable).toMatch(/PostgreSQL did not answer/);
      // Answered when the watch found the silence, not when the network returns (never, here).
      expect(await fence).toBe(false);
      expect(Date.now() - started).toBeLessThan(3000);
    } finally {
      await watch.onApplicationShutdown();
      await invalidations.onApplicationShutdown();
      await proxy.stop();
    }
  });
});

describe('DatabaseWatch and a slow database', () => {
  it('takes a database whose answers come 0.6 s late for slow, not silent: no verdict, nothing cut', async () => {
    // A loaded machine (ten clones at once on two cores) answers `select 1` this late at times: a
    // watch that gave up sooner than its 1.5 s answered false 503s to a healthy database.
    const { proxy, url } = await proxied();
    const { watch, check } = watchOf(url);
    try {
      await check();
      expect(watch.unreachable).toBeUndefined();
      proxy.delayMs = 300; // each way: 0.6 s a round trip
      await check();
      await check();
      expect(watch.unreachable).toBeUndefined();
    } finally {
      await watch.onApplicationShutdown();
      await proxy.stop();
    }
  });
});

describe('DatabaseWatch and the pool', () => {
  it('while the database is silent, the pool gives up on a new connection at once, with an error that answers 503', async () => {
    const { proxy, url } = await proxied();
    const config = Object.assign(new LodeConfig(), { databaseUrl: url, embeddedDatabase: false });
    const pool = new pg.Pool({ connectionString: url, connectionTimeoutMillis: 2000, max: 2 });
    pool.on('error', () => undefined);
    const watch = new DatabaseWatch(
      { driver: { master: pool } } as unknown as DataSource,
      config,
      new Invalidations(config),
    );
    watch.onApplicationBootstrap();
    try {
      await pool.query('select 1');
      proxy.partition();
      const until = Date.now() + 5000;
      while (!watch.unreachable && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      expect(watch.unreachable).toMatch(/PostgreSQL did not answer/);
      const started = Date.now();
      const failed = await pool.query('select 1').then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(Date.now() - started).toBeLessThan(500);
      expect(isDatabaseUnavailable(failed)).toBe(true);
      expect(pool.options.connectionTimeoutMillis).toBe(1);
    } finally {
      await watch.onApplicationShutdown();
      await proxy.stop();
      await pool.end().catch(() => undefined);
    }
  });
});
