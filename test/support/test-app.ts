import { LodeConfig, RequestContexts, runMigrations, startDatabase } from '@app/platform';
import { SeedRoot } from '@app/users';
import { Logger, type INestApplication } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import Redis from 'ioredis';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { createHttpApp } from '../../apps/lode/src/http-app';
import { MIGRATIONS } from '../../apps/lode/src/lode.module';

/** Where the tests' PostgreSQL and Redis are; each run makes its own database and Redis key prefix. */
export const TEST_PG = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const TEST_REDIS = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
/**
 * `LODE_TEST_MODE=embedded` runs the suites on the embedded default instead: PGlite in each test's
 * data directory and the job queues on BullMQ's PostgreSQL backend, no PostgreSQL server or Redis.
 */
export const EMBEDDED = process.env.LODE_TEST_MODE === 'embedded';
/**
 * `describe` for suites about the production layout itself (a PostgreSQL or Redis outage, Redis
 * losing its data, a worker-only process): skipped in embedded mode, which has none of them.
 */
export const describeOnServers: jest.Describe = EMBEDDED ? describe.skip : describe;

export interface TestApp {
  app: INestApplication;
  config: LodeConfig;
  db: DataSource;
  rootToken: string;
  /** supertest against the in-process server */
  http: () => ReturnType<typeof request>;
  close: () => Promise<void>;
}

export function testConfig(overrides: Partial<LodeConfig> = {}): LodeConfig {
  const id = randomBytes(6).toString('hex');
  const config = new LodeConfig();
  const url = new URL(TEST_PG);
  url.pathname = `/lode_test_${id}`;
  if (EMBEDDED) {
    config.embeddedDatabase = true;
    config.databaseUrl = '';
    config.redisUrl = undefined;
  } else {
    config.databaseUrl = url.toString();
    config.redisUrl = TEST_REDIS;
  }
  config.redisPrefix = `lode-test-${id}`;
  config.rootToken = `root-${randomBytes(16).toString('hex')}`;
  config.externalUrl = 'http://lode.test';
  config.logLevel = 'error';
  config.outboxPollMs = 200;
  config.tokenCacheMs = 0;
  // Suites send many refused tokens on purpose; the throttle has its own test (auth-throttle.e2e-spec.ts).
  config.authFailures = 0;
  // The SSH server is started only by the suites that use it, each on a port of its own.
  config.sshPort = 0;
  config.sshExternalHost = 'lode.test';
  config.sshExternalPort = 22;
  // Many apps share a Jest worker's heap with the runner: a last-resort collection there only pauses
  // the suite (and each app would run its own). The trim has its own test (idle-memory-trim.spec.ts).
  config.idleMemoryTrim = false;
  Object.assign(config, overrides);
  return config;
}

/** A whole Lode (API and worker in one process) on a fresh database, with root seeded. */
export async function startTestApp(overrides: Partial<LodeConfig> = {}): Promise<TestApp> {
  Logger.overrideLogger(['error']);
  const config = testConfig(overrides);
  config.dataDir = overrides.dataDir ?? (await mkdtemp(join(tmpdir(), 'lode-test-')));
  const database = await startDatabase(config);
  await runMigrations(config, MIGRATIONS);
  const app = await createHttpApp(config, { http: true, worker: true });
  await app.init();
  await app.get(CommandBus).execute(new SeedRoot());
  const db = app.get(DataSource);
  return {
    app,
    config,
    db,
    rootToken: config.rootToken!,
    http: () => request(app.getHttpServer()),
    close: async () => {
      await app.close();
      await database.stop();
      if (!config.embeddedDatabase) await dropDatabase(config.databaseUrl);
      if (config.redisUrl) await clearRedis(config.redisUrl, config.redisPrefix);
      await rm(config.dataDir, { recursive: true, force: true });
    },
  };
}

/** A second Lode's API (no worker) on a running test app's database. */
export interface SecondApp {
  app: INestApplication;
  http: TestApp['http'];
  close: () => Promise<void>;
}

/**
 * A second Lode API process on `t`'s database and Redis prefix: it shares no memory with the first,
 * only what they store (and PostgreSQL's notifications), as two replicas behind a load balancer do.
 * It stops with its own `close()`, before `t.close()` drops the database.
 */
export async function startSecondApp(t: Pick<TestApp, 'config'>): Promise<SecondApp> {
  const app = await createHttpApp(t.config, { http: true, worker: false });
  await app.init();
  // Starting an application resets Nest's logger; the suites want errors only.
  Logger.overrideLogger(['error']);
  return { app, http: () => request(app.getHttpServer()), close: () => app.close() };
}

/**
 * A second Lode API (startSecondApp) for the enclosing `describe`: started before its tests, closed
 * after them. `t` is read when they start, once the suite's own app is up.
 */
export function secondAppFor(t: () => Pick<TestApp, 'config'>): { app: () => INestApplication; http: TestApp['http'] } {
  let second: SecondApp | undefined;
  beforeAll(async () => {
    second = await startSecondApp(t());
  });
  afterAll(async () => {
    await second?.close();
  });
  return { app: () => second!.app, http: () => second!.http() };
}

export async function dropDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = url.pathname.slice(1);
  url.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: url.toString() });
  await admin.connect();
  try {
    await admin.query(`drop database if exists "${name}" with (force)`);
  } finally {
    await admin.end();
  }
}

export async function clearRedis(redisUrl: string, prefix: string): Promise<void> {
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
      if (keys.length) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } catch {
    // Redis away (a test stopped it on purpose): nothing to clean.
  } finally {
    redis.disconnect();
  }
}

/**
 * Until every outbox row's job has finished (completed, or out of attempts): all the background work
 * the test's writes queued, webhook fan-outs and their delivery retries included, is done.
 */
export async function outboxFinished(t: Pick<TestApp, 'db'>, timeoutMs = 10_000, everyMs = 100): Promise<void> {
  await eventually(
    async () => (await t.db.query(`select count(*)::int as n from outbox where finished_at is null`))[0].n === 0,
    timeoutMs,
    everyMs,
  );
}

/** Polls `check` until it stops throwing (or returns true), up to `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T> | T, timeoutMs = 10_000, everyMs = 100): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      const result = await check();
      if (result !== false) return result;
      if (Date.now() > until) throw new Error('eventually: condition still false');
    } catch (err) {
      if (Date.now() > until) throw err;
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * Counts SQL statements sent while serving one request: every `pg` query made inside the request's
 * async context (so the relay's polling and other requests are not counted).
 */
export function countStatements(): { forRequest: (requestId: string) => number; restore: () => void } {
  const counts = new Map<string, number>();
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  proto.query = function (this: unknown, ...args: unknown[]) {
    const id = RequestContexts.current()?.requestId;
    if (id) counts.set(id, (counts.get(id) ?? 0) + 1);
    return original.apply(this, args);
  };
  return { forRequest: (id) => counts.get(id) ?? 0, restore: () => void (proto.query = original) };
}

/** A TCP port free on 127.0.0.1 right now, for a server started as a separate process. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}
