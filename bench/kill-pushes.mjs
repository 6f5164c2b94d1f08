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
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { argument, repositoryDir, startLode } from './support.mjs';

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

  // The server's output is dropped: killed mid-push, it has much to say that is expected.
  const lode = await startLode(23000, { LODE_LOG_LEVEL: 'error', LODE_ALLOW_LOCAL_WEBHOOKS: 'true' }, [], {
    dist: DIST === ROOT ? undefined : DIST,
    quiet: true,
  });
  const { rootToken, port, dataDir } = lode;
  const call = (method, p, body) => lode.call(method, p, rootToken, body);
  const work = mkdtempSync(join(tmpdir(), 'lode-kill-'));

  const db = new pg.Client({ connectionString: lode.databaseUrl });
  const git = (dir, ...args) =>
    run('git', ['-C', dir, '-c', 'user.name=b', '-c', 'user.email=b@x', ...args], { maxBuffer: 1 << 24 });
  try {
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
      await lode.kill();
      restarts.push(Math.round(await lode.restart()));
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
    receiver.close();
    await lode.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
