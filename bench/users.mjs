#!/usr/bin/env node
// Benchmark of the identity hot paths against the real, built server: token resolution (GET /user)
// and the users list at per_page=100 for an administrator and a non-administrator.
// Usage: npm run bench:users [-- --duration 10]. Starts Lode on a fresh database, seeds through the
// API, runs autocannon (closed model, 50 connections), prints a table, drops the database.
import autocannon from 'autocannon';
import { spawn, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

const duration = Number(process.argv[process.argv.indexOf('--duration') + 1]) || 10;
const root = new URL('..', import.meta.url).pathname;
execFileSync(process.execPath, [join(root, 'scripts/build-if-needed.cjs')], { stdio: 'inherit' });

const id = randomBytes(4).toString('hex');
const base = new URL(process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
const dbUrl = new URL(base); dbUrl.pathname = `/lode_bench_${id}`;
const port = 18000 + Math.floor(Math.random() * 1000);
const dataDir = mkdtempSync(join(tmpdir(), 'lode-bench-'));
const rootToken = `bench-root-${randomBytes(12).toString('hex')}`;
const server = spawn(process.execPath, [join(root, 'dist/apps/api/src/main.js')], {
  env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: dbUrl.toString(), LODE_DATA_DIR: dataDir,
    LODE_ROOT_TOKEN: rootToken, LODE_REDIS_PREFIX: `lode-bench-${id}`, LODE_LOG_LEVEL: 'warn', NODE_ENV: 'production' },
  stdio: ['ignore', 'inherit', 'inherit'],
});
const url = (p) => `http://127.0.0.1:${port}/api/v4${p}`;
const call = async (method, p, token, body) => {
  const res = await fetch(url(p), { method, headers: { 'PRIVATE-TOKEN': token, 'Content-Type': 'application/json' }, body: body && JSON.stringify(body) });
  if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${await res.text()}`);
  return res.json();
};

try {
  for (let i = 0; ; i++) {
    try { if ((await fetch(`http://127.0.0.1:${port}/-/health`)).ok) break; } catch {}
    if (i > 100) throw new Error('server did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
  const users = 200;
  for (let i = 0; i < users; i++) {
    await call('POST', '/users', rootToken, { username: `bench${i}`, email: `bench${i}@example.com`, name: `Bench ${i}`, password: 'bench-password' });
  }
  const { token: userToken } = await call('POST', '/users/2/impersonation_tokens', rootToken, { name: 'bench', scopes: ['api'] });
  const load = loadavg()[0];
  const workloads = [
    ['GET /user (token)', '/user', userToken],
    ['GET /users?per_page=100 (admin)', '/users?per_page=100', rootToken],
    ['GET /users?per_page=100 (user)', '/users?per_page=100', userToken],
  ];
  const rows = [];
  for (const [name, path, token] of workloads) {
    const r = await autocannon({ url: url(path), connections: 50, duration, headers: { 'PRIVATE-TOKEN': token } });
    rows.push({ workload: name, 'req/s': Math.round(r.requests.average), 'p50 ms': r.latency.p50, 'p90 ms': r.latency.p90, 'p99 ms': r.latency.p99,
      non2xx: r.non2xx, errors: r.errors });
  }
  console.log(`\n${new Date().toISOString()}  load average at start ${load.toFixed(2)}  ${users} users  ${duration} s each, 50 connections`);
  console.table(rows);
} finally {
  server.kill('SIGTERM');
  await new Promise((r) => server.once('exit', r));
  const admin = new pg.Client({ connectionString: base.toString() });
  await admin.connect();
  await admin.query(`drop database if exists "lode_bench_${id}" with (force)`);
  await admin.end();
  rmSync(dataDir, { recursive: true, force: true });
}
