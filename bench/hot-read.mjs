#!/usr/bin/env node
// PERF-1's hot read with and without the cache of public project answers, against B1, in one run:
// two Lode servers on one database (LODE_PROJECT_CACHE_BYTES unset, and 0), the B1 baseline server
// on the same database, measured in turns (B1, cached, uncached, then again) so a machine whose speed
// swings treats each alike. Also the same read with a member's token on both.
// Usage: node bench/hot-read.mjs [--duration 10] [--rounds 3]
import autocannon from 'autocannon';
import { fork } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { argument, startLode } from './support.mjs';

const duration = Number(argument('duration', 10));
const rounds = Number(argument('rounds', 3));
const log = (...m) => console.error(...m);
const loads = [loadavg()[0]];

async function measure(url, headers = {}) {
  const r = await autocannon({ url, connections: 50, duration, headers });
  loads.push(loadavg()[0]);
  return {
    rps: Math.round(r.requests.average),
    p50: r.latency.p50,
    p99: r.latency.p99,
    bad: r.non2xx + r.errors + r.timeouts,
  };
}

/** startLode gives a server 12 s to be ready; on a machine shared with other work that may be too short once. */
async function start(portBase, env) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startLode(portBase, env);
    } catch (err) {
      if (attempt >= 3) throw err;
      log(`${String(err)}; again`);
    }
  }
}

const cached = await start(22000, {});
// The second server uses the first one's database: the same project, the same data.
const uncached = await start(23000, { LODE_PROJECT_CACHE_BYTES: '0', DATABASE_URL: cached.databaseUrl });
let b1;
try {
  const p = await cached.call('POST', '/projects', cached.rootToken, { name: 'Hot', visibility: 'public' });
  const port = 24000 + Math.floor(Math.random() * 1000);
  b1 = fork(new URL('./baseline-server.mjs', import.meta.url).pathname, ['b1', String(port), cached.databaseUrl], {
    stdio: 'ignore',
  });
  await new Promise((resolve) => b1.once('message', resolve));
  const targets = {
    B1: () => measure(`http://127.0.0.1:${port}/?id=${p.id}`),
    cached: () => measure(cached.url(`/projects/${p.id}`)),
    uncached: () => measure(uncached.url(`/projects/${p.id}`)),
    'cached, root token': () => measure(cached.url(`/projects/${p.id}`), { 'PRIVATE-TOKEN': cached.rootToken }),
    'uncached, root token': () => measure(uncached.url(`/projects/${p.id}`), { 'PRIVATE-TOKEN': cached.rootToken }),
  };
  const results = Object.fromEntries(Object.keys(targets).map((k) => [k, []]));
  for (let round = 0; round < rounds; round++)
    for (const [name, run] of Object.entries(targets)) {
      const f = await run();
      results[name].push(f);
      log(`round ${round + 1} ${name}: ${f.rps} req/s, P50/P99 ${f.p50}/${f.p99} ms${f.bad ? `, ${f.bad} bad` : ''}`);
    }
  const median = (list) => [...list].sort((a, b) => a.rps - b.rps)[Math.floor(list.length / 2)];
  const b1rps = median(results.B1).rps;
  console.log(
    `cores ${cpus().length}, load ${loads[0].toFixed(2)} at start, ${Math.min(...loads).toFixed(2)}-${Math.max(...loads).toFixed(2)} while measuring; ${rounds} rounds of ${duration} s, 50 connections`,
  );
  for (const [name, list] of Object.entries(results)) {
    const m = median(list);
    console.log(
      `${name.padEnd(22)} ${String(m.rps).padStart(6)} req/s  P50/P99 ${m.p50}/${m.p99} ms  ${(m.rps / b1rps).toFixed(2)} x B1  (each round: ${list.map((f) => f.rps).join(', ')})`,
    );
  }
} finally {
  b1?.kill();
  await uncached.stop();
  await cached.stop();
}
