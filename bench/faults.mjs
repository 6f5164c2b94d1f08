// Fault injection at load (issue 15): what was acknowledged must be recorded and delivered.
//
//   npm run bench:faults -- [--pushes 200] [--forks 20] [--writes 20] [--redis-only | --postgres-only]
//
// 1. Redis loses its data twice while pushes (each with a webhook) and forks run: the benchmark's own
//    redis-server (never the shared one), killed with SIGKILL and started again empty. Counted:
//    pushes git acknowledged, RepositoryPushed events recorded, deliveries the receiver got (unique
//    X-Gitlab-Event-UUID), forks finished.
// 2. The network to PostgreSQL goes silent for 6 s (a proxy stops passing bytes) while clients read
//    and write: every answer's status and time; writes answered 201 must all exist afterwards.
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { argument, startLode } from './support.mjs';

const run = promisify(execFile);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const PUSHES = argument('pushes', 200);
const FORKS = argument('forks', 20);
const WRITERS = argument('writes', 20);

async function freePort() {
  const s = createServer();
  await new Promise((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address();
  await new Promise((r) => s.close(r));
  return port;
}

/** The benchmark's own redis-server, without persistence. */
async function ownRedis() {
  const port = await freePort();
  let child;
  const start = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
    });
    for (let i = 0; i < 200; i++) {
      try {
        await run('redis-cli', ['-p', String(port), 'ping']);
        return;
      } catch {
        await sleep(25);
      }
    }
    throw new Error('redis-server did not start');
  };
  const stop = async () => {
    const c = child;
    if (!c || c.exitCode !== null) return;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGKILL');
    await exited;
  };
  await start();
  return { url: `redis://127.0.0.1:${port}`, restartEmpty: async () => (await stop(), await start()), stop };
}

/** A TCP proxy whose network can go silent: bytes are held, not dropped, until it heals. */
async function silentProxy(host, port) {
  let silent = false;
  const held = [];
  const server = createServer((client) => {
    const open = () => {
      const up = connect(port, host);
      for (const [from, to] of [
        [client, up],
        [up, client],
      ]) {
        from.on('error', () => undefined);
        from.on('data', (chunk) => {
          if (!silent) return void to.write(chunk);
          from.pause();
          held.push(() => (to.write(chunk), from.resume()));
        });
        from.on('close', () => to.destroy());
      }
    };
    client.on('error', () => undefined);
    if (silent) held.push(open);
    else open();
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: server.address().port,
    partition: () => (silent = true),
    heal: () => {
      silent = false;
      for (const f of held.splice(0)) f();
    },
    close: () => server.close(),
  };
}

async function pool(n, concurrency, task) {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) await task(next++);
    }),
  );
}

async function redisScenario() {
  const redis = await ownRedis();
  const received = new Map();
  const receiver = createHttpServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const uuid = String(req.headers['x-gitlab-event-uuid']);
      received.set(uuid, (received.get(uuid) ?? 0) + 1);
      res.writeHead(200).end();
    });
  });
  await new Promise((r) => receiver.listen(0, '127.0.0.1', r));
  const lode = await startLode(21000, {
    REDIS_URL: redis.url,
    LODE_OUTBOX_SWEEP_MS: '2000',
    LODE_ALLOW_LOCAL_WEBHOOKS: 'true',
  });
  const db = new pg.Client({ connectionString: lode.databaseUrl });
  await db.connect();
  const work = mkdtempSync(join(tmpdir(), 'lode-faults-'));
  try {
    const project = await lode.call('POST', '/projects', lode.rootToken, { name: 'faults', visibility: 'public' });
    await lode.call('POST', `/projects/${project.id}/hooks`, lode.rootToken, {
      url: `http://127.0.0.1:${receiver.address().port}/hook`,
    });
    const other = await lode.call('POST', '/users', lode.rootToken, {
      email: 'f@example.com',
      username: 'forker',
      name: 'Forker',
      password: 'a-long-password-1',
      skip_confirmation: true,
    });
    const otherToken = (
      await lode.call('POST', `/users/${other.id}/impersonation_tokens`, lode.rootToken, { name: 'f', scopes: ['api'] })
    ).token;
    const remote = `${lode.origin.replace('http://', `http://root:${lode.rootToken}@`)}/${project.path_with_namespace}.git`;
    await run('git', ['init', '-q', '-b', 'master', work]);
    writeFileSync(join(work, 'a.txt'), 'a\n');
    await run('git', ['-C', work, 'add', '.']);
    await run('git', ['-C', work, '-c', 'user.name=b', '-c', 'user.email=b@x', 'commit', '-q', '-m', 'a']);
    await run('git', ['-C', work, 'push', '-q', remote, 'master']);
    const sources = [];
    for (let i = 0; i < FORKS; i++)
      sources.push(await lode.call('POST', '/projects', lode.rootToken, { name: `src-${i}`, visibility: 'public' }));

    let acknowledged = 0;
    let refused = 0;
    const forks = [];
    const started = performance.now();
    const load = Promise.all([
      pool(PUSHES, 6, async (i) => {
        try {
          await run('git', ['-C', work, 'push', '-q', remote, `master:refs/heads/b${i}`]);
          acknowledged++;
        } catch {
          refused++;
        }
      }),
      pool(FORKS, 2, async (i) => {
        const res = await fetch(lode.url(`/projects/${sources[i].id}/fork`), {
          method: 'POST',
          headers: { 'PRIVATE-TOKEN': otherToken },
        });
        if (res.status === 201) forks.push((await res.json()).id);
        await sleep(100);
      }),
    ]);
    // Redis loses everything twice during the load.
    await sleep(1500);
    await redis.restartEmpty();
    await sleep(2500);
    await redis.restartEmpty();
    await load;
    const loadS = (performance.now() - started) / 1000;

    const recorded = async () =>
      (
        await db.query(`select count(*)::int as n from events where type = 'RepositoryPushed' and stream_id = $1`, [
          `project-${project.id}`,
        ])
      ).rows[0].n - 1;
    const unfinished = async () =>
      (await db.query(`select count(*)::int as n from outbox where finished_at is null`)).rows[0].n;
    const settledFrom = performance.now();
    while ((await unfinished()) > 0 && performance.now() - settledFrom < 180_000) await sleep(500);
    const settleS = (performance.now() - settledFrom) / 1000;
    const finishedForks = (
      await db.query(`select count(*)::int as n from projects where id = any($1) and import_status = 'finished'`, [
        forks,
      ])
    ).rows[0].n;
    const redispatched = (await db.query(`select coalesce(sum(redispatches), 0)::int as n from outbox`)).rows[0].n;
    const deliveries = [...received.entries()].filter(([uuid]) => uuid !== 'undefined');
    return {
      pushes: PUSHES,
      acknowledged,
      refused,
      recorded: await recorded(),
      // One delivery per branch push, plus the first push before the load.
      delivered: deliveries.length - 1,
      duplicates: deliveries.reduce((n, [, c]) => n + c - 1, 0),
      forks: forks.length,
      forksFinished: finishedForks,
      unfinishedJobs: await unfinished(),
      redispatched,
      loadS: Number(loadS.toFixed(1)),
      settleS: Number(settleS.toFixed(1)),
    };
  } finally {
    await db.end();
    await lode.stop();
    await redis.stop();
    receiver.close();
    rmSync(work, { recursive: true, force: true });
  }
}

