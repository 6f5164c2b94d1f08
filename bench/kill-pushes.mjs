// Every ref move announced through kill -9 (issue 23):
//
//   node bench/kill-pushes.mjs [--projects 5] [--writers 3] [--rounds 3] [--round-s 10] [--dist <dir>]
//
// One server (the built dist/, or `--dist <dir>`'s, for a baseline of another checkout) takes pushes
// from several writers per project, all force-pushing the same branch (so pushes overtake each other),
// and is killed with SIGKILL during them, `--rounds` times, and started again each time. Afterwards,
// for every ref: do the recorded `RepositoryPushed` updates chain without holes (each `before` the
// previous `after`, the last `after` where the ref is), did every recorded update reach the webhook
// receiver, and did every push git acknowledged appear in the chain? Also: how long after the last
// start the pushes left behind took to be recorded.
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { Redis } from 'ioredis';
import { argument, repositoryDir } from './support.mjs';

const run = promisify(execFile);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const PROJECTS = argument('projects', 5);
const WRITERS = argument('writers', 3);
const ROUNDS = argument('rounds', 3);
const ROUND_S = argument('round-s', 10);
const distArg = process.argv.indexOf('--dist');
const ROOT = new URL('..', import.meta.url).pathname;
const DIST = distArg > 0 ? process.argv[distArg + 1] : ROOT;
const ZERO = '0'.repeat(40);

