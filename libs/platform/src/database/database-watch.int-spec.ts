import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { DataSource } from 'typeorm';
import { LodeConfig } from '../config/lode-config';
import { DatabaseWatch } from './database-watch';

const TEST_PG = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** A watch with no pool to cut, whose probes the test runs one at a time. */
function watchOf(databaseUrl: string) {
  const config = Object.assign(new LodeConfig(), { databaseUrl, embeddedDatabase: false });
  const watch = new DatabaseWatch({ driver: {} } as unknown as DataSource, config);
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
});
