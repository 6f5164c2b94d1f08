#!/usr/bin/env node
// Benchmark of the group and project reads issue 3 names: GET /groups/:id of a group holding 1,000
// projects, and the project lists at per_page=100, against the real, built server on a fresh
// database seeded through the API. Usage: npm run bench:groups [-- --duration 10].
import autocannon from 'autocannon';
import { spawn, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

const duration = Number(process.argv[process.argv.indexOf('--duration') + 1]) || 10;
const projects = Number(process.argv[process.argv.indexOf('--projects') + 1]) || 1000;
const root = new URL('..', import.meta.url).pathname;
execFileSync(process.execPath, [join(root, 'scripts/build-if-needed.cjs')], { stdio: 'inherit' });

const id = randomBytes(4).toString('hex');
const base = new URL(process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
const dbUrl = new URL(base); dbUrl.pathname = `/lode_bench_${id}`;
const port = 19000 + Math.floor(Math.random() * 1000);
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
  const group = await call('POST', '/groups', rootToken, { name: 'Big', path: 'big', visibility: 'internal' });
  const user = await call('POST', '/users', rootToken, { username: 'member', email: 'member@example.com', name: 'Member', password: 'bench-password' });
  await call('POST', `/groups/${group.id}/members`, rootToken, { user_id: user.id, access_level: 30 });
  const { token } = await call('POST', `/users/${user.id}/impersonation_tokens`, rootToken, { name: 'bench', scopes: ['api'] });
  const started = Date.now();
  let next = 0;
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (next < projects) {
      const i = next++;
      await call('POST', '/projects', rootToken, { name: `project ${i}`, namespace_id: group.id, visibility: i % 3 ? 'internal' : 'private' });
    }
  }));
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
    rows.push({ workload: name, 'req/s': Math.round(r.requests.average), 'p50 ms': r.latency.p50, 'p90 ms': r.latency.p90, 'p99 ms': r.latency.p99,
      non2xx: r.non2xx, errors: r.errors });
  }
  console.log(`\n${new Date().toISOString()}  load average at start ${load.toFixed(2)}  ${projects} projects seeded through the API in ${seedSeconds.toFixed(1)} s; ${duration} s each, 10 connections, non-admin member token`);
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
