#!/usr/bin/env node
// What a project creation costs the machine: PERF-12's load (project creations at RATE a second by a
// member, each followed by a GET of the new project) on a fresh server, warmed for WARM_S seconds,
// then measured for MEASURE_S: the answers' P50/P90/P99 and the machine's busy CPU time (both cores:
// the server, PostgreSQL, git and this harness, from /proc/stat) per creation. Steadier than PERF-12's
// P99 when two builds are compared on one machine (run each a few times, alternating).
//   node bench/creation-cost.mjs
//   RATE=150 WARM_S=10 MEASURE_S=30 node bench/creation-cost.mjs
import { openLoad, send } from './open-load.mjs';
import { machineBusyMs, startLode } from './support.mjs';

const setting = (name, fallback) => Number(process.env[name] ?? fallback);
const rate = setting('RATE', 100);
const warmSeconds = setting('WARM_S', 10);
const measureSeconds = setting('MEASURE_S', 30);

const lode = await startLode(23000, {}, [], {});
try {
  const admin = { 'PRIVATE-TOKEN': lode.rootToken, 'Content-Type': 'application/json' };
  const suffix = Date.now().toString(36);
  const user = await send(undefined, lode.url('/users'), {
    method: 'POST',
    headers: admin,
    body: JSON.stringify({
      username: `member-${suffix}`,
      name: 'Member',
      email: `member-${suffix}@example.com`,
      password: `pw-${suffix}-${suffix}`,
      skip_confirmation: true,
    }),
  });
  if (user.status !== 201) throw new Error(`creating the member: ${user.status} ${user.body}`);
  const token = await send(undefined, lode.url(`/users/${JSON.parse(user.body).id}/personal_access_tokens`), {
    method: 'POST',
    headers: admin,
    body: JSON.stringify({ name: 'bench', scopes: ['api'] }),
  });
  if (token.status !== 201) throw new Error(`creating the member's token: ${token.status} ${token.body}`);
  const headers = { 'PRIVATE-TOKEN': JSON.parse(token.body).token, 'Content-Type': 'application/json' };
  let n = 0;
  const load = (seconds) =>
    openLoad(lode.url('/projects'), {
      rate,
      duration: seconds,
      arrive: async (due, record, agent) => {
        const post = await send(agent, lode.url('/projects'), {
          method: 'POST',
          headers,
          body: JSON.stringify({ name: `cost-${suffix}-${n++}`, visibility: 'private' }),
        });
        record(post.status, performance.now() - due);
        if (post.status !== 201) return;
        const sent = performance.now();
        const read = await send(agent, lode.url(`/projects/${JSON.parse(post.body).id}`), { headers });
        record(read.status, performance.now() - sent);
      },
    });
  await load(warmSeconds);
  const before = { busy: machineBusyMs(), created: n };
  const result = await load(measureSeconds);
  const created = n - before.created;
  const cpuMsPerCreation = Math.round(((machineBusyMs() - before.busy) / created) * 10) / 10;
  console.log(JSON.stringify({ rate, seconds: measureSeconds, created, ...result, cpuMsPerCreation }));
} finally {
  await lode.stop();
}
