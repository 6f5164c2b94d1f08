import { Logs, runMigrations, type LodeConfig } from '@app/platform';
import { SeedRoot } from '@app/users';
import { Logger, type INestApplication, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { CommandBus } from '@nestjs/cqrs';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { createHttpApp } from '../../apps/lode/src/http-app';
import { LodeModule, MIGRATIONS } from '../../apps/lode/src/lode.module';
import { verifyStandardWebhook } from '../support/standard-webhooks';
import {
  clearRedis,
  describeOnServers,
  dropDatabase,
  eventually,
  freePort,
  TEST_PG,
  TEST_REDIS,
  testConfig,
} from '../support/test-app';
import { startWebhookReceiver, type Delivery, type WebhookReceiver } from '../support/webhook-receiver';

const whsec = () => `whsec_${randomBytes(32).toString('base64')}`;

/*
 * The production layout (LODE_ROLE=api twice, LODE_ROLE=worker once) on one PostgreSQL and one Redis:
 * two API applications without workers and one worker-only application, each its own Nest module
 * (as security.e2e-spec.ts's second API process), sharing only the database and Redis. Writes go
 * through either API process; the events' outbox rows are relayed and delivered by the worker alone,
 * each delivery once, signed. Not in embedded mode: it serves one process.
 */
describeOnServers('system hooks and webhooks with two API processes and a worker process', () => {
  let config: LodeConfig;
  let apiA: INestApplication;
  let apiB: INestApplication;
  let worker: INestApplicationContext;
  let receiver: WebhookReceiver;
  let hookBase: string;
  const systemSecret = whsec();
  const projectSecret = whsec();

  const as = (app: INestApplication, token: string) => ({
    get: (path: string) => request(app.getHttpServer()).get(`/api/v4${path}`).set('PRIVATE-TOKEN', token),
    post: (path: string) => request(app.getHttpServer()).post(`/api/v4${path}`).set('PRIVATE-TOKEN', token),
    delete: (path: string) => request(app.getHttpServer()).delete(`/api/v4${path}`).set('PRIVATE-TOKEN', token),
  });
  const rootOn = (app: INestApplication) => as(app, config.rootToken!);
  const at = (path: string) => receiver.at(path);

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    hookBase = receiver.url;

    Logger.overrideLogger(['error']);
    config = testConfig({ allowLocalWebhooks: true, webhookTimeoutMs: 1000, webhookRetryDelayMs: 200 });
    config.dataDir = await mkdtemp(join(tmpdir(), 'lode-hook-processes-'));
    Logs.configure('error', 'json');
    await runMigrations(config, MIGRATIONS);
    // What main.ts starts for LODE_ROLE=api (twice) and LODE_ROLE=worker.
    apiA = await createHttpApp(config, { http: true, worker: false });
    await apiA.init();
    apiB = await createHttpApp(config, { http: true, worker: false });
    await apiB.init();
    worker = await NestFactory.createApplicationContext(LodeModule.forRoot(config, { http: false, worker: true }), {
      logger: ['error'],
    });
    await worker.init();
    Logger.overrideLogger(['error']);
    await apiA.get(CommandBus).execute(new SeedRoot());
  }, 60_000);

  afterAll(async () => {
    await worker?.close();
    await apiB?.close();
    await apiA?.close();
    await dropDatabase(config.databaseUrl);
    if (config.redisUrl) await clearRedis(config.redisUrl, config.redisPrefix);
    await rm(config.dataDir, { recursive: true, force: true });
    await receiver.close();
  });

  it('writes no system fan-out while no system hook exists, and fans out what B records right after A made one', async () => {
    const db = apiA.get(DataSource);
    const fanOuts = async () =>
      ((await db.query(`select count(*)::int as n from outbox where name = 'system-fanout'`)) as { n: number }[])[0].n;
    const user = async (app: INestApplication, name: string) => {
      const res = await rootOn(app)
        .post('/users')
        .send({ username: name, email: `${name}@example.com`, name, password: 'secret-password' });
      expect(res.status).toBe(201);
      return res.body.id as number;
    };
    const suffix = randomBytes(3).toString('hex');
    const before = await fanOuts();
    // Nobody listens: B records a user without a fan-out row (and now holds "no system hook" in its cache).
    await user(apiB, `nobody${suffix}`);
    expect(await fanOuts()).toBe(before);
    // A hook made through A, then at once a user through B: B must not answer from its stale cache
    // (the fence on its LISTEN connection makes it hear A's invalidation first).
    const hook = await rootOn(apiA)
      .post('/hooks')
      .send({ url: `${hookBase}/first` });
    expect(hook.status).toBe(201);
    const heard = await user(apiB, `heard${suffix}`);
    expect(await fanOuts()).toBe(before + 1);
    await eventually(() => at('/first').some((r) => r.body.event_name === 'user_create' && r.body.user_id === heard));
    expect(at('/first').filter((r) => r.body.event_name === 'user_create')).toHaveLength(1);
    // Removed through B: A hears of it, and its next write makes no fan-out again.
    expect((await rootOn(apiB).delete(`/hooks/${hook.body.id}`)).status).toBe(204);
    const after = await fanOuts();
    await user(apiA, `gone${suffix}`);
    expect(await fanOuts()).toBe(after);
  }, 30_000);

  it('delivers each write of either API process once, from the worker, signed', async () => {
    // The hook added through A, seen by B (one database, no process memory).
    const hook = await rootOn(apiA)
      .post('/hooks')
      .send({ url: `${hookBase}/system`, signing_token: systemSecret });
    expect(hook.status).toBe(201);
    expect((await rootOn(apiB).get(`/hooks/${hook.body.id}`)).body).toEqual(hook.body);

    // A user made through A, another through B.
    const suffix = randomBytes(3).toString('hex');
    const made: number[] = [];
    for (const [app, name] of [
      [apiA, `alice${suffix}`],
      [apiB, `bob${suffix}`],
    ] as const) {
      const res = await rootOn(app)
        .post('/users')
        .send({ username: name, email: `${name}@example.com`, name, password: 'secret-password' });
      expect(res.status).toBe(201);
      made.push(res.body.id as number);
    }
    const userCreates = () =>
      at('/system').filter((r) => r.body.event_name === 'user_create' && made.includes(r.body.user_id));
    await eventually(() => userCreates().length >= 2);
    // Give a second relay or a second delivery time to show up: none does.
    await new Promise((r) => setTimeout(r, 1500));
    const hits = userCreates();
    expect(hits.map((h) => h.body.user_id).sort()).toEqual([...made].sort());
    expect(new Set(hits.map((h) => h.headers['x-gitlab-event-uuid'])).size).toBe(2);
    for (const h of hits) {
      expect(h.headers['x-gitlab-event']).toBe('System Hook');
      expect(verifyStandardWebhook(systemSecret, h.headers, h.raw)).toBe(true);
    }
  }, 30_000);

  it("delivers a project hook's pushes made through either API process once each, signed", async () => {
    const project = await rootOn(apiA)
      .post('/projects')
      .send({ name: `procs-${randomBytes(3).toString('hex')}` });
    expect(project.status).toBe(201);
    const hook = await rootOn(apiB)
      .post(`/projects/${project.body.id}/hooks`)
      .send({ url: `${hookBase}/project`, push_events: true, signing_token: projectSecret });
    expect(hook.status).toBe(201);
    const files = ['from-a.txt', 'from-b.txt'];
    for (const [app, file] of [
      [apiA, files[0]],
      [apiB, files[1]],
    ] as const) {
      const res = await rootOn(app)
        .post(`/projects/${project.body.id}/repository/commits`)
        .send({
          branch: 'master',
          commit_message: `add ${file}`,
          actions: [{ action: 'create', file_path: file, content: `${file}\n` }],
        });
      expect(res.status).toBe(201);
    }
    await eventually(() => at('/project').length >= 2);
    await new Promise((r) => setTimeout(r, 1500));
    const hits = at('/project');
    expect(hits).toHaveLength(2);
    expect(hits.map((h) => h.body.commits[0].message.trim()).sort()).toEqual(files.map((f) => `add ${f}`).sort());
    for (const h of hits) {
      expect(h.headers['x-gitlab-event']).toBe('Push Hook');
      expect(verifyStandardWebhook(projectSecret, h.headers, h.raw)).toBe(true);
    }
    // The system hook heard the project's creation once, and (repository updates on by default) each push once.
    const system = at('/system').filter((r) => r.body.project_id === project.body.id);
    expect(system.filter((r) => r.body.event_name === 'project_create')).toHaveLength(1);
    expect(system.filter((r) => r.body.event_name === 'repository_update')).toHaveLength(2);
    for (const h of system) expect(verifyStandardWebhook(systemSecret, h.headers, h.raw)).toBe(true);
  }, 30_000);
});

