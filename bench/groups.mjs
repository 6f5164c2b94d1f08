#!/usr/bin/env node
// Benchmark of the group and project reads issue 3 names: GET /groups/:id of a group holding 1,000
// projects, and the project lists at per_page=100, against the real, built server on a fresh
// database seeded through the API. Usage: npm run bench:groups [-- --duration 10].
import autocannon from 'autocannon';
import { loadavg } from 'node:os';
import { argument, startLode } from './support.mjs';

const duration = argument('duration', 10);
const projects = argument('projects', 1000);
const { url, call, rootToken, stop } = await startLode(19000);

try {
  const group = await call('POST', '/groups', rootToken, { name: 'Big', path: 'big', visibility: 'internal' });
  const user = await call('POST', '/users', rootToken, {
    username: 'member',
    email: 'member@example.com',
    name: 'Member',
    password: 'bench-password',
  });
  await call('POST', `/groups/${group.id}/members`, rootToken, { user_id: user.id, access_level: 30 });
  const { token } = await call('POST', `/users/${user.id}/impersonation_tokens`, rootToken, {
    name: 'bench',
    scopes: ['api'],
  });
  const started = Date.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < projects) {
        const i = next++;
        await call('POST', '/projects', rootToken, {
          name: `project ${i}`,
          namespace_id: group.id,
          visibility: i % 3 ? 'internal' : 'private',
        });
      }
    }),
  );
  const seedSeconds = (Date.now() - started) / 1000;
  const load = loadavg()[0];
  const workloads = [
    [`GET /groups/:id (${projects} projects), 1 connection`, `/groups/${group.id}`, 1],
    [`GET /groups/:id (${projects} projects)`, `/groups/${group.id}`, 10],
    ['GET /projects?per_page=100', '/projects?per_page=100', 10],
    ['GET /groups/:id/projects?per_page=100', `/groups/${group.id}/projects?per_page=100`, 10],
  ];
  const rows = [];
  for (const [name, path, connections] of workloads) {
    const r = await autocannon({ url: url(path), connections, duration, headers: { 'PRIVATE-TOKEN': token } });
    rows.push({
      workload: name,
      'req/s': Math.round(r.requests.average),
      'p50 ms': r.latency.p50,
      'p90 ms': r.latency.p90,
      'p99 ms': r.latency.p99,
      non2xx: r.non2xx,
      errors: r.errors,
    });
  }
  console.log(
    `\n${new Date().toISOString()}  load average at start ${load.toFixed(2)}  ${projects} projects seeded through the API in ${seedSeconds.toFixed(1)} s; ${duration} s each, 10 connections, non-admin member token`,
  );
  console.table(rows);
} finally {
  await stop();
}
