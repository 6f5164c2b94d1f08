import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { gitOk, tempDirs } from '../support/git';
import { clearRedis, dropDatabase, eventually, freePort, TEST_PG, TEST_REDIS } from '../support/test-app';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

/**
 * A real server process, verbose logging, and everything that carries a secret: tokens in every
 * place the API takes them, Basic auth over git HTTP, a hook with a token and URL credentials, a
 * forced 500 on the API and on git. Its whole stdout and stderr must name none of the secrets, in
 * either log format: JSON (what a pipe gets by default) and pretty.
 */
const ROOT = process.cwd();
const MAIN = join(ROOT, 'dist/apps/lode/src/main.js');

describe.each(['json', 'pretty'] as const)('logs never show credentials (LODE_LOG_FORMAT=%s)', (format) => {
  const id = randomBytes(5).toString('hex');
  const url = new URL(TEST_PG);
  url.pathname = `/lode_logs_${id}`;
  const prefix = `lode-logs-${id}`;
  const rootToken = `root-secret-${randomBytes(12).toString('hex')}`;
  const password = `password-secret-${randomBytes(8).toString('hex')}`;
  const hookToken = `hook-token-secret-${randomBytes(8).toString('hex')}`;
  const hookPassword = `hook-password-secret-${randomBytes(8).toString('hex')}`;
  const hookQuerySecret = `hook-query-secret-${randomBytes(8).toString('hex')}`;
  const secrets: string[] = [rootToken, password, hookToken, hookPassword, hookQuerySecret];
  const tmp = tempDirs();
  let dataDir: string;
  let port: number;
  let child: ChildProcess;
  let output = '';
  let stdout = '';
  let receiver: WebhookReceiver;

  const base = () => `http://127.0.0.1:${port}`;
  const api = (path: string, init: RequestInit = {}) => fetch(`${base()}/api/v4${path}`, init);
  const json = (token: string, body: unknown, method = 'POST'): RequestInit => ({
    method,
    headers: { 'PRIVATE-TOKEN': token, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });

  /** Runs `sql` against the server's database (to break a table on purpose, and mend it). */
  async function sql(text: string): Promise<void> {
    const c = new pg.Client({ connectionString: url.toString() });
    await c.connect();
    try {
      await c.query(text);
    } finally {
      await c.end();
    }
  }

  beforeAll(async () => {
    if (!existsSync(MAIN))
      execFileSync(process.execPath, [join(ROOT, 'scripts/build-if-needed.cjs')], { stdio: 'inherit' });
    dataDir = await mkdtemp(join(tmpdir(), 'lode-logs-'));
    port = await freePort();
    receiver = await startWebhookReceiver({ status: 500, body: 'not now' });
    child = spawn(process.execPath, [MAIN], {
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        PORT: String(port),
        HOST: '127.0.0.1',
        DATABASE_URL: url.toString(),
        REDIS_URL: TEST_REDIS,
        LODE_REDIS_PREFIX: prefix,
        LODE_DATA_DIR: dataDir,
        LODE_SSH_PORT: '0',
        LODE_EXTERNAL_URL: `http://127.0.0.1:${port}`,
        LODE_ROOT_TOKEN: rootToken,
        LODE_ROOT_PASSWORD: password,
        LODE_ALLOW_LOCAL_WEBHOOKS: 'true',
        LODE_LOG_LEVEL: 'verbose',
        LODE_LOG_FORMAT: format,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (d) => {
      output += d;
      stdout += d;
    });
    child.stderr?.on('data', (d) => (output += d));
    await eventually(async () => (await fetch(`${base()}/-/readiness`)).status === 200, 30_000, 200);
  }, 60_000);

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    await receiver?.close();
    tmp.removeAll();
    await dropDatabase(url.toString());
    await clearRedis(TEST_REDIS, prefix);
    await rm(dataDir, { recursive: true, force: true });
  });

  it('logs the forced errors, with no token, password or hook credential in the whole output', async () => {
    // A user with a password, and tokens made through the API.
    const user = await (
      await api(
        '/users',
        json(rootToken, { username: 'carol', email: 'carol@example.com', name: 'Carol', password: `${password}-2` }),
      )
    ).json();
    secrets.push(`${password}-2`);
    for (const scopes of [['api'], ['read_user']]) {
      const made = await (
        await api(`/users/${user.id}/impersonation_tokens`, json(rootToken, { name: 'log test', scopes }))
      ).json();
      secrets.push(made.token);
    }
    const [userToken] = secrets.slice(-2);

    // Every way the API takes a token, good and bad.
    expect((await api(`/user?private_token=${userToken}`)).status).toBe(200);
    expect((await api('/user', { headers: { 'PRIVATE-TOKEN': userToken } })).status).toBe(200);
    expect((await api('/user', { headers: { Authorization: `Bearer ${userToken}` } })).status).toBe(200);
    const wrong = `wrong-secret-${randomBytes(8).toString('hex')}`;
    secrets.push(wrong);
    expect((await api(`/user?private_token=${wrong}`)).status).toBe(401);

    // A project, a hook with a token and credentials in its URL, and a push over git HTTP with Basic auth.
    const project = await (await api('/projects', json(rootToken, { name: 'logged' }))).json();
    const hookUrl = `http://hookuser:${hookPassword}@127.0.0.1:${receiver.port}/hook?token=${hookQuerySecret}`;
    const hook = await api(
      `/projects/${project.id}/hooks`,
      json(rootToken, { url: hookUrl, token: hookToken, push_events: true }),
    );
    expect(hook.status).toBe(201);
    const work = tmp.make();
    await gitOk(['init', '-q', '-b', 'master', work]);
    writeFileSync(join(work, 'README.md'), '# logged\n');
    await gitOk(['add', '-A'], work);
    await gitOk(['commit', '-q', '-m', 'first'], work, {
      GIT_AUTHOR_NAME: 'A',
      GIT_AUTHOR_EMAIL: 'a@example.com',
      GIT_COMMITTER_NAME: 'A',
      GIT_COMMITTER_EMAIL: 'a@example.com',
    });
    const remote = `http://root:${rootToken}@127.0.0.1:${port}/${project.path_with_namespace}.git`;
    await gitOk(['push', '-q', remote, 'master'], work);
    await eventually(() => receiver.received.length > 0, 15_000);
    expect(receiver.received[0].headers['x-gitlab-token']).toBe(hookToken);
    // The delivery log a maintainer reads names the URL without its credentials either.
    const hookId = (await hook.json()).id;
    const deliveries = await eventually(async () => {
      const list = await (
        await api(`/projects/${project.id}/hooks/${hookId}/events`, { headers: { 'PRIVATE-TOKEN': rootToken } })
      ).json();
      return list.length > 0 && list;
    }, 10_000);
    expect(deliveries[0].url).toBe(`${receiver.url}/hook?token=[FILTERED]`);
    const basic = `Basic ${Buffer.from(`root:${rootToken}`).toString('base64')}`;
    secrets.push(Buffer.from(`root:${rootToken}`).toString('base64'));
    const refs = `${base()}/${project.path_with_namespace}.git/info/refs?service=git-upload-pack`;
    expect((await fetch(refs, { headers: { Authorization: basic } })).status).toBe(200);
    const badBasic = Buffer.from(`root:${wrong}`).toString('base64');
    secrets.push(badBasic);
    expect((await fetch(refs, { headers: { Authorization: `Basic ${badBasic}` } })).status).toBe(401);

    // Forced errors: a table gone under the API and under git.
    await sql(`alter table ssh_keys rename to ssh_keys_away`);
    try {
      expect((await api(`/user/keys?private_token=${userToken}&page=1`)).status).toBe(500);
    } finally {
      await sql(`alter table ssh_keys_away rename to ssh_keys`);
    }
    await sql(`alter table projects rename to projects_away`);
    try {
      const res = await fetch(`${refs}&private_token=${userToken}`, { headers: { Authorization: basic } });
      expect(res.status).toBe(500);
    } finally {
      await sql(`alter table projects_away rename to projects`);
    }

    // Let the hook's failed attempt and anything else pending reach the log.
    await new Promise((r) => setTimeout(r, 1000));
    expect(output).toContain('GET /api/v4/user/keys?private_token=[FILTERED]&page=1 failed');
    expect(output).toContain(`git GET /${project.path_with_namespace}.git/info/refs`);
    if (format === 'json') {
      // Every line on stdout is one JSON object, with pino's fields; request lines carry their id.
      const lines = stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      for (const l of lines) {
        expect(typeof l.time).toBe('string');
        expect(['trace', 'debug', 'info', 'warn', 'error', 'fatal']).toContain(l.level);
        expect(typeof l.msg).toBe('string');
      }
      const failed = lines.find((l) => l.route === '/api/v4/user/keys' && l.status === 500);
      expect(failed).toMatchObject({ method: 'GET', path: '/api/v4/user/keys?private_token=[FILTERED]&page=1' });
      expect(failed?.request_id).toMatch(/^[0-9a-f-]{36}$/);
      // The error line Nest's logger wrote while serving it carries the same request id.
      expect(lines.some((l) => l.level === 'error' && l.request_id === failed?.request_id && l !== failed)).toBe(true);
    } else {
      expect(stdout).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}\[\w+\] /m);
      expect(stdout).toContain('GET /api/v4/user/keys 500 request_id=');
    }
    for (const secret of secrets) expect({ secret, found: output.includes(secret) }).toEqual({ secret, found: false });
  }, 90_000);
});