/*
 * The same with real operating-system processes from the built dist/ (as process.e2e-spec.ts starts
 * them): `npm start` twice with LODE_ROLE=api on two ports and once with LODE_ROLE=worker, sharing
 * nothing but PostgreSQL and Redis.
 */
describeOnServers('system hooks and webhooks with LODE_ROLE=api twice and LODE_ROLE=worker, as processes', () => {
  const ROOT = process.cwd();
  const MAIN = join(ROOT, 'dist/apps/lode/src/main.js');
  const id = randomBytes(5).toString('hex');
  const url = new URL(TEST_PG);
  url.pathname = `/lode_hookprocs_${id}`;
  const prefix = `lode-hookprocs-${id}`;
  const rootToken = `root-${randomBytes(16).toString('hex')}`;
  const secret = whsec();
  const children: ChildProcess[] = [];
  let received: Delivery[];
  let receiver: WebhookReceiver;
  let hookBase: string;
  let dataDir: string;
  let ports: number[] = [];

  function start(extra: NodeJS.ProcessEnv): ChildProcess {
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      HOST: '127.0.0.1',
      DATABASE_URL: url.toString(),
      REDIS_URL: TEST_REDIS,
      LODE_REDIS_PREFIX: prefix,
      LODE_DATA_DIR: dataDir,
      LODE_LOG_LEVEL: 'error',
      LODE_SSH_PORT: '0',
      LODE_ROOT_TOKEN: rootToken,
      LODE_ALLOW_LOCAL_WEBHOOKS: 'true',
      LODE_EXTERNAL_URL: 'http://lode.test',
      LODE_OUTBOX_POLL_MS: '200',
      ...extra,
    };
    const child = spawn(process.execPath, [MAIN], { env, stdio: ['ignore', 'ignore', 'inherit'] });
    children.push(child);
    return child;
  }
  const api = (port: number, path: string, method = 'GET', body?: unknown) =>
    fetch(`http://127.0.0.1:${port}/api/v4${path}`, {
      method,
      headers: { 'PRIVATE-TOKEN': rootToken, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const ready = (port: number) =>
    eventually(async () => (await fetch(`http://127.0.0.1:${port}/-/readiness`)).status === 200, 60_000, 200);

  beforeAll(async () => {
    // Built when dist/ is missing or older than the sources: a stale build would test other code.
    execFileSync(process.execPath, [join(ROOT, 'scripts/build-if-needed.cjs')], { stdio: 'inherit' });
    expect(existsSync(MAIN)).toBe(true);
    receiver = await startWebhookReceiver();
    received = receiver.received;
    hookBase = receiver.url;
    dataDir = await mkdtemp(join(tmpdir(), 'lode-hookprocs-'));
    ports = [await freePort(), await freePort()];
    // The first one migrates the fresh database; the others start on it.
    start({ LODE_ROLE: 'api', PORT: String(ports[0]) });
    await ready(ports[0]);
    start({ LODE_ROLE: 'api', PORT: String(ports[1]) });
    start({ LODE_ROLE: 'worker' });
    await ready(ports[1]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(
      children.map(async (child) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }),
    );
    await dropDatabase(url.toString());
    await clearRedis(TEST_REDIS, prefix);
    await rm(dataDir, { recursive: true, force: true });
    await receiver.close();
  });

  it('sends the system and project hook deliveries of writes through either API process once each, signed', async () => {
    const [a, b] = ports;
    expect((await api(a, '/hooks', 'POST', { url: `${hookBase}/system`, signing_token: secret })).status).toBe(201);
    const suffix = randomBytes(3).toString('hex');
    const made: number[] = [];
    for (const [port, name] of [
      [a, `alice${suffix}`],
      [b, `bob${suffix}`],
    ] as const) {
      const res = await api(port, '/users', 'POST', {
        username: name,
        email: `${name}@example.com`,
        name,
        password: 'secret-password',
      });
      expect(res.status).toBe(201);
      made.push(((await res.json()) as { id: number }).id);
    }
    const project = (await (await api(b, '/projects', 'POST', { name: `procs-${suffix}` })).json()) as { id: number };
    const hook = await api(a, `/projects/${project.id}/hooks`, 'POST', {
      url: `${hookBase}/project`,
      push_events: true,
      signing_token: secret,
    });
    expect(hook.status).toBe(201);
    for (const [port, file] of [
      [a, 'from-a.txt'],
      [b, 'from-b.txt'],
    ] as const) {
      const res = await api(port, `/projects/${project.id}/repository/commits`, 'POST', {
        branch: 'master',
        commit_message: `add ${file}`,
        actions: [{ action: 'create', file_path: file, content: `${file}\n` }],
      });
      expect(res.status).toBe(201);
    }

    const userCreates = () =>
      received.filter(
        (r) => r.path === '/system' && r.body.event_name === 'user_create' && made.includes(r.body.user_id),
      );
    const pushes = () => received.filter((r) => r.path === '/project');
    await eventually(() => userCreates().length >= 2 && pushes().length >= 2, 30_000);
    // Time for a duplicate to show up: none does.
    await new Promise((r) => setTimeout(r, 2000));
    expect(
      userCreates()
        .map((h) => h.body.user_id)
        .sort(),
    ).toEqual([...made].sort());
    expect(pushes()).toHaveLength(2);
    const projectEvents = received.filter((r) => r.path === '/system' && r.body.project_id === project.id);
    expect(projectEvents.filter((r) => r.body.event_name === 'project_create')).toHaveLength(1);
    expect(projectEvents.filter((r) => r.body.event_name === 'repository_update')).toHaveLength(2);
    for (const h of received) expect(verifyStandardWebhook(secret, h.headers, h.raw)).toBe(true);
    expect(new Set(received.map((h) => h.headers['x-gitlab-event-uuid'])).size).toBe(received.length);
  }, 60_000);
});
