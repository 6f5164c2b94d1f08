// What every benchmark needs: the built server started on a fresh database (its own Redis prefix
// and data directory), a JSON client, and a teardown that leaves nothing behind.
import { execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';

export const argument = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) || fallback : fallback;
};

/** Where Lode keeps a project's bare repository (libs/git's repositoryPath: hashed storage). */
export function repositoryDir(dataDir, projectId) {
  const hash = createHash('sha256').update(String(projectId)).digest('hex');
  return join(dataDir, 'repositories', '@hashed', hash.slice(0, 2), hash.slice(2, 4), `${hash}.git`);
}

/** The process's resident memory now and at its peak, in MB (Linux `/proc`). */
export function memoryMb(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key) => parseInt(new RegExp(`${key}:\\s+(\\d+) kB`).exec(status)?.[1] ?? '0', 10);
  return {
    rss: kb('VmRSS') / 1024,
    peak: kb('VmHWM') / 1024,
    // Anonymous memory (V8's heap, malloc) and file pages mapped (code, libgit2's pack windows).
    anon: kb('RssAnon') / 1024,
    file: kb('RssFile') / 1024,
  };
}

/**
 * `options.ssh`: serve git over SSH on `port + 1` (`sshPort`); otherwise no SSH server. `options.pgPort`,
 * `options.split`: see below. `options.dist`: run another checkout's built dist/ (a baseline), as it
 * is; otherwise this checkout's, built first if needed. `options.quiet`: drop the server's output
 * (a bench that kills it on purpose). The answer's `kill()` ends the processes with SIGKILL and
 * `restart()` starts them again on the same database, data directory and port (resolving with the
 * milliseconds until ready).
 */
