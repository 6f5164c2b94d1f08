import { JobKinds, Logs, runMigrations, WorkerHealthServer, type LodeConfig } from '@app/platform';
import { Logger, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { parse } from 'yaml';
import { readFileSync } from 'node:fs';
import { LodeModule, MIGRATIONS } from '../../apps/lode/src/lode.module';
import { getFrom } from '../support/from-address';
import { clearRedis, describeOnServers, dropDatabase, freePort, testConfig } from '../support/test-app';

/** docker-compose.yml's health check of the worker: the command Docker runs in the container. */
function composeWorkerHealthcheck(): string[] {
  const compose = parse(readFileSync(join(process.cwd(), 'docker-compose.yml'), 'utf8'), { merge: true }) as {
    services: { worker: { healthcheck: { test: string[] } } };
  };
  const [form, ...command] = compose.services.worker.healthcheck.test;
  expect(form).toBe('CMD');
  return command;
}

/** Runs the health check command as Docker would (`node` from PATH: this test's node); its exit code. */
function runHealthcheck(command: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const [file, ...args] = command;
  expect(file).toBe('node');
  return new Promise((resolve) => {
    execFile(process.execPath, args, { env, timeout: 10_000 }, (err) =>
      resolve(err ? (typeof err.code === 'number' ? err.code : 1) : 0),
    );
  });
}

describeOnServers('a worker-only process: its health port (LODE_WORKER_HEALTH_PORT)', () => {
  let config: LodeConfig;
  let app: INestApplicationContext;
  let port: number;

  const get = (path: string, from = '127.0.0.1') => getFrom(port, from, path);

  beforeAll(async () => {
    Logger.overrideLogger(['error']);
    port = await freePort();
    config = testConfig({ workerHealthPort: port, host: '127.0.0.1', metricsAllow: ['127.0.0.1'] });
    config.dataDir = await mkdtemp(join(tmpdir(), 'lode-worker-health-'));
    Logs.configure('error', 'json');
    await runMigrations(config, MIGRATIONS);
    // What main.ts starts for LODE_ROLE=worker: the module without HTTP, with the workers.
    app = await NestFactory.createApplicationContext(LodeModule.forRoot(config, { http: false, worker: true }), {
      logger: ['error'],
    });
    await app.init();
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    await dropDatabase(config.databaseUrl);
    if (config.redisUrl) await clearRedis(config.redisUrl, config.redisPrefix);
    await rm(config.dataDir, { recursive: true, force: true });
  });

  it('listens on the port, where the process serves nothing else', async () => {
    expect(app.get(WorkerHealthServer).port()).toBe(port);
    const other = await get('/api/v4/version');
    expect([other.status, JSON.parse(other.body)]).toEqual([404, { message: '404 Not Found' }]);
  });

  it('answers readiness with PostgreSQL and the queue backend, as the API does', async () => {
    const short = await get('/-/readiness');
    expect([short.status, JSON.parse(short.body)]).toEqual([
      200,
      { status: 'ok', checks: { database: { status: 'ok' }, redis: { status: 'ok' } } },
    ]);
    const all = JSON.parse((await get('/-/readiness?all=1')).body);
    expect(all).toEqual({
      status: 'ok',
      master_check: [{ status: 'ok' }],
      db_check: [{ status: 'ok' }],
      queues_check: [{ status: 'ok' }],
      storage_check: [{ status: 'ok', labels: { shard: 'default' } }],
    });
  });

  it('serves its metrics to LODE_METRICS_ALLOW only', async () => {
    const allowed = await get('/-/metrics');
    expect(allowed.status).toBe(200);
    expect(allowed.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(allowed.body).toContain('lode_webhook_deliveries_total{outcome="delivered"} 0');
    expect(allowed.body).toContain('lode_queue_jobs{queue="webhooks",state="waiting"}');
    const stranger = await get('/-/metrics', '127.0.0.5');
    expect(stranger.status).toBe(404);
    expect(stranger.body).not.toContain('lode_');
  });

  // DatabaseWatch probes PostgreSQL on a connection of its own (`lode-<role>-watch`) where requests
  // or workers run. A command line's context (what `lode projections rebuild` opens) has neither,
  // and must not probe: its own busy event loop once looked like a silent database to the probe,
  // which cut the rebuild's connection after minutes of work.
  it("watches the database in a worker, not in the command line's context", async () => {
    const watching = async () => {
      await new Promise((r) => setTimeout(r, 1500)); // three probe intervals
      const [{ n }] = await app
        .get(DataSource)
        .query(
          `select count(*)::int as n from pg_stat_activity where datname = current_database() and application_name like 'lode-%-watch'`,
        );
      return n as number;
    };
    expect(await watching()).toBe(1);
    const cli = await NestFactory.createApplicationContext(LodeModule.forRoot(config, { http: false, worker: false }), {
      logger: ['error'],
    });
    try {
      await cli.init();
      expect(await watching()).toBe(1);
    } finally {
      await cli.close();
    }
  }, 30_000);

  it("passes docker-compose.yml's health check while alive, and fails it once a queue's worker stopped", async () => {
    const command = composeWorkerHealthcheck();
    const env = { PATH: process.env.PATH, LODE_WORKER_HEALTH_PORT: String(port) };
    const live = await get('/-/liveness');
    expect([live.status, JSON.parse(live.body)]).toEqual([200, { status: 'ok' }]);
    expect(await runHealthcheck(command, env)).toBe(0);

    const git = app
      .get(JobKinds)
      .workers()
      .find((w) => w.queue === 'git')!.worker;
    await git.close();
    const stuck = await get('/-/liveness');
    expect([stuck.status, JSON.parse(stuck.body)]).toEqual([
      503,
      { status: 'failed', message: 'the workers of git are not running' },
    ]);
    expect(await runHealthcheck(command, env)).toBe(1);
    // Nothing listening at all fails it too.
    expect(await runHealthcheck(command, { ...env, LODE_WORKER_HEALTH_PORT: String(await freePort()) })).toBe(1);
  }, 30_000);
});
