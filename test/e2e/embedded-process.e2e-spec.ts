import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedPostgres } from '@app/platform';
import { gitOk, tempDirs } from '../support/git';
import { eventually, freePort } from '../support/test-app';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

/**
 * README's quick start, `npm start` with neither DATABASE_URL nor REDIS_URL: the built server as a
 * real process on the embedded default (PGlite over its socket, the queues on BullMQ's PostgreSQL
 * backend), with a push, its webhook, the command line beside it, a restart, and a kill -9.
 */
const ROOT = process.cwd();
const MAIN = join(ROOT, 'dist/apps/lode/src/main.js');
const CLI = join(ROOT, 'dist/apps/lode/src/cli.js');

type Child = ChildProcess & { output: () => string };

describe('npm start with nothing installed (embedded mode)', () => {
  const dirs = tempDirs();
  let dataDir: string;
  let port: number;
  let env: NodeJS.ProcessEnv;
  let receiver: WebhookReceiver;
  const children: Child[] = [];

  function start(): Child {
    const child = spawn(process.execPath, [MAIN], { env, stdio: ['ignore', 'pipe', 'pipe'] }) as Child;
    let output = '';
    child.stdout?.on('data', (d) => (output += d));
    child.stderr?.on('data', (d) => (output += d));
    child.output = () => output;
    children.push(child);
    return child;
  }

  async function stop(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    child.kill(signal);
    return exited;
  }

  const api = (path: string, token: string, init: RequestInit = {}) =>
    fetch(`http://127.0.0.1:${port}/api/v4${path}`, {
      ...init,
      headers: { 'PRIVATE-TOKEN': token, 'Content-Type': 'application/json' },
    });
  const ready = () =>
    eventually(async () => (await fetch(`http://127.0.0.1:${port}/-/readiness`)).status === 200, 60_000, 200);
  const lode = (args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
      execFile(process.execPath, [CLI, ...args], { env, encoding: 'utf8' }, (err, stdout, stderr) =>
        resolve({ code: err ? Number(err.code) : 0, stdout, stderr }),
      ),
    );

  beforeAll(async () => {
    if (!existsSync(MAIN))
      execFileSync(process.execPath, [join(ROOT, 'scripts/build-if-needed.cjs')], { stdio: 'inherit' });
    dataDir = await mkdtemp(join(tmpdir(), 'lode-embedded-'));
    port = await freePort();
    receiver = await startWebhookReceiver();
    // Only what README's quick start has: no DATABASE_URL, no REDIS_URL.
    env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PORT: String(port),
      HOST: '127.0.0.1',
      LODE_DATA_DIR: dataDir,
      LODE_LOG_FORMAT: 'json',
      LODE_SSH_PORT: '0',
      LODE_ALLOW_LOCAL_WEBHOOKS: 'true',
    };
  }, 120_000);

  afterAll(async () => {
    await Promise.all(children.map((c) => stop(c, 'SIGKILL')));
    await receiver?.close();
    await rm(dataDir, { recursive: true, force: true });
    dirs.removeAll();
  });

  let token: string;
  let project: { id: number; path_with_namespace: string };
  let head: string;

  it('starts, says it runs embedded and where the data lives, and serves a push and its webhook', async () => {
    const child = start();
    await ready();
    const startup = child
      .output()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { msg: string });
    expect(startup.map((l) => l.msg)).toContainEqual(
      `embedded mode: database PGlite in ${join(dataDir, 'pglite')} (one machine, one process; set DATABASE_URL for PostgreSQL); job queues in the database (BullMQ's PostgreSQL backend)`,
    );
    // No Redis here: the short form names what serves the queues, the database, not a `redis` check.
    expect(await (await fetch(`http://127.0.0.1:${port}/-/readiness`)).json()).toEqual({
      status: 'ok',
      checks: { database: { status: 'ok' }, queues: { status: 'ok', backend: 'database' } },
    });
    const checks = await (await fetch(`http://127.0.0.1:${port}/-/readiness?all=1`)).json();
    expect(checks).toMatchObject({ status: 'ok', db_check: [{ status: 'ok' }], queues_check: [{ status: 'ok' }] });

    token = readFileSync(join(dataDir, 'initial_root_token'), 'utf8').trim();
    const created = await api('/projects', token, { method: 'POST', body: JSON.stringify({ name: 'kept' }) });
    expect(created.status).toBe(201);
    project = await created.json();
    const hook = await api(`/projects/${project.id}/hooks`, token, {
      method: 'POST',
      body: JSON.stringify({ url: `${receiver.url}/hook` }),
    });
    expect(hook.status).toBe(201);

    const work = dirs.make();
    await gitOk(['init', '-q', '-b', 'main', work]);
    writeFileSync(join(work, 'README.md'), '# kept\n');
    await gitOk(['add', '.'], work);
    await gitOk(['commit', '-q', '-m', 'first'], work);
    await gitOk(
      ['push', '-q', `http://root:${token}@127.0.0.1:${port}/${project.path_with_namespace}.git`, 'main'],
      work,
    );
    head = (await gitOk(['rev-parse', 'HEAD'], work)).trim();
    // The delivery job went through the queue in the database.
    await eventually(
      () => receiver.received.some((d) => d.headers['x-gitlab-event'] === 'Push Hook' && d.body.after === head),
      30_000,
    );
    const branch = await (await api(`/projects/${project.id}/repository/branches/main`, token)).json();
    expect(branch.commit.id).toBe(head);
  }, 120_000);

  it('lets the command line work beside it, through its socket', async () => {
    const check = await lode(['check']);
    expect([check.code, check.stdout.trim().split('\n').at(-1)]).toEqual([0, 'check: no problems found']);
    const outbox = await lode(['outbox', 'status', '--json']);
    expect(outbox.code).toBe(0);
    expect(JSON.parse(outbox.stdout).totals).toMatchObject({ undispatched: 0, unfinished: 0, failed: 0 });
  }, 60_000);

  it('stops on SIGTERM and finds everything again after a restart', async () => {
    expect(await stop(children.at(-1)!)).toBe(0);
    start();
    await ready();
    const again = await (await api(`/projects/${project.id}/repository/branches/main`, token)).json();
    expect(again.commit.id).toBe(head);
  }, 120_000);

  it('starts again after a kill -9 (the socket it left behind is taken over), with nothing lost', async () => {
    await stop(children.at(-1)!, 'SIGKILL');
    start();
    await ready();
    const users = await api('/users', token);
    expect(users.headers.get('x-total')).toBe('1');
    expect((await (await api(`/projects/${project.id}`, token)).json()).path_with_namespace).toBe(
      project.path_with_namespace,
    );
  }, 120_000);

  it('refuses to start while another process (a command line) has the stopped instance open', async () => {
    await stop(children.at(-1)!);
    // What `lode` does with Lode stopped: serves the files itself until it ends.
    const held = await EmbeddedPostgres.start(join(dataDir, 'pglite'), join(dataDir, 'run'));
    try {
      const child = start();
      const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
      expect(code).toBe(1);
      expect(child.output()).toContain(
        `another process (a lode command?) has the embedded database in ${join(dataDir, 'pglite')} open`,
      );
    } finally {
      await held.stop();
    }
  }, 120_000);
});
