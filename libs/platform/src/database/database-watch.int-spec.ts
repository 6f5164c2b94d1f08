import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import type { DataSource } from 'typeorm';
import { LodeConfig } from '../config/lode-config';
import { Invalidations } from '../outbox/invalidations';
import { DatabaseWatch, isDatabaseUnavailable } from './database-watch';

const TEST_PG = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** A watch with no pool to cut, whose probes the test runs one at a time. */
function watchOf(databaseUrl: string, invalidations = new Invalidations(new LodeConfig())) {
  const config = Object.assign(new LodeConfig(), { databaseUrl, embeddedDatabase: false });
  const watch = new DatabaseWatch({ driver: {} } as unknown as DataSource, config, invalidations);
  const check = () => (watch as unknown as { check(): Promise<void> }).check();
  return { watch, check };
}

/** Blocks this process's event loop, as a long garbage collection does. */
function stall(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // busy
  }
}

describe('DatabaseWatch', () => {
  it('does not take a stall of its own process for a silent database', async () => {
    const { watch, check } = watchOf(TEST_PG);
    try {
      await check();
      expect(watch.unreachable).toBeUndefined();
      // The answer arrives while the process is stalled; the timeout fires first once it runs again.
      const checking = check();
      stall(2500);
      await checking;
      expect(watch.unreachable).toBeUndefined();
    } finally {
      await watch.onApplicationShutdown();
    }
  });

  it('does not take a stall that ends just past the probe deadline for a silent database', async () => {
    const { watch, check } = watchOf(TEST_PG);
    try {
      await check();
      // 100 ms over the 1.5 s deadline: less than the stall allowance, yet the timer fires before the
      // answer waiting in the socket is read.
      const checking = check();
      stall(1600);
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
    const proxy = await silenceableProxy(new URL(TEST_PG));
    const url = new URL(TEST_PG);
    url.host = `127.0.0.1:${proxy.port}`;
    const invalidations = new Invalidations(
      Object.assign(new LodeConfig(), { databaseUrl: url.toString(), embeddedDatabase: false }),
    );
    await invalidations.onApplicationBootstrap();
    const { watch, check } = watchOf(url.toString(), invalidations);
    try {
      await check();
      expect(watch.unreachable).toBeUndefined();
      expect(await invalidations.caughtUp()).toBe(true);
      proxy.silence();
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
      proxy.close();
    }
  });
});

describe('DatabaseWatch and a slow database', () => {
  it('takes a database whose answers come 0.6 s late for slow, not silent: no verdict, nothing cut', async () => {
    // A loaded machine (ten clones at once on two cores) answers `select 1` this late at times: a
    // watch that gave up sooner than its 1.5 s answered false 503s to a healthy database.
    const proxy = await delayingProxy(new URL(TEST_PG));
    const url = new URL(TEST_PG);
    url.host = `127.0.0.1:${proxy.port}`;
    const { watch, check } = watchOf(url.toString());
    try {
      await check();
      expect(watch.unreachable).toBeUndefined();
      proxy.delayMs = 300; // each way: 0.6 s a round trip
      await check();
      await check();
      expect(watch.unreachable).toBeUndefined();
    } finally {
      await watch.onApplicationShutdown();
      proxy.close();
    }
  });
});

describe('DatabaseWatch and the pool', () => {
  it('while the database is silent, the pool gives up on a new connection at once, with an error that answers 503', async () => {
    const proxy = await silenceableProxy(new URL(TEST_PG));
    const url = new URL(TEST_PG);
    url.host = `127.0.0.1:${proxy.port}`;
    const config = Object.assign(new LodeConfig(), { databaseUrl: url.toString(), embeddedDatabase: false });
    const pool = new pg.Pool({ connectionString: url.toString(), connectionTimeoutMillis: 2000, max: 2 });
    pool.on('error', () => undefined);
    const watch = new DatabaseWatch(
      { driver: { master: pool } } as unknown as DataSource,
      config,
      new Invalidations(config),
    );
    watch.onApplicationBootstrap();
    try {
      await pool.query('select 1');
      proxy.silence();
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
      proxy.close();
      await pool.end().catch(() => undefined);
    }
  });
});

/** A TCP proxy to PostgreSQL that can go silent: it stops passing bytes, as a cut network does. */
async function silenceableProxy(target: URL) {
  const sockets: Socket[] = [];
  let silent = false;
  const server = createServer((client) => {
    sockets.push(client);
    if (silent) return void client.pause();
    const upstream = connect(Number(target.port || 5432), target.hostname);
    sockets.push(upstream);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    port: (server.address() as AddressInfo).port,
    silence: () => {
      silent = true;
      for (const s of sockets) {
        s.unpipe();
        s.pause();
      }
    },
    close: () => {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

/** A TCP proxy to PostgreSQL that passes every chunk on `delayMs` late, in order: a slow database, not a silent one. */
async function delayingProxy(target: URL) {
  const sockets: Socket[] = [];
  const state = { delayMs: 0 };
  const late = (from: Socket, to: Socket) =>
    from.on('data', (chunk) => {
      if (state.delayMs === 0) return void to.write(chunk);
      setTimeout(() => to.write(chunk), state.delayMs);
    });
  const server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    sockets.push(client, upstream);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    late(client, upstream);
    late(upstream, client);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    port: (server.address() as AddressInfo).port,
    set delayMs(ms: number) {
      state.delayMs = ms;
    },
    close: () => {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}