async function main() {
  if (DIST === ROOT) await run(process.execPath, [join(ROOT, 'scripts/build-if-needed.cjs')]);
  const id = randomBytes(4).toString('hex');
  const base = new URL(process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
  const dbUrl = new URL(base);
  dbUrl.pathname = `/lode_bench_${id}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'lode-bench-'));
  const work = mkdtempSync(join(tmpdir(), 'lode-kill-'));
  const port = 23000 + Math.floor(Math.random() * 1000);
  const rootToken = `bench-root-${randomBytes(12).toString('hex')}`;
  const prefix = `lode-bench-${id}`;

  const hooks = new Map(); // "<project> <ref> <before> <after>" -> deliveries (unique event UUIDs)
  const receiver = createHttpServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      try {
        const p = JSON.parse(body);
        const key = `${p.project_id} ${p.ref} ${p.before} ${p.after}`;
        const uuids = hooks.get(key) ?? new Set();
        uuids.add(String(req.headers['x-gitlab-event-uuid']));
        hooks.set(key, uuids);
      } catch {
        // not a push
      }
      res.writeHead(200).end();
    });
  });
  await new Promise((r) => receiver.listen(0, '127.0.0.1', r));

  let server;
  const start = async () => {
    server = spawn(process.execPath, [join(DIST, 'dist/apps/lode/src/main.js')], {
      env: {
        ...process.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        DATABASE_URL: dbUrl.toString(),
        REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
        LODE_DATA_DIR: dataDir,
        LODE_ROOT_TOKEN: rootToken,
        LODE_REDIS_PREFIX: prefix,
        LODE_LOG_LEVEL: 'error',
        LODE_SSH_PORT: '0',
        LODE_ALLOW_LOCAL_WEBHOOKS: 'true',
        NODE_ENV: 'production',
      },
      stdio: ['ignore', 'ignore', 'ignore'],
    });
    const started = performance.now();
    for (;;) {
      try {
        if ((await fetch(`http://127.0.0.1:${port}/-/readiness`)).ok) return performance.now() - started;
      } catch {
        // not yet
      }
      await sleep(50);
    }
  };
  const kill = async () => {
    const exited = new Promise((r) => server.once('exit', r));
    server.kill('SIGKILL');
    await exited;
  };
  const call = async (method, p, body) => {
    const res = await fetch(`http://127.0.0.1:${port}/api/v4${p}`, {
      method,
      headers: { 'PRIVATE-TOKEN': rootToken, 'Content-Type': 'application/json' },
      body: body && JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${await res.text()}`);
    return res.json();
  };

  const db = new pg.Client({ connectionString: dbUrl.toString() });
  const git = (dir, ...args) =>
    run('git', ['-C', dir, '-c', 'user.name=b', '-c', 'user.email=b@x', ...args], { maxBuffer: 1 << 24 });
  try {
    await start();
    await db.connect();
    const projects = [];
    for (let i = 0; i < PROJECTS; i++) {
      const p = await call('POST', '/projects', { name: `killed-${i}` });
      await call('POST', `/projects/${p.id}/hooks`, { url: `http://127.0.0.1:${receiver.address().port}/hook` });
      const remote = `http://root:${rootToken}@127.0.0.1:${port}/${p.path_with_namespace}.git`;
      const writers = [];
      for (let w = 0; w < WRITERS; w++) {
        const dir = join(work, `${p.id}-${w}`);
        await run('git', ['init', '-q', '-b', 'master', dir]);
        writeFileSync(join(dir, 'base.txt'), `${p.id}\n`);
        await git(dir, 'add', '.');
        await git(dir, 'commit', '-q', '-m', 'base');
        writers.push(dir);
      }
      await git(writers[0], 'push', '-q', remote, 'master');
      projects.push({ ...p, remote, writers });
    }

    const acknowledged = []; // [projectId, after]
    let failed = 0;
    let stop = false;
    let serial = 0;
    const writer = async (p, dir) => {
      while (!stop) {
        writeFileSync(join(dir, 'f.txt'), `${serial++}\n`);
        await git(dir, 'add', '.');
        await git(dir, 'commit', '-q', '-m', `c${serial}`);
        const head = (await git(dir, 'rev-parse', 'HEAD')).stdout.trim();
        try {
          // Every writer force-pushes the one branch: pushes overtake each other.
          await git(dir, 'push', '-q', '--force', p.remote, 'HEAD:refs/heads/work');
          acknowledged.push([p.id, head]);
        } catch (err) {
          failed++;
          if (process.env.BENCH_DEBUG) console.error(String(err.stderr ?? err).slice(0, 400));
          await sleep(1000);
        }
      }
    };
    const load = projects.flatMap((p) => p.writers.map((dir) => writer(p, dir)));
    const restarts = [];
    for (let round = 0; round < ROUNDS; round++) {
      await sleep(ROUND_S * 1000);
      await kill();
      restarts.push(Math.round(await start()));
    }
    const lastStart = performance.now();
    // Pushes go on a moment after the last start, then stop.
    await sleep(2000);
    stop = true;
    await Promise.all(load);

    // How long the pushes left behind wait after the last start.
    const leftBehind = async () => (await db.query(`select count(*)::int as n from pending_pushes`)).rows[0].n;
    while ((await leftBehind()) > 0 && performance.now() - lastStart < 240_000) await sleep(250);
    const recordedAfterS = (performance.now() - lastStart) / 1000;
    const unfinished = async () =>
      (await db.query(`select count(*)::int as n from outbox where finished_at is null`)).rows[0].n;
    const settled = performance.now();
    while ((await unfinished()) > 0 && performance.now() - settled < 240_000) await sleep(500);
    await sleep(2000);

    let moves = 0;
    let holes = 0;
    let tipMismatch = 0;
    let unannounced = 0;
    let acknowledgedMissing = 0;
    for (const p of projects) {
      const events = (
        await db.query(
          `select data from events where type = 'RepositoryPushed' and (data->>'projectId')::int = $1
            order by global_position`,
          [p.id],
        )
      ).rows;
      const chains = new Map();
      for (const { data } of events)
        for (const u of data.updates) {
          const chain = chains.get(u.ref) ?? [];
          chain.push(u);
          chains.set(u.ref, chain);
        }
      const refs = (
        await run('git', [
          '--git-dir',
          repositoryDir(dataDir, p.id),
          'for-each-ref',
          '--format=%(objectname) %(refname)',
        ])
      ).stdout
        .trim()
        .split('\n')
        .map((l) => l.split(' '));
      const afters = new Set();
      for (const [ref, chain] of chains) {
        let prev = ZERO;
        for (const u of chain) {
          moves++;
          afters.add(u.after);
          if (u.before !== prev) holes++;
          prev = u.after;
          if (!hooks.has(`${p.id} ${ref} ${u.before} ${u.after}`)) unannounced++;
        }
        const now = refs.find(([, name]) => name === ref)?.[0] ?? ZERO;
        if (now !== prev) tipMismatch++;
      }
      acknowledgedMissing += acknowledged.filter(([pid, after]) => pid === p.id && !afters.has(after)).length;
    }
    console.log(
      JSON.stringify(
        {
          dist: DIST,
          projects: PROJECTS,
          writers: WRITERS,
          rounds: ROUNDS,
          pushesAcknowledged: acknowledged.length,
          pushesFailed: failed,
          recordedMoves: moves,
          holes,
          refsWhoseChainEndsElsewhere: tipMismatch,
          movesWithoutWebhook: unannounced,
          acknowledgedPushesNotInChain: acknowledgedMissing,
          leftBehindRecordedWithinS: Number(recordedAfterS.toFixed(1)),
          restartReadyMs: restarts,
          loadavg: loadavg().map((l) => Number(l.toFixed(2))),
        },
        null,
        2,
      ),
    );
  } finally {
    await db.end().catch(() => undefined);
    if (server && server.exitCode === null && server.signalCode === null) {
      server.kill('SIGTERM');
      await new Promise((r) => server.once('exit', r));
    }
    receiver.close();
    const admin = new pg.Client({ connectionString: base.toString() });
    await admin.connect();
    await admin.query(`drop database if exists "lode_bench_${id}" with (force)`);
    await admin.end();
    const redis = new Redis(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
    for await (const keys of redis.scanStream({ match: `${prefix}:*`, count: 1000 }))
      if (keys.length) await redis.del(...keys);
    redis.disconnect();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
