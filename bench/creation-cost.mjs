#!/usr/bin/env node
// What a project creation costs the machine: PERF-12's load (project creations at RATE a second by a
// member, each followed by a GET of the new project) on a fresh server, warmed for WARM_S seconds,
// then measured for MEASURE_S: the answers' P50/P90/P99 and the machine's busy CPU time (both cores:
// the server, PostgreSQL, git and this harness, from /proc/stat) per creation. Steadier than PERF-12's
// P99 when two builds are compared on one machine (run each a few times, alternating).
//   node bench/creation-cost.mjs
//   RATE=150 WARM_S=10 MEASURE_S=30 node bench/creation-cost.mjs
//   NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" node bench/creation-cost.mjs   (the server's CPU profile)
import { openLoad, send } from './open-load.mjs';
import { readdirSync, readFileSync } from 'node:fs';
import { machineBusyMs, startLode } from './support.mjs';

/** CPU ms (user + system) a process has used so far, and its children waited for; 0 once it is gone. */
function processCpuMs(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'latin1').split(') ')[1].split(' ');
    // utime, stime, cutime, cstime: fields 14-17 of proc(5), here 11-14 after the name; ticks of 10 ms.
    return fields.slice(11, 15).reduce((sum, ticks) => sum + Number(ticks), 0) * 10;
  } catch {
    return 0;
  }
}

/** CPU ms used so far by the processes of the `postgres` user (PostgreSQL's backends and workers). */
function postgresCpuMs() {
  let sum = 0;
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name)))
    try {
      if (/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'latin1'))?.[1] === postgresUid)
        sum += processCpuMs(pid);
    } catch {
      // gone meanwhile
    }
  return sum;
}
const postgresUid = /^postgres:[^:]*:(\d+):/m.exec(readFileSync('/etc/passwd', 'latin1'))?.[1];

const setting = (name, fallback) => Number(process.env[name] ?? fallback);
const rate = setting('RATE', 100);
const warmSeconds = setting('WARM_S', 10);
const measureSeconds = setting('MEASURE_S', 30);

const lode = await startLode(23000, {}, (process.env.NODE_ARGS ?? '').split(/\s+/).filter(Boolean), {});
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
  const sample = () => ({
    busy: machineBusyMs(),
    server: processCpuMs(lode.pid),
    postgres: postgresCpuMs(),
    harness: processCpuMs(process.pid),
  });
  const before = { ...sample(), created: n };
  const result = await load(measureSeconds);
  const after = sample();
  const created = n - before.created;
  const per = (key) => Math.round(((after[key] - before[key]) / created) * 10) / 10;
  // What the machine spent beyond the three: git, the kernel's own threads, whatever else runs.
  const rest = Math.round((per('busy') - per('server') - per('postgres') - per('harness')) * 10) / 10;
  console.log(
    JSON.stringify({
      rate,
      seconds: measureSeconds,
      created,
      ...result,
      cpuMsPerCreation: {
        machine: per('busy'),
        server: per('server'),
        postgres: per('postgres'),
        harness: per('harness'),
        rest,
      },
    }),
  );
} finally {
  await lode.stop();
}
