#!/usr/bin/env node
// Lode's benchmark harness (issue "Benchmarks"). Builds and starts Lode in production mode on a fresh
// database, seeds the deterministic dataset through the API, measures same-run baselines, runs each
// workload three times (the median counts), stops everything it started and prints a table.
//   npm run bench                   full run
//   npm run bench -- --quick        a short run (small dataset, one 3 s run per workload)
//   npm run bench -- --only PERF-1,PERF-6
//   npm run bench -- --only webhooks,events   (ids are case-insensitive)
//   npm run bench -- --json         one JSON document on stdout (progress goes to stderr)
//   npm run bench -- --split        the API and a worker as two processes (LODE_ROLE=api, worker)
//   npm run bench -- --cpu-prof DIR the server's processes write V8 CPU profiles into DIR
//   npm run bench -- --node-args "--max-semi-space-size=8"   options for the server's node
//   npm run bench -- --rounds 6     the selected workloads six times on one server, RSS after each
//   npm run bench -- --heap-snapshot DIR   the server writes a V8 heap snapshot into DIR at the end
//                                   (after the RSS is read), to see what its heap holds
//   LODE_BENCH_KEEP_DB=1 npm run bench ...   keep the run's database (lode_bench_<id>) to study its
//                                   outbox and read models afterwards; drop it yourself
//   LODE_BENCH_TIMELINE=FILE npm run bench ...   every open-load answer (sent at, took, status) into
//                                   FILE, to see when in a run the slow ones came
//   LODE_BENCH_LOG_LEVEL=info npm run bench ...  the server's log level (warn otherwise), with
//                                   2> FILE: its requests and background passes beside the timeline
import autocannon from 'autocannon';
import { fork } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { cpus, loadavg } from 'node:os';
import { SIZES, seedDataset } from './dataset.mjs';
import { openLoad } from './open-load.mjs';
import { memoryMb, startLode } from './support.mjs';
import { repository, WORKLOADS } from './workloads.mjs';

const args = process.argv.slice(2);
/**
 * A server's memory is judged at rest: right after a workload V8's heap is wherever its last
 * collection left it, and once the process idles it hands its spare pages back when it holds more
 * than 256 MB (LODE_IDLE_MEMORY_TRIM: two 2 s ticks of idle loop in a row after 5 s of work, so 4-6 s
 * after the workload ends, plus the collection's pause; 6 s raced it until 2026-12-02). Both figures
 * are logged.
 */
const REST_MS = 8000;