async function postgresScenario() {
  const base = new URL(process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
  const proxy = await silentProxy(base.hostname, Number(base.port || 5432));
  const lode = await startLode(22000, {}, [], { pgPort: proxy.port });
  const results = [];
  const created = [];
  let stop = false;
  let partitionAt = 0;
  let healAt = 0;
  try {
    const client = async (i) => {
      for (let n = 0; !stop; n++) {
        const write = (i + n) % 4 === 0;
        const t0 = performance.now();
        let status;
        let retryAfter = null;
        try {
          const res = await fetch(lode.url(write ? '/projects' : '/projects?per_page=20'), {
            method: write ? 'POST' : 'GET',
            headers: { 'PRIVATE-TOKEN': lode.rootToken, 'Content-Type': 'application/json' },
            body: write ? JSON.stringify({ name: `w-${i}-${n}` }) : undefined,
            signal: AbortSignal.timeout(30_000),
          });
          status = res.status;
          retryAfter = res.headers.get('retry-after');
          const body = await res.json().catch(() => null);
          if (write && status === 201) created.push(body.id);
        } catch {
          status = -1;
        }
        results.push({ at: t0, ms: performance.now() - t0, status, retryAfter, write });
        if (status === 503) await sleep(50);
      }
    };
    const clients = Promise.all(Array.from({ length: WRITERS }, (_, i) => client(i)));
    await sleep(4000);
    partitionAt = performance.now();
    proxy.partition();
    await sleep(6000);
    healAt = performance.now();
    proxy.heal();
    await sleep(6000);
    stop = true;
    await clients;
    const during = results.filter((r) => r.at >= partitionAt && r.at < healAt);
    // Requests sent before the cut and still waiting when it came: they held pooled connections.
    const caught = results.filter((r) => r.at < partitionAt && r.at + r.ms > partitionAt);
    const after = results.filter((r) => r.at >= healAt);
    const firstOkAfter = after.find((r) => r.status >= 200 && r.status < 300);
    const db = new pg.Client({
      connectionString: lode.databaseUrl.replace(`:${proxy.port}/`, `:${base.port || 5432}/`),
    });
    await db.connect();
    const present = (await db.query(`select count(*)::int as n from projects where id = any($1)`, [created])).rows[0].n;
    await db.end();
    const count = (rs, f) => rs.filter(f).length;
    return {
      requests: results.length,
      caughtByTheCut: caught.length,
      caughtStatuses: [...new Set(caught.map((r) => r.status))],
      caughtMaxMsAfterCut: Math.round(Math.max(0, ...caught.map((r) => r.at + r.ms - partitionAt))),
      during: during.length,
      during503: count(during, (r) => r.status === 503),
      during503WithRetryAfter: count(during, (r) => r.status === 503 && r.retryAfter),
      duringOther: count(during, (r) => r.status !== 503),
      duringMaxMs: Math.round(Math.max(0, ...during.map((r) => r.ms))),
      status500: count(results, (r) => r.status >= 500 && r.status !== 503),
      recoveredAfterMs: firstOkAfter ? Math.round(firstOkAfter.at + firstOkAfter.ms - healAt) : null,
      writesAcknowledged: created.length,
      writesPresent: present,
    };
  } finally {
    proxy.heal();
    await lode.stop();
    proxy.close();
  }
}

if (!process.argv.includes('--postgres-only'))
  console.log('Redis loses its data twice during the load:', JSON.stringify(await redisScenario(), null, 2));
if (!process.argv.includes('--redis-only'))
  console.log('PostgreSQL silent for 6 s during the load:', JSON.stringify(await postgresScenario(), null, 2));
