import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repositoryPath } from '@app/git';
import { writeFileSync } from 'node:fs';
import pg from 'pg';
import { git, gitOk } from '../support/git';
import {
  clearRedis,
  dropDatabase,
  eventually,
  freePort,
  TEST_PG,
  TEST_REDIS,
  describeOnServers,
} from '../support/test-app';

/**
 * What `npm start` and the admin command line do, run as real processes from the built dist/:
 * migrations on a fresh database, root's first token, restarts that change nothing, roles.
 */
const ROOT = process.cwd();
const MAIN = join(ROOT, 'dist/apps/lode/src/main.js');
const CLI = join(ROOT, 'dist/apps/lode/src/cli.js');

// Processes started with DATABASE_URL and REDIS_URL; embedded-process.e2e-spec.ts starts them without.
describeOnServers('processes: npm start and the admin command line', () => {
  const id = randomBytes(5).toString('hex');
  const url = new URL(TEST_PG);
  url.pathname = `/lode_proc_${id}`;
  const prefix = `lode-proc-${id}`;
  let dataDir: string;
  let port: number;
  let sshPort: number;
  let env: NodeJS.ProcessEnv;
  const children: ChildProcess[] = [];

  function start(extra: NodeJS.ProcessEnv = {}): ChildProcess {
    const child = spawn(process.execPath, [MAIN], { env: { ...env, ...extra }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout?.on('data', (d) => (output += d));
    child.stderr?.on('data', (d) => (output += d));
    (child as ChildProcess & { output: () => string }).output = () => output;
    children.push(child);
    return child;
  }

  async function stop(child: ChildProcess): Promise<void> {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }

  const api = (path: string, token?: string) =>
    fetch(`http://127.0.0.1:${port}${path}`, { headers: token ? { 'PRIVATE-TOKEN': token } : {} });
  const cli = (...args: string[]) =>
    execFileSync(process.execPath, [CLI, ...args], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

  beforeAll(async () => {
    if (!existsSync(MAIN))
      execFileSync(process.execPath, [join(ROOT, 'scripts/build-if-needed.cjs')], { stdio: 'inherit' });
    dataDir = await mkdtemp(join(tmpdir(), 'lode-proc-'));
    port = await freePort();
    sshPort = await freePort();
    env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: url.toString(),
      REDIS_URL: TEST_REDIS,
      LODE_REDIS_PREFIX: prefix,
      LODE_DATA_DIR: dataDir,
      LODE_LOG_LEVEL: 'log',
      LODE_SSH_PORT: String(sshPort),
      LODE_SSH_HOST: '127.0.0.1',
    };
  }, 120_000);

  afterAll(async () => {
    await Promise.all(children.map(stop));
    await dropDatabase(url.toString());
    await clearRedis(TEST_REDIS, prefix);
    await rm(dataDir, { recursive: true, force: true });
  });

  let rootToken: string;

  it('starts on an empty database, creates root and writes its first token once, readable by the owner only', async () => {
    const child = start();
    await eventually(async () => (await api('/-/readiness')).status === 200, 30_000, 200);
    const file = join(dataDir, 'initial_root_token');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    rootToken = readFileSync(file, 'utf8').trim();
    expect(rootToken).toMatch(/^[\w-]{20}$/);
    const me = await api('/api/v4/user', rootToken);
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ username: 'root', is_admin: true });
    // The token is logged by path, never by value.
    expect((child as ChildProcess & { output: () => string }).output()).toContain(file);
    expect((child as ChildProcess & { output: () => string }).output()).not.toContain(rootToken);
    // A server that never vacuums (this machine's CI PostgreSQL runs without autovacuum) is named at
    // start, in a warning; one that does is not mentioned.
    const server = new pg.Client({ connectionString: url.toString() });
    await server.connect();
    const { autovacuum } = (await server.query(`show autovacuum`)).rows[0] as { autovacuum: string };
    await server.end();
    const warned = (child as ChildProcess & { output: () => string })
      .output()
      .split('\n')
      .filter((line) => line.includes('autovacuum = off'));
    expect(warned).toHaveLength(autovacuum === 'on' ? 0 : 1);
    if (warned.length) expect(JSON.parse(warned[0])).toMatchObject({ level: 'warn' });
    await stop(child);
  }, 60_000);

  it('changes nothing on a restart', async () => {
    const mtime = statSync(join(dataDir, 'initial_root_token')).mtimeMs;
    const child = start();
    await eventually(async () => (await api('/-/health')).status === 200, 30_000, 200);
    const users = await api('/api/v4/users', rootToken);
    expect(users.headers.get('x-total')).toBe('1');
    expect(statSync(join(dataDir, 'initial_root_token')).mtimeMs).toBe(mtime);
    await stop(child);
  }, 60_000);

  it('registers LODE_ROOT_TOKEN for root when it is set later, once', async () => {
    const chosen = `chosen-${randomBytes(12).toString('hex')}`;
    const child = start({ LODE_ROOT_TOKEN: chosen });
    await eventually(async () => (await api('/-/health')).status === 200, 30_000, 200);
    expect((await api('/api/v4/user', chosen)).status).toBe(200);
    await stop(child);
  }, 60_000);

  it('create-token prints a token, once, that works with the scopes asked for', () => {
    const token = cli('create-token', '--user', 'root', '--scopes', 'read_user').trim();
    expect(token).toMatch(/^[\w-]{20}$/);
    return (async () => {
      const child = start({ LODE_ROLE: 'api' });
      await eventually(async () => (await api('/-/health')).status === 200, 30_000, 200);
      expect((await api('/api/v4/user', token)).status).toBe(200);
      expect((await api('/api/v4/version', token)).status).toBe(403); // read_user reaches only the users API
      await stop(child);
    })();
  }, 60_000);

  it('create-token refuses unknown users and scopes', () => {
    expect(() => cli('create-token', '--user', 'nobody', '--scopes', 'api')).toThrow(/no user nobody/);
    expect(() => cli('create-token', '--user', 'root', '--scopes', 'everything')).toThrow(/unknown scope/);
  });

  it('projections:rebuild replays every event and reports it on stdout', () => {
    const out = execFileSync(process.execPath, [CLI, 'projections:rebuild'], {
      env,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    expect(out).toMatch(
      /^rebuilt the read models from \d+ events in \d+\.\d s \(replay \d+\.\d s, vacuum and analyze \d+\.\d s\)\n$/,
    );
  });

  it('runs as a worker alone, with no HTTP server but its health port (LODE_WORKER_HEALTH_PORT)', async () => {
    const healthPort = await freePort();
    const child = start({ LODE_ROLE: 'worker', LODE_WORKER_HEALTH_PORT: String(healthPort) });
    await eventually(
      () => (child as ChildProcess & { output: () => string }).output().includes('Lode worker running'),
      30_000,
      200,
    );
    await expect(api('/-/health')).rejects.toThrow();
    const live = await fetch(`http://127.0.0.1:${healthPort}/-/liveness`);
    expect([live.status, await live.json()]).toEqual([200, { status: 'ok' }]);
    const ready = await fetch(`http://127.0.0.1:${healthPort}/-/readiness`);
    expect(ready.status).toBe(200);
    await stop(child);
    await expect(fetch(`http://127.0.0.1:${healthPort}/-/liveness`)).rejects.toThrow();
  }, 60_000);

  it('serves git over SSH, logs its host key fingerprints, and lets a running SSH exchange finish on SIGTERM', async () => {
    const child = start();
    await eventually(async () => (await api('/-/health')).status === 200, 30_000, 200);
    const output = () => (child as ChildProcess & { output: () => string }).output();
    expect(output()).toMatch(new RegExp(`git over SSH on 127\\.0\\.0\\.1:${sshPort}.*ssh-ed25519 SHA256:`));
    const keyDir = await mkdtemp(join(tmpdir(), 'lode-proc-key-'));
    try {
      const key = join(keyDir, 'id');
      execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', key]);
      const headers = { 'PRIVATE-TOKEN': rootToken, 'Content-Type': 'application/json' };
      const added = await fetch(`http://127.0.0.1:${port}/api/v4/user/keys`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ title: 'proc', key: readFileSync(`${key}.pub`, 'utf8').trim() }),
      });
      expect(added.status).toBe(201);
      const created = await fetch(`http://127.0.0.1:${port}/api/v4/projects`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ name: 'Over SSH' }),
      });
      const project = (await created.json()) as { path_with_namespace: string };
      const ssh = (command: string[]) =>
        spawn(
          'ssh',
          [
            ...['-F', '/dev/null', '-i', key, '-p', String(sshPort), '-o', 'IdentitiesOnly=yes', '-o', 'BatchMode=yes'],
            ...['-o', `UserKnownHostsFile=${join(keyDir, 'known_hosts')}`, '-o', 'StrictHostKeyChecking=accept-new'],
            'git@127.0.0.1',
            ...command,
          ],
          { stdio: ['pipe', 'pipe', 'pipe'] },
        );
      const exitOf = (c: ChildProcess) => new Promise<number | null>((r) => c.once('exit', (code) => r(code)));

      // upload-pack advertises its capabilities and waits for the client: an exchange in flight.
      const running = ssh([`git-upload-pack '${project.path_with_namespace}.git'`]);
      const runningExit = exitOf(running);
      await new Promise<void>((resolve) => running.stdout!.once('data', () => resolve()));
      const serverExit = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await eventually(() => output().includes('SIGTERM: stopping'), 10_000, 50);
      // No new connections while draining...
      const late = ssh([]);
      late.stdin!.end();
      expect(await exitOf(late)).toBe(255);
      // ...but the running one completes: a flush with no wants ends upload-pack cleanly.
      running.stdin!.end('0000');
      expect(await runningExit).toBe(0);
      await serverExit;
    } finally {
      await rm(keyDir, { recursive: true, force: true });
    }
  }, 60_000);

  it('closes the HTTP connections still running when the shutdown window ends, and stops', async () => {
    const child = start({ LODE_SHUTDOWN_TIMEOUT: '2', LODE_SSH_PORT: '0' });
    await eventually(async () => (await api('/-/health')).status === 200, 30_000, 200);
    const output = () => (child as ChildProcess & { output: () => string }).output();
    // A request whose body never finishes arriving (a slow push): it would keep the server forever.
    const socket = connect(port, '127.0.0.1');
    await new Promise<void>((r) => socket.once('connect', () => r()));
    const cut = new Promise<void>((r) => socket.once('close', () => r()));
    socket.on('error', () => undefined);
    socket.write(
      `POST /api/v4/projects HTTP/1.1\r\nHost: x\r\nPRIVATE-TOKEN: ${rootToken}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"name":',
    );
    await new Promise((r) => setTimeout(r, 300));
    const serverExit = new Promise((r) => child.once('exit', r));
    const signalled = Date.now();
    child.kill('SIGTERM');
    await Promise.all([serverExit, cut]);
    expect(Date.now() - signalled).toBeLessThan(8000);
    expect(Date.now() - signalled).toBeGreaterThanOrEqual(1900);
    expect(output()).toContain('closing the HTTP connections still open after 2 s');
  }, 60_000);

  it('records a push whose server was killed (kill -9) after its refs moved and before its record, once restarted', async () => {
    // The fault-injection pause holds the push between git's ref update and its RepositoryPushed.
    const child = start({ LODE_FAULT_PAUSE_BEFORE_PUSH_RECORD_MS: '60000', LODE_PUSH_RECONCILE_AFTER: '0' });
    await eventually(async () => (await api('/-/health')).status === 200, 30_000, 200);
    const created = await fetch(`http://127.0.0.1:${port}/api/v4/projects`, {
      method: 'POST',
      headers: { 'PRIVATE-TOKEN': rootToken, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'Killed Mid Push' }),
    });
    const project = (await created.json()) as { id: number; path_with_namespace: string };
    const work = await mkdtemp(join(tmpdir(), 'lode-proc-push-'));
    const db = new pg.Client({ connectionString: url.toString() });
    await db.connect();
    try {
      await gitOk(['init', '-q', '-b', 'master', work]);
      writeFileSync(join(work, 'a.txt'), 'a\n');
      await gitOk(['add', '.'], work);
      await gitOk(['commit', '-q', '-m', 'a'], work);
      const head = (await gitOk(['rev-parse', 'HEAD'], work)).trim();
      const pushing = git(
        ['push', `http://root:${rootToken}@127.0.0.1:${port}/${project.path_with_namespace}.git`, 'master'],
        work,
      );
      const repo = repositoryPath(dataDir, project.id);
      await eventually(
        async () => (await git(['--git-dir', repo, 'rev-parse', '--verify', 'refs/heads/master'])).status === 0,
        30_000,
        50,
      );
      const killed = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await killed;
      await pushing;
      const events = () =>
        db
          .query<{ data: { userId: number; updates: { ref: string; after: string }[] }; metadata: { origin: string } }>(
            `select data, metadata from events where type = 'RepositoryPushed' and (data->>'projectId')::int = $1`,
            [project.id],
          )
          .then((r) => r.rows);
      expect(await events()).toEqual([]);
      expect((await db.query(`select 1 from pending_pushes where project_id = $1`, [project.id])).rowCount).toBe(1);

      const again = start({ LODE_PUSH_RECONCILE_AFTER: '0' });
      await eventually(async () => (await events()).length === 1, 30_000, 250);
      const [event] = await events();
      expect(event.metadata.origin).toBe('reconciler');
      expect(event.data.updates).toEqual([expect.objectContaining({ ref: 'refs/heads/master', after: head })]);
      const me = (await (await api('/api/v4/user', rootToken)).json()) as { id: number };
      expect(event.data.userId).toBe(me.id);
      expect((await db.query(`select 1 from pending_pushes where project_id = $1`, [project.id])).rowCount).toBe(0);
      const seen = (await (await api(`/api/v4/projects/${project.id}`, rootToken)).json()) as {
        default_branch: string;
      };
      expect(seen.default_branch).toBe('master');
      await stop(again);
    } finally {
      await db.end();
      await rm(work, { recursive: true, force: true });
    }
  }, 120_000);

  // Issue 23: of two pushes to one branch whose server is killed before either is recorded, the
  // first was overtaken by the second, and was never announced: a hole in the branch's records.
  it('records both of two pushes to one branch, overtaken one first, after a kill -9 before either record', async () => {
    const child = start({ LODE_FAULT_PAUSE_BEFORE_PUSH_RECORD_MS: '60000', LODE_PUSH_RECONCILE_AFTER: '3600' });
    await eventually(async () => (await api('/-/health')).status === 200, 30_000, 200);
    const created = await fetch(`http://127.0.0.1:${port}/api/v4/projects`, {
      method: 'POST',
      headers: { 'PRIVATE-TOKEN': rootToken, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'Killed Twice' }),
    });
    const project = (await created.json()) as { id: number; path_with_namespace: string };
    const remote = `http://root:${rootToken}@127.0.0.1:${port}/${project.path_with_namespace}.git`;
    const repo = repositoryPath(dataDir, project.id);
    const work = await mkdtemp(join(tmpdir(), 'lode-proc-push-'));
    const db = new pg.Client({ connectionString: url.toString() });
    await db.connect();
    const commit = async (file: string) => {
      writeFileSync(join(work, file), `${file}\n`);
      await gitOk(['add', '.'], work);
      await gitOk(['commit', '-q', '-m', file], work);
      return (await gitOk(['rev-parse', 'HEAD'], work)).trim();
    };
    const holds = async (sha: string) =>
      (await git(['--git-dir', repo, 'rev-parse', '--verify', 'refs/heads/master'])).out.trim() === sha;
    try {
      await gitOk(['init', '-q', '-b', 'master', work]);
      const first = await commit('a.txt');
      // Both pushes move the ref and then wait, unrecorded (the fault-injection pause).
      const pushes = [git(['push', remote, 'master'], work)];
      await eventually(() => holds(first), 30_000, 50);
      const second = await commit('b.txt');
      pushes.push(git(['push', remote, 'master'], work));
      await eventually(() => holds(second), 30_000, 50);
      const killed = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await killed;
      await Promise.all(pushes);
      expect((await db.query(`select 1 from pending_pushes where project_id = $1`, [project.id])).rowCount).toBe(2);

      // The pushes are an hour from the reconciler's ordinary wait: taken because their process is gone.
      const again = start({ LODE_PUSH_RECONCILE_AFTER: '3600' });
      const moves = async () =>
        (
          await db.query<{ data: { updates: { ref: string; before: string; after: string }[] } }>(
            `select data from events where type = 'RepositoryPushed' and (data->>'projectId')::int = $1
              order by global_position`,
            [project.id],
          )
        ).rows.flatMap((e) => e.data.updates.map((u) => [u.before, u.after]));
      await eventually(async () => (await moves()).length >= 2, 30_000, 250);
      expect(await moves()).toEqual([
        ['0'.repeat(40), first],
        [first, second],
      ]);
      expect((await db.query(`select 1 from pending_pushes where project_id = $1`, [project.id])).rowCount).toBe(0);
      const fanouts = await db.query(`select 1 from outbox where name = 'push-fanout' and data->>'projectId' = $1`, [
        String(project.id),
      ]);
      expect(fanouts.rowCount).toBe(2);
      await stop(again);
    } finally {
      await db.end();
      await rm(work, { recursive: true, force: true });
    }
  }, 120_000);
});
