// The long fuzz run: `npm run fuzz` or `node bench/fuzz.mjs --requests 100000 [--seed 1] [--concurrency 8]`.
// Starts the built Lode in this process on a fresh database (and Redis prefix, and data directory),
// seeds a user, a group and projects, then sends seeded requests over every route it serves (see
// bench/fuzz-core.mjs). Fails (exit 1) on any 5xx, any request left unanswered, any error body that
// is not JSON, or anything logged at error level; prints the figures (`--json` for a JSON document).
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import Redis from 'ioredis';
import { fuzz, routesOf } from './fuzz-core.mjs';
import { argument } from './support.mjs';

const root = new URL('..', import.meta.url).pathname;
execFileSync(process.execPath, [join(root, 'scripts/build-if-needed.cjs')], { stdio: ['ignore', 2, 2] });
const require = createRequire(import.meta.url);
const { createHttpApp } = require(join(root, 'dist/apps/lode/src/http-app.js'));
const { MIGRATIONS } = require(join(root, 'dist/apps/lode/src/lode.module.js'));
const { LodeConfig, runMigrations } = require(join(root, 'dist/libs/platform/src/index.js'));
const { SeedRoot } = require(join(root, 'dist/libs/users/src/index.js'));
const { Logger } = require('@nestjs/common');
const { CommandBus } = require('@nestjs/cqrs');

const requests = argument('requests', 100_000);
const seed = argument('seed', 1);
const concurrency = argument('concurrency', 8);
const json = process.argv.includes('--json');

const id = randomBytes(4).toString('hex');
const base = new URL(process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
const config = new LodeConfig();
const dbUrl = new URL(base);
dbUrl.pathname = `/lode_fuzz_${id}`;
config.databaseUrl = dbUrl.toString();
config.redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
config.redisPrefix = `lode-fuzz-${id}`;
config.dataDir = mkdtempSync(join(tmpdir(), 'lode-fuzz-'));
config.rootToken = `fuzz-root-${randomBytes(12).toString('hex')}`;
config.externalUrl = 'http://lode.fuzz';
config.logLevel = 'error';
config.outboxPollMs = 200;

// Only errors are logged, and each one is a finding.
const logged = [];
Logger.overrideLogger(['error']);
Logger.prototype.error = (m) => void logged.push(String(m).slice(0, 1000));

await runMigrations(config, MIGRATIONS);
const app = await createHttpApp(config, { http: true, worker: true });
await app.init();
await app.get(CommandBus).execute(new SeedRoot());
const server = app.getHttpServer();
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const port = server.address().port;

const api = async (method, path, token, body) => {
  const res = await fetch(`http://127.0.0.1:${port}/api/v4${path}`, {
    method,
    headers: { 'PRIVATE-TOKEN': token, 'Content-Type': 'application/json' },
    body: body && JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json();
};
const user = await api('POST', '/users', config.rootToken, {
  username: 'fuzz-user',
  email: 'fuzz@example.com',
  name: 'Fuzz User',
  password: 'fuzz-password-123',
});
const { token: userToken } = await api('POST', `/users/${user.id}/impersonation_tokens`, config.rootToken, {
  name: 'fuzz',
  scopes: ['api'],
});
const group = await api('POST', '/groups', config.rootToken, {
  name: 'fuzz-group',
  path: 'fuzz-group',
  visibility: 'public',
});
await api('POST', '/projects', config.rootToken, {
  name: 'fuzz-project',
  path: 'fuzz-project',
  namespace_id: group.id,
});
await api('POST', '/projects', config.rootToken, { name: 'fuzz-root', path: 'fuzz-root', visibility: 'public' });

const routes = routesOf(app);
const started = performance.now();
const result = await fuzz({
  port,
  routes,
  tokens: [undefined, config.rootToken, config.rootToken, userToken, 'not-a-token'],
  requests,
  seed,
  concurrency,
  onProgress: json
    ? undefined
    : (done, failed) => process.stderr.write(`\r${done}/${requests} sent, ${failed} failures`),
});
const seconds = (performance.now() - started) / 1000;

await app.close();
const admin = new pg.Client({ connectionString: base.toString() });
await admin.connect();
await admin.query(`drop database if exists "lode_fuzz_${id}" with (force)`);
await admin.end();
const redis = new Redis(config.redisUrl);
for (let cursor = '0'; ;) {
  const [next, keys] = await redis.scan(cursor, 'MATCH', `${config.redisPrefix}:*`, 'COUNT', 500);
  if (keys.length) await redis.del(...keys);
  cursor = next;
  if (cursor === '0') break;
}
redis.disconnect();
rmSync(config.dataDir, { recursive: true, force: true });

const summary = {
  seed,
  requests,
  routes: routes.length,
  seconds: Math.round(seconds * 10) / 10,
  requestsPerSecond: Math.round(requests / seconds),
  statuses: result.statuses,
  failures: result.failures.length,
  errorsLogged: logged.length,
};
if (json)
  console.log(
    JSON.stringify({ ...summary, firstFailures: result.failures.slice(0, 20), logged: logged.slice(0, 20) }, null, 2),
  );
else {
  process.stderr.write('\n');
  console.log(summary);
  for (const f of result.failures.slice(0, 20)) console.log(f);
  for (const l of logged.slice(0, 20)) console.log(`logged: ${l}`);
}
process.exit(result.failures.length || logged.length ? 1 : 0);