const quick = args.includes('--quick');
const json = args.includes('--json');
const split = args.includes('--split');
// `--cpu-prof DIR`: the server's processes write V8 CPU profiles there when they stop.
const profAt = args.indexOf('--cpu-prof');
const nodeArgs = profAt >= 0 ? ['--cpu-prof', `--cpu-prof-dir=${args[profAt + 1]}`] : [];
// `--node-args "--flag=1 --other"`: more options for the server's node (V8's heap settings, say).
const nodeArgsAt = args.indexOf('--node-args');
if (nodeArgsAt >= 0) nodeArgs.push(...args[nodeArgsAt + 1].split(/\s+/).filter(Boolean));
const snapshotAt = args.indexOf('--heap-snapshot');
const snapshotDir = snapshotAt >= 0 ? resolve(args[snapshotAt + 1]) : undefined;
if (snapshotDir) {
  mkdirSync(snapshotDir, { recursive: true });
  nodeArgs.push('--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${snapshotDir}`);
}
const onlyAt = args.indexOf('--only');
const only = onlyAt >= 0 ? new Set(args[onlyAt + 1].split(',').map((s) => s.trim().toUpperCase())) : undefined;
const log = (...m) => console.error(...m);

const settings = { quick, runs: quick ? 1 : 3, duration: quick ? 3 : 10, size: quick ? SIZES.quick : SIZES.full };
const load = loadavg()[0];
if (load > cpus().length * 0.5)
  log(`warning: load average ${load.toFixed(2)} at the start on ${cpus().length} cores: figures will be low`);

/**
 * The closed model (autocannon, `connections` callers each sending again as soon as answered), or
 * with `rate` the open model (open-load.mjs: a fixed, evenly spaced request rate).
 */
async function cannon(
  url,
  { connections = 50, duration = settings.duration, rate, headers = {}, method, body, requests } = {},
) {
  if (rate) return openLoad(url, { rate, duration, headers, method, body });
  const options = { url, connections, duration, headers, method, body, requests };
  // autocannon treats a key that is present but undefined as set (`undefined HTTP method`).
  for (const k of Object.keys(options)) if (options[k] === undefined) delete options[k];
  const r = await autocannon(options);
  return {
    rps: Math.round(r.requests.average),
    p50: r.latency.p50,
    p90: r.latency.p90,
    p99: r.latency.p99,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
    requests: r.requests.total,
  };
}

/** Runs a measurement `settings.runs` times and keeps the run with the median throughput (or latency). */
async function median(measure, key = 'rps') {
  const results = [];
  for (let i = 0; i < settings.runs; i++) results.push(await measure());
  results.sort((a, b) => a[key] - b[key]);
  return { ...results[Math.floor(results.length / 2)], runs: results.length };
}

/** A baseline server in its own process: `b0`, `b1` (with a database URL) or `git` (with a directory of bare repositories). */
async function baselineServer(mode, target) {
  const port = 17000 + Math.floor(Math.random() * 1000);
  const child = fork(new URL('./baseline-server.mjs', import.meta.url).pathname, [mode, String(port), target ?? ''], {
    stdio: 'ignore',
  });
  await new Promise((resolve) => child.once('message', resolve));
  return { url: `http://127.0.0.1:${port}/`, stop: () => child.kill() };
}

// Webhook workloads deliver to a receiver on this machine's loopback.
// LODE_SSH_PORT: the server's SSH port (SSH-CLONE), near its HTTP port.
const lode = await startLode(20000, { LODE_ALLOW_LOCAL_WEBHOOKS: 'true' }, nodeArgs, { ssh: true, split });
log(`Lode ready in ${Math.round(lode.readyMs)} ms (pid ${lode.pid}${split ? `, worker pid ${lode.workerPid}` : ''})`);
const results = [];
let ctx;
try {
  const selected = WORKLOADS.filter((w) => !only || only.has(w.id));
  // Workloads on the synthetic repository bring their own data; the users, groups and projects
  // dataset is seeded only when a selected workload reads it.
  const needsDataset = selected.some((w) => !w.ownDataset);
  const dataset = needsDataset
    ? await seedDataset(lode.call, lode.rootToken, settings.size, (m) => log(`seeded ${m}`))
    : {
        seconds: 0,
        publicProject: await lode.call('POST', '/projects', lode.rootToken, { name: 'Baseline', visibility: 'public' }),
      };
  log(`dataset seeded in ${dataset.seconds.toFixed(0)} s`);
  ctx = {
    lode,
    dataset,
    settings,
    cannon,
    openLoad,
    median,
    memoryMb,
    baselines: {},
    baselineServer,
    syntheticRepository: repository,
    log,
  };

  // Baselines first, in the same run, because this machine's speed swings from one run to the next.
  for (const [id, mode] of [
    ['B0', 'b0'],
    ['B1', 'b1'],
  ]) {
    const server = await baselineServer(mode, lode.databaseUrl);
    try {
      const url = mode === 'b1' ? `${server.url}?id=${dataset.publicProject.id}` : server.url;
      ctx.baselines[id] = await median(() => cannon(url));
      log(`${id}: ${ctx.baselines[id].rps} req/s`);
    } finally {
      server.stop();
    }
  }

  // `--rounds N`: the selected workloads N times on the same server, the memory after each round
  // (issue 23: no growth over six rounds).
  const roundsAt = args.indexOf('--rounds');
  const rounds = roundsAt >= 0 ? Number(args[roundsAt + 1]) : 1;
  for (let round = 1; round <= rounds; round++) {
    for (const w of selected) {
      log(`${w.id}: ${w.name}`);
      try {
        const figures = await w.run(ctx);
        // PERF-16 judges the footprint after PERF-1..3 (the API's reads), before repository work.
        if (w.id === 'PERF-3') {
          ctx.rssAfterReadsAtOnceMb = memoryMb(lode.pid).rss;
          log(`after PERF-3: ${await memoryFigures(lode)}`);
          ctx.rssAfterReadsMb = (await memoryAtRest(lode)).rss;
          log(`after PERF-3, ${REST_MS / 1000} s at rest: ${await memoryFigures(lode)}`);
        }
        // Every workload's mark on the server's memory, to find which one raises the end's figure.
        log(`  after ${w.id}: ${await memoryFigures(lode)}`);
        const verdict = w.check(figures, ctx);
        results.push({ id: w.id, name: w.name, target: w.target, figures, ...verdict });
      } catch (err) {
        results.push({
          id: w.id,
          name: w.name,
          target: w.target,
          figures: {},
          met: false,
          detail: `failed: ${err.message}`,
        });
      }
    }
    if (rounds > 1) log(`after round ${round} of ${rounds}: ${await memoryFigures(lode)}`);
  }
  const atOnce = memoryMb(lode.pid);
  log(`at the end: ${await memoryFigures(lode)}`);
  const rss = await memoryAtRest(lode);
  log(`at the end, ${REST_MS / 1000} s at rest: ${await memoryFigures(lode)}`);
  if (snapshotDir) log(`heap snapshot: ${await heapSnapshot(lode.pid, snapshotDir)}`);
  const document = {
    date: new Date().toISOString(),
    quick,
    layout: split ? 'api + worker processes' : 'one process',
    loadAverageAtStart: load,
    cores: cpus().length,
    readyMs: Math.round(lode.readyMs),
    residentMb: Math.round(rss.rss),
    residentAtOnceMb: Math.round(atOnce.rss),
    dataset: needsDataset ? { ...settings.size, seedSeconds: Math.round(dataset.seconds) } : 'repository only',
    baselines: ctx.baselines,
    workloads: results,
  };
  if (json) process.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
  else {
    console.log(
      `\n${document.date}  ${document.layout}  load ${load.toFixed(2)}  ready ${document.readyMs} ms  RSS ${document.residentMb} MB  ${quick ? 'quick' : 'full'} run`,
    );
    console.log(`B0 ${ctx.baselines.B0.rps} req/s   B1 ${ctx.baselines.B1.rps} req/s`);
    console.table(
      results.map((r) => ({
        id: r.id,
        workload: r.name,
        target: r.target,
        result: r.detail,
        met: r.met ? 'yes' : 'NO',
      })),
    );
  }
} finally {
  await lode.stop();
  // The synthetic repository's source (up to 100 MB in the temporary directory), when a workload made it.
  const made = await ctx?.repository?.catch(() => undefined);
  if (made) rmSync(made.source, { recursive: true, force: true });
}

/**
 * Asks the server for a heap snapshot (SIGUSR2, `--heapsnapshot-signal`) and waits until its file in
 * `dir` stops growing: V8 writes it on the main thread, some seconds for a heap of 150 MB.
 */
async function heapSnapshot(pid, dir) {
  const before = new Set(readdirSync(dir));
  process.kill(pid, 'SIGUSR2');
  let last = -1;
  for (let waited = 0; waited < 120_000; waited += 1000) {
    await new Promise((r) => setTimeout(r, 1000));
    const file = readdirSync(dir).find((f) => f.endsWith('.heapsnapshot') && !before.has(f));
    if (!file) continue;
    const size = statSync(join(dir, file)).size;
    if (size > 0 && size === last) return join(dir, file);
    last = size;
  }
  return 'not written within 120 s';
}

/** The server's memory (memoryMb's figures) once it has been left alone for REST_MS. */
async function memoryAtRest(lode) {
  await new Promise((r) => setTimeout(r, REST_MS));
  return memoryMb(lode.pid);
}

/** The server's RSS (anonymous and file pages) and V8's heap (used of total, from its metrics), in MB. */
async function memoryFigures(lode) {
  const m = memoryMb(lode.pid);
  const rss = `RSS ${Math.round(m.rss)} MB (anonymous ${Math.round(m.anon)}, files ${Math.round(m.file)})`;
  return `${rss}; ${await heapFigures(lode)}`;
}

/** V8's heap (used of total) and memory outside it, from the server's metrics, in MB. */
async function heapFigures(lode) {
  try {
    const text = await (
      await fetch(lode.url('/x').replace(/\/api\/v4\/x$/, '/-/metrics'), {
        headers: { 'PRIVATE-TOKEN': lode.rootToken },
      })
    ).text();
    // A metric's value, summed over its labelled series (the trims count by what came after the burst; none yet is 0).
    const value = (name) =>
      [...text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'gm'))].reduce(
        (sum, m) => sum + Number(m[1]),
        0,
      );
    const mb = (name) => Math.round(value(name) / 1048576);
    // The memory trims so far (after idle loop or light traffic): how many, what they gave back, and how long they held the loop.
    const trims = `${value('lode_idle_memory_trims_total')} memory trims (${mb('lode_idle_memory_trimmed_bytes_total')} MB, ${Math.round(value('lode_idle_memory_trim_seconds_total') * 1000)} ms)`;
    return `V8 heap ${mb('nodejs_heap_size_used_bytes')} of ${mb('nodejs_heap_size_total_bytes')} MB, external ${mb('nodejs_external_memory_bytes')} MB; ${trims}`;
  } catch (err) {
    return `metrics unreadable: ${err.message}`;
  }
}
