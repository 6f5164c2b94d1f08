#!/usr/bin/env node
// Bursts after quiet: PERF-12's load (100 project creations a second, each followed by a GET of the
// new project) on one server, first to warm it, then again after each of several quiet spells. Prints,
// for each burst's first seconds, the slowest answer and how many took over 250 ms (PERF-12's P99
// target). A server that answers its steady load well can still answer the first seconds of a burst
// slowly: whatever it let go while quiet (pooled connections, memory) it takes back under load.
//   node bench/quiet-burst.mjs
//   QUIET_MS=25000 BURSTS=4 WARM_S=20 BURST_S=6 node bench/quiet-burst.mjs
//   NODE_ARGS="--trace-gc" node bench/quiet-burst.mjs 2> gc.log   (a `=== burst` line marks each start)
// The server runs with the node options `npm start` uses, plus NODE_ARGS; its environment is this one's
// (LODE_IDLE_MEMORY_TRIM=false, say).
import { openLoad, send } from './open-load.mjs';
import { memoryMb, startLode } from './support.mjs';

const setting = (name, fallback) => Number(process.env[name] ?? fallback);
const quietMs = setting('QUIET_MS', 25_000);
const bursts = setting('BURSTS', 3);
const warmSeconds = setting('WARM_S', 20);
const burstSeconds = setting('BURST_S', 6);
const nodeArgs = (process.env.NODE_ARGS ?? '').split(/\s+/).filter(Boolean);

const lode = await startLode(21000, {}, nodeArgs, {});
const headers = { 'PRIVATE-TOKEN': lode.rootToken, 'Content-Type': 'application/json' };
const prefix = `burst-${Date.now().toString(36)}`;
let created = 0;

/** One burst; answers its per-second summary, `slowest ms/answers over 250 ms` for each second. */
async function burst(seconds) {
  console.error('=== burst');
  const answers = [];
  const result = await openLoad(lode.url('/projects'), {
    rate: 100,
    duration: seconds,
    arrive: async (due, record, agent) => {
      const post = await send(agent, lode.url('/projects'), {
        method: 'POST',
        headers,
        body: JSON.stringify({ name: `${prefix}-${created++}`, visibility: 'private' }),
      });
      answers.push([due, performance.now() - due]);
      record(post.status, performance.now() - due);
      if (post.status !== 201) return;
      const sent = performance.now();
      const read = await send(agent, lode.url(`/projects/${JSON.parse(post.body).id}`), { headers });
      answers.push([sent, performance.now() - sent]);
      record(read.status, performance.now() - sent);
    },
  });
  const start = Math.min(...answers.map(([at]) => at));
  const perSecond = [];
  for (let s = 0; s < Math.min(seconds, 5); s++) {
    const ms = answers.filter(([at]) => at - start >= s * 1000 && at - start < (s + 1) * 1000).map(([, took]) => took);
    perSecond.push(`${Math.round(Math.max(...ms))}/${ms.filter((took) => took > 250).length}`);
  }
  const failed = result.non2xx + result.errors ? `, ${result.non2xx} non-2xx, ${result.errors} errors` : '';
  return `${perSecond.join('  ')}   (P99 ${result.p99} ms${failed})`;
}

try {
  console.log(`warm-up, ${warmSeconds} s:`, await burst(warmSeconds));
  for (let i = 1; i <= bursts; i++) {
    const busy = Math.round(memoryMb(lode.pid).rss);
    await new Promise((resolve) => setTimeout(resolve, quietMs));
    const rested = Math.round(memoryMb(lode.pid).rss);
    console.log(`after ${quietMs / 1000} s of quiet (${i}, RSS ${busy} -> ${rested} MB):`, await burst(burstSeconds));
  }
} finally {
  await lode.stop();
}