export async function startLode(portBase, extraEnv = {}, nodeArgs = [], options = {}) {
  const root = new URL('..', import.meta.url).pathname;
  if (!options.dist)
    execFileSync(process.execPath, [join(root, 'scripts/build-if-needed.cjs')], { stdio: ['ignore', 2, 2] });
  const id = randomBytes(4).toString('hex');
  const base = new URL(process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
  const dbUrl = new URL(base);
  dbUrl.pathname = `/lode_bench_${id}`;
  // `options.pgPort`: reach PostgreSQL through another port (a fault-injecting proxy).
  if (options.pgPort) dbUrl.port = String(options.pgPort);
  const port = portBase + Math.floor(Math.random() * 1000);
  const dataDir = mkdtempSync(join(tmpdir(), 'lode-bench-'));
  const rootToken = `bench-root-${randomBytes(12).toString('hex')}`;
  // `options.split`: the API (`LODE_ROLE=api`) and a worker (`LODE_ROLE=worker`) as two processes on
  // one database and Redis, the layout README's scale-out describes; otherwise one process (`all`).
  const env = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATABASE_URL: dbUrl.toString(),
    // The production layout (PostgreSQL and Redis) unless a bench asks for another.
    REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
    LODE_DATA_DIR: dataDir,
    LODE_ROOT_TOKEN: rootToken,
    LODE_REDIS_PREFIX: `lode-bench-${id}`,
    LODE_LOG_LEVEL: process.env.LODE_BENCH_LOG_LEVEL ?? 'warn',
    LODE_SSH_PORT: options.ssh ? String(port + 1) : '0',
    LODE_SSH_HOST: '127.0.0.1',
    NODE_ENV: 'production',
    ...extraEnv,
  };
  const main = join(options.dist ?? root, 'dist/apps/lode/src/main.js');
  // The node options `npm start` runs the server with (V8's heap settings), as an operator runs it.
  const startWords = JSON.parse(readFileSync(join(options.dist ?? root, 'package.json'), 'utf8')).scripts.start.split(
    /\s+/,
  );
  const startOptions = startWords.filter((word) => word.startsWith('--'));
  // And the environment it sets before `node` (glibc's malloc settings), each `NAME=${NAME:-default}`
  // as the shell reads it: the default unless this environment has its own (which `env` below keeps).
  const startEnv = Object.fromEntries(
    startWords
      .slice(0, Math.max(0, startWords.indexOf('node')))
      .filter((word) => /^[A-Z_][A-Z0-9_]*=/.test(word))
      .map((word) => word.split(/=(.*)/s).slice(0, 2))
      .map(([name, value]) => [name, value.replace(/^\$\{[A-Z_][A-Z0-9_]*:-(.*)\}$/s, '$1')]),
  );
  // The server's log goes to stderr, so `--json` leaves stdout to the JSON document.
  const stdio = options.quiet ? 'ignore' : ['ignore', 2, 2];
  let server;
  let worker;
  let spawnedAt;
  const spawnAll = () => {
    spawnedAt = performance.now();
    server = spawn(process.execPath, [...startOptions, ...nodeArgs, main], {
      env: { ...startEnv, ...env, ...(options.split ? { LODE_ROLE: 'api' } : {}) },
      stdio,
    });
    worker = options.split
      ? spawn(process.execPath, [...startOptions, ...nodeArgs, main], {
          env: { ...startEnv, ...env, LODE_ROLE: 'worker' },
          stdio,
        })
      : undefined;
  };
  const alive = (p) => p && p.exitCode === null && p.signalCode === null;
  const end = async (signal) => {
    for (const p of [server, worker]) {
      if (!alive(p)) continue;
      const exited = new Promise((r) => p.once('exit', r));
      p.kill(signal);
      await exited;
    }
  };
  const url = (p) => `http://127.0.0.1:${port}/api/v4${p}`;
  const call = async (method, p, token, body) => {
    const res = await fetch(url(p), {
      method,
      headers: { 'PRIVATE-TOKEN': token, 'Content-Type': 'application/json' },
      body: body && JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  const stop = async () => {
    await end('SIGTERM');
    const admin = new pg.Client({ connectionString: base.toString() });
    await admin.connect();
    if (!process.env.LODE_BENCH_KEEP_DB) await admin.query(`drop database if exists "lode_bench_${id}" with (force)`);
    await admin.end();
    // The run's queues too (BullMQ keeps up to 10,000 finished jobs a queue): nothing is left behind.
    // Best effort: a bench run in embedded mode may have no Redis to clean.
    const redis = new Redis(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379', {
      lazyConnect: true,
      maxRetriesPerRequest: 1,
      retryStrategy: () => null,
    });
    try {
      await redis.connect();
      for await (const keys of redis.scanStream({ match: `lode-bench-${id}:*`, count: 1000 }))
        if (keys.length) await redis.del(...keys);
    } catch {
      // no Redis here
    } finally {
      redis.disconnect();
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  const ready = async () => {
    for (;;) {
      try {
        if ((await fetch(`http://127.0.0.1:${port}/-/readiness`)).ok) return performance.now() - spawnedAt;
      } catch {
        // not listening yet
      }
      // 90 s: on the shared 2-core machine at load 15 the server took 20 s to be ready.
      if (performance.now() - spawnedAt > 90_000) {
        await stop();
        throw new Error('server did not start');
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  spawnAll();
  const readyMs = await ready();
  return {
    url,
    call,
    rootToken,
    stop,
    port,
    sshPort: options.ssh ? port + 1 : undefined,
    kill: () => end('SIGKILL'),
    restart: async () => {
      spawnAll();
      return ready();
    },
    // Getters: a restart starts new processes.
    get pid() {
      return server.pid;
    },
    get workerPid() {
      return worker?.pid;
    },
    readyMs,
    dataDir,
    databaseUrl: dbUrl.toString(),
    origin: `http://127.0.0.1:${port}`,
  };
}

/** The machine's busy CPU time so far (every core, idle and I/O wait left out), from /proc/stat. */
export function machineBusyMs() {
  const [, user, nice, system, , , irq, softirq, steal] = readFileSync('/proc/stat', 'latin1')
    .split('\n', 1)[0]
    .trim()
    .split(/\s+/)
    .map(Number);
  // USER_HZ is 100 on Linux: ten milliseconds a tick.
  return (user + nice + system + irq + softirq + steal) * 10;
}
