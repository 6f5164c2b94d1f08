#!/usr/bin/env node
// Benchmark of the identity hot paths against the real, built server: token resolution (GET /user)
// and the users list at per_page=100 for an administrator and a non-administrator.
// Usage: npm run bench:users [-- --duration 10]. Starts Lode on a fresh database, seeds through the
// API, runs autocannon (closed model, 50 connections), prints a table, drops the database.
import autocannon from 'autocannon';
import { loadavg } from 'node:os';
import { argument, startLode } from './support.mjs';

const duration = argument('duration', 10);
const { url, call, rootToken, stop } = await startLode(18000);

try {
  const users = 200;
  for (let i = 0; i < users; i++) {
    await call('POST', '/users', rootToken, {
      username: `bench${i}`,
      email: `bench${i}@example.com`,
      name: `Bench ${i}`,
      password: 'bench-password',
    });
  }
  const { token: userToken } = await call('POST', '/users/2/impersonation_tokens', rootToken, {
    name: 'bench',
    scopes: ['api'],
  });
  const load = loadavg()[0];
  const workloads = [
    ['GET /user (token)', '/user', userToken],
    ['GET /users?per_page=100 (admin)', '/users?per_page=100', rootToken],
    ['GET /users?per_page=100 (user)', '/users?per_page=100', userToken],
  ];
  const rows = [];
  for (const [name, path, token] of workloads) {
    const r = await autocannon({ url: url(path), connections: 50, duration, headers: { 'PRIVATE-TOKEN': token } });
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
    `\n${new Date().toISOString()}  load average at start ${load.toFixed(2)}  ${users} users  ${duration} s each, 50 connections`,
  );
  console.table(rows);
} finally {
  await stop();
}
