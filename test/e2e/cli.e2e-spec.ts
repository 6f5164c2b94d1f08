import { repositoryPath } from '@app/git';
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { gitOk, tempDirs } from '../support/git';
import { dropDatabase, EMBEDDED, eventually, freePort, startTestApp, TEST_PG, type TestApp } from '../support/test-app';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

/**
 * `lode`, the administrator's command line, run as a real process from the built dist/ against a
 * Lode running in this process (API and worker, its own database, Redis prefix and data directory):
 * every command, its help, and the exit codes scripts rely on (0 done, 1 failed or found problems,
 * 2 usage, 3 database unusable).
 */
const ROOT = process.cwd();
const CLI = join(ROOT, 'dist/apps/lode/src/cli.js');
const BIN = join(ROOT, 'bin/lode.cjs');

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

describe('lode, the command line', () => {
  let t: TestApp;
  let env: NodeJS.ProcessEnv;
  let port: number;
  const tmp = tempDirs();
  const extraDatabases: string[] = [];
  let receiver: WebhookReceiver | undefined;

  /** Runs the command line; never throws, so exit codes can be asserted. Asynchronous: the server runs here. */
  function lode(args: string[], extra: NodeJS.ProcessEnv = {}, script = CLI): Promise<Ran> {
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        [script, ...args],
        { env: { ...env, ...extra }, encoding: 'utf8', timeout: 60_000 },
        (err, stdout, stderr) =>
          resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }),
      );
    });
  }

  const api = (path: string) => t.http().get(`/api/v4${path}`).set('PRIVATE-TOKEN', t.rootToken);
  const post = (path: string) => t.http().post(`/api/v4${path}`).set('PRIVATE-TOKEN', t.rootToken);

  async function projectWithCommit(name: string): Promise<{ id: number; path_with_namespace: string }> {
    const res = await post('/projects').send({ name });
    expect(res.status).toBe(201);
    const work = tmp.make();
    await gitOk(['init', '-q', '-b', 'master', work]);
    writeFileSync(join(work, 'README.md'), `# ${name}\n`);
    await gitOk(['add', '.'], work);
    await gitOk(['commit', '-q', '-m', 'first'], work);
    await gitOk(['push', '-q', remote(res.body.path_with_namespace), 'master'], work);
    return res.body;
  }
  const remote = (path: string) => `http://root:${t.rootToken}@127.0.0.1:${port}/${path}.git`;

  async function adminQuery<T extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<T[]> {
    const url = new URL(TEST_PG);
    const client = new pg.Client({ connectionString: url.toString() });
    await client.connect();
    try {
      return (await client.query<T>(sql, params)).rows;
    } finally {
      await client.end();
    }
  }

  let projectA: { id: number; path_with_namespace: string };
  let projectB: { id: number; path_with_namespace: string };

  beforeAll(async () => {
    execFileSync(process.execPath, [join(ROOT, 'scripts/build-if-needed.cjs')], { stdio: 'inherit' });
    t = await startTestApp({
      allowLocalWebhooks: true,
      webhookTimeoutMs: 1000,
      webhookRetryDelayMs: 100,
      // This process's reconciler must leave the suite's overdue push alone; the command line's limit is 60 s.
      pushReconcileAfter: 1_000_000,
    });
    await t.app.listen(0, '127.0.0.1');
    port = (t.app.getHttpServer().address() as AddressInfo).port;
    env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      // On the embedded default the command line finds the running Lode's socket through LODE_DATA_DIR,
      // as an operator's does; a DATABASE_URL naming that socket would make it treat the one-session
      // database as a server of its own (its database watch and fences then wait on its own transaction).
      ...(EMBEDDED ? {} : { DATABASE_URL: t.config.databaseUrl }),
      REDIS_URL: t.config.redisUrl,
      LODE_REDIS_PREFIX: t.config.redisPrefix,
      LODE_DATA_DIR: t.config.dataDir,
      LODE_PUSH_RECONCILE_AFTER: '60',
      LODE_SSH_PORT: '0',
    };
    projectA = await projectWithCommit('alpha');
    projectB = await projectWithCommit('beta');
  }, 180_000);

  afterAll(async () => {
    await receiver?.close();
    await t.close();
    for (const name of extraDatabases) {
      const url = new URL(TEST_PG);
      url.pathname = `/${name}`;
      await dropDatabase(url.toString());
    }
    tmp.removeAll();
  });

  describe('help and usage', () => {
    it('lists every command with --help, on stdout, exit 0; so do subcommands and `help <command>`', async () => {
      const top = await lode(['--help']);
      expect(top.code).toBe(0);
      for (const command of [
        'create-token',
        'create-user',
        'directory-block',
        'directory-unblock',
        'projections:rebuild',
        'projections',
        'check',
        'jobs',
        'outbox',
        'hooks',
      ])
        expect(top.stdout).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
      expect(top.stdout).toMatch(/Exit codes: 0 done, 1 .*, 2 usage error, 3 the database cannot be used/);

      const retry = await lode(['jobs', 'retry', '--help']);
      expect(retry.code).toBe(0);
      expect(retry.stdout).toContain('Usage: lode jobs retry [options] [job-id]');
      expect(retry.stdout).toMatch(/--all\s/);
      expect(retry.stdout).toMatch(
        /--queue <name>\s+look only in this queue \(choices: "git", "groups",\s+"maintenance", "webhooks"\)/,
      );

      for (const args of [
        ['help', 'check'],
        ['create-user', '--help'],
        ['projections', 'rebuild', '--help'],
        ['outbox', 'status', '--help'],
        ['hooks', 'deliveries', '--help'],
        ['jobs', 'list', '--help'],
      ]) {
        const r = await lode(args);
        expect({ args, code: r.code }).toEqual({ args, code: 0 });
        expect(r.stdout).toMatch(/^Usage: lode /);
      }
    });

    it('runs through the lode bin (npx lode, npm run lode), which builds first when needed', async () => {
      const r = await lode(['create-token', '--help'], {}, BIN);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('Usage: lode create-token [options]');
      expect(r.stdout).toContain('--expires <YYYY-MM-DD>');
    });

    it.each([
      [['frobnicate'], /^lode: unknown command 'frobnicate'/],
      [['check', '--frob'], /^lode: unknown option '--frob'/],
      [['create-user', '--username', 'x'], /^lode: required option '--email <email>' not specified/],
      [['jobs', 'list', '--state', 'sleeping'], /^lode: option '--state <state>' argument 'sleeping' is invalid/],
      [['jobs', 'list', '--queue', 'nope'], /Allowed choices are git, groups, maintenance, webhooks/],
      [['jobs', 'retry'], /^lode: name one job id, or --all/],
      [['jobs', 'retry', 'x', '--all'], /^lode: name one job id, or --all/],
      [['hooks', 'deliveries', '--hook', 'abc'], /^lode: option '--hook <id>' argument 'abc' is invalid/],
      [['create-token', '--user', 'root', '--scopes', 'everything'], /unknown scope\(s\): everything/],
      [['jobs'], /Usage: lode jobs/],
      [[], /Usage: lode /],
    ])('exits 2 on a usage error: %j', async (args, message) => {
      const r = await lode(args);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stdout).toBe('');
    });
  });

  describe('a database it cannot use', () => {
    it('refuses a database that does not exist (exit 3), names it without the password, and does not create it', async () => {
      const name = `lode_cli_absent_${randomBytes(4).toString('hex')}`;
      const url = new URL(TEST_PG);
      url.pathname = `/${name}`;
      url.username = 'postgres';
      url.password = 'not-the-password';
      for (const args of [['check'], ['create-token', '--user', 'root']]) {
        const r = await lode(args, { DATABASE_URL: url.toString() });
        expect(r.code).toBe(3);
        expect(r.stdout).toBe('');
        expect(r.stderr).toContain(`lode: the database postgres://postgres:***@${url.host}/${name} does not exist`);
        expect(r.stderr).toContain('start Lode once with these settings first');
        expect(r.stderr).not.toContain('not-the-password');
      }
      expect(await adminQuery(`select 1 from pg_database where datname = $1`, [name])).toEqual([]);
    });

    it('refuses a database that holds no Lode (exit 3) and leaves it empty', async () => {
      const name = `lode_cli_empty_${randomBytes(4).toString('hex')}`;
      await adminQuery(`create database ${name}`);
      extraDatabases.push(name);
      const url = new URL(TEST_PG);
      url.pathname = `/${name}`;
      const r = await lode(['outbox', 'status'], { DATABASE_URL: url.toString() });
      expect(r.code).toBe(3);
      expect(r.stderr).toMatch(
        /holds no Lode \(no schema_migrations table\); start Lode once with these settings first/,
      );
      const client = new pg.Client({ connectionString: url.toString() });
      await client.connect();
      const { rows } = await client.query(`select count(*)::int as n from pg_tables where schemaname = 'public'`);
      await client.end();
      expect(rows[0].n).toBe(0);
    });

    it('refuses an unreachable database (exit 3)', async () => {
      const closed = await freePort();
      const r = await lode(['check'], { DATABASE_URL: `postgres://postgres@127.0.0.1:${closed}/lode` });
      expect(r.code).toBe(3);
      expect(r.stderr).toContain(`lode: cannot use the database postgres://postgres@127.0.0.1:${closed}/lode`);
    });
  });

  describe('users and tokens', () => {
    const tokenCount = async () => Number((await t.db.query(`select count(*)::int as n from access_tokens`))[0].n);

    it('create-token prints a token that works, expiring on the day given', async () => {
      const r = await lode(['create-token', '--user', 'root', '--scopes', 'api', '--expires', '2099-12-31']);
      expect(r.code).toBe(0);
      const token = r.stdout.trim();
      expect(r.stdout).toMatch(/^[\w-]{20}\n$/);
      const me = await t.http().get('/api/v4/user').set('PRIVATE-TOKEN', token);
      expect(me.status).toBe(200);
      expect(me.body.username).toBe('root');
    });

    it.each([['2020-01-01'], [new Date().toISOString().slice(0, 10)], ['2099-02-30'], ['next week']])(
      'create-token refuses --expires %s (exit 2) and makes no token',
      async (expires) => {
        const before = await tokenCount();
        const r = await lode(['create-token', '--user', 'root', '--expires', expires]);
        expect(r.code).toBe(2);
        expect(r.stderr).toMatch(/is not in the future|is not a date of the form YYYY-MM-DD/);
        expect(r.stdout).toBe('');
        expect(await tokenCount()).toBe(before);
      },
    );

    it('create-token for an unknown user fails (exit 1)', async () => {
      const r = await lode(['create-token', '--user', 'nobody']);
      expect(r.code).toBe(1);
      expect(r.stderr).toBe('lode: no user nobody\n');
    });

    it('create-user creates a user as POST /users does and prints its id and username', async () => {
      const r = await lode([
        'create-user',
        '--username',
        'carol',
        '--email',
        'carol@example.com',
        '--name',
        'Carol Admin',
        '--password',
        'correct horse battery',
        '--admin',
      ]);
      expect(r.code).toBe(0);
      const [, id] = /^(\d+) carol\n$/.exec(r.stdout) ?? [];
      expect(id).toBeDefined();
      const user = await api(`/users/${id}`);
      expect(user.status).toBe(200);
      expect(user.body).toMatchObject({ username: 'carol', name: 'Carol Admin', is_admin: true, state: 'active' });

      const plain = await lode(['create-user', '--username', 'dave', '--email', 'dave@example.com', '--name', 'Dave']);
      expect(plain.code).toBe(0);
      const [, daveId] = /^(\d+) dave\n$/.exec(plain.stdout) ?? [];
      expect((await api(`/users/${daveId}`)).body).toMatchObject({ username: 'dave', is_admin: false });
    });

    it("create-user answers GitLab's conflicts (exit 1) and validation errors (exit 2)", async () => {
      const taken = await lode(['create-user', '--username', 'carol2', '--email', 'carol@example.com', '--name', 'C']);
      expect(taken.code).toBe(1);
      expect(taken.stderr).toBe('lode: Email has already been taken\n');
      const sameName = await lode(['create-user', '--username', 'carol', '--email', 'c3@example.com', '--name', 'C']);
      expect(sameName.code).toBe(1);
      expect(sameName.stderr).toBe('lode: Username has already been taken\n');
      const bad = await lode(['create-user', '--username', 'erin', '--email', 'not-an-address', '--name', 'Erin']);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toBe('lode: email is invalid\n');
      const short = await lode([
        'create-user',
        ...['--username', 'erin', '--email', 'erin@example.com', '--name', 'Erin', '--password', 'short'],
      ]);
      expect(short.code).toBe(2);
      expect(short.stderr).toBe('lode: password is too short (minimum is 8 characters)\n');
      expect((await api('/users?username=erin')).body).toEqual([]);
    });

    it('directory-block blocks as a directory sync would, and directory-unblock lifts it', async () => {
      const blocked = await lode(['directory-block', '--user', 'dave']);
      expect(blocked).toMatchObject({ code: 0, stdout: 'blocked dave\n' });
      expect((await api('/users?username=dave')).body[0].state).toBe('ldap_blocked');
      expect(await lode(['directory-block', '--user', 'dave'])).toMatchObject({ code: 0, stdout: 'dave unchanged\n' });
      const lifted = await lode(['directory-unblock', '--user', 'dave']);
      expect(lifted).toMatchObject({ code: 0, stdout: 'unblocked dave\n' });
      expect((await api('/users?username=dave')).body[0].state).toBe('active');
      expect((await lode(['directory-block', '--user', 'nobody'])).code).toBe(1);
    });
  });

  describe('read models', () => {
    it.each([[['projections:rebuild']], [['projections', 'rebuild']]])(
      '%j replays every event and prints the count, without a progress bar off a terminal',
      async (args) => {
        const { n } = (await t.db.query(`select count(*)::int as n from events`))[0];
        const r = await lode(args);
        expect(r.code).toBe(0);
        expect(r.stdout).toMatch(
          new RegExp(
            `^rebuilt the read models from ${n} events in \\d+\\.\\d s \\(replay \\d+\\.\\d s, vacuum and analyze \\d+\\.\\d s\\)\\n$`,
          ),
        );
        expect(r.stderr).toBe('');
        expect((await api('/users?username=carol')).body[0].is_admin).toBe(true);
      },
    );
  });

  it('draws the progress bar on stderr when it is a terminal (util-linux script gives it one)', async () => {
    const r = await new Promise<Ran>((resolve) => {
      execFile(
        'script',
        ['-q', '-e', '-c', `"${process.execPath}" "${CLI}" projections rebuild`, '/dev/null'],
        { env, encoding: 'utf8', timeout: 60_000 },
        (err, stdout, stderr) =>
          resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }),
      );
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/events \[={30}\] (\d+)\/\1/);
    expect(r.stdout).toMatch(/rebuilt the read models from \d+ events/);
  });

  describe('check, jobs, outbox and hooks', () => {
    let hookId: number;
    let hookPort: number;
    let failedJob: string;

    it('check finds nothing wrong on a sound installation (exit 0)', async () => {
      const r = await lode(['check']);
      expect(r.stdout).toContain('repositories: 2 projects, 2 repositories on disk');
      expect(r.stdout).toContain('git fsck: 2 repositories checked, all sound');
      expect(r.stdout).toMatch(/^outbox: 0 undispatched \(oldest -\), \d+ dispatched and unfinished/m);
      expect(r.stdout).toMatch(/^projections: \d+ projectors over \d+ tables, .*the event log is at position \d+/m);
      expect(r.stdout).toContain('pending pushes: 0 older than LODE_PUSH_RECONCILE_AFTER (60 s)');
      expect(r.stdout).toContain('leftovers: 0 temporary files or directories');
      expect(r.stdout).not.toContain('problem:');
      expect(r.stdout).toMatch(/check: no problems found\n$/);
      expect(r.code).toBe(0);
    });

    it('a webhook whose receiver is down ends as a failed job: jobs list, outbox status, hooks deliveries and check see it', async () => {
      hookPort = await freePort(); // nothing listens there until the retry below
      const hook = await post(`/projects/${projectA.id}/hooks`).send({
        url: `http://hookuser:hookpass@127.0.0.1:${hookPort}/receive`,
        token: 's3cret-hook-token',
      });
      expect(hook.status).toBe(201);
      hookId = hook.body.id;
      const work = tmp.make();
      await gitOk(['clone', '-q', remote(projectA.path_with_namespace), work]);
      writeFileSync(join(work, 'more.txt'), 'more\n');
      await gitOk(['add', '.'], work);
      await gitOk(['commit', '-q', '-m', 'more'], work);
      await gitOk(['push', '-q', 'origin', 'master'], work);

      type Listed = { queue: string; id: string; kind: string; attempts: number; maxAttempts: number; reason: string };
      const [job] = await eventually(
        async () => {
          const r = await lode(['jobs', 'list', '--queue', 'webhooks', '--json']);
          expect(r.code).toBe(0);
          const jobs = JSON.parse(r.stdout) as Listed[];
          expect(jobs.length).toBeGreaterThan(0);
          return jobs;
        },
        30_000,
        500,
      );
      // The push's fan-out made the first attempt; the delivery's job made the other three.
      expect(job).toMatchObject({ queue: 'webhooks', kind: 'deliver', attempts: 3, maxAttempts: 3 });
      failedJob = job.id;

      const table = await lode(['jobs', 'list']);
      expect(table.code).toBe(0);
      expect(table.stdout).toMatch(/^QUEUE\s+JOB ID\s+KIND\s+ATTEMPTS\s+FINISHED\s+REASON\n/);
      expect(table.stdout).toContain(`webhooks  ${failedJob}  deliver  3/3`);
      expect(table.stdout).not.toContain('hookpass');

      const outbox = await eventually(async () => {
        const r = await lode(['outbox', 'status', '--json']);
        const status = JSON.parse(r.stdout) as { totals: { failed: number; failedLastDay: number } };
        expect(status.totals.failed).toBe(1);
        return status;
      });
      expect(outbox.totals).toMatchObject({ failed: 1, failedLastDay: 1, undispatched: 0 });
      const outboxTable = await lode(['outbox', 'status']);
      expect(outboxTable.code).toBe(0);
      expect(outboxTable.stdout).toMatch(/^QUEUE\s+UNDISPATCHED\s+OLDEST\s+UNFINISHED\s+OLDEST\s+COMPLETED\s+FAILED/);
      expect(outboxTable.stdout).toMatch(/^webhooks\s+0\s+-\s+0\s+-\s+\d+\s+1\s+1$/m);

      const deliveries = await lode(['hooks', 'deliveries', '--hook', String(hookId)]);
      expect(deliveries.code).toBe(0);
      // The hook's URL as the API shows it: the password masked.
      expect(deliveries.stdout).toContain(
        `hook ${hookId} of project ${projectA.id}: http://hookuser:*****@127.0.0.1:${hookPort}/receive (4 attempts logged)`,
      );
      const attempts = deliveries.stdout.split('\n').filter((l) => l.includes('Push Hook'));
      expect(attempts).toHaveLength(4);
      expect(attempts.map((l) => l.split(/\s{2,}/)[2])).toEqual(['4', '3', '2', '1']);
      for (const secret of ['hookpass', 's3cret-hook-token']) expect(deliveries.stdout).not.toContain(secret);
      const limited = await lode(['hooks', 'deliveries', '--hook', String(hookId), '--limit', '2', '--json']);
      const json = JSON.parse(limited.stdout) as { total: number; deliveries: { attempt: number; url: string }[] };
      expect(json.total).toBe(4);
      expect(json.deliveries.map((d) => d.attempt)).toEqual([4, 3]);
      expect(json.deliveries[0].url).toBe(`http://127.0.0.1:${hookPort}/receive`);
      expect((await lode(['hooks', 'deliveries', '--hook', '999999'])).stderr).toBe('lode: no hook 999999\n');

      const check = await lode(['check']);
      expect(check.code).toBe(1);
      expect(check.stdout).toContain('problem: 1 job(s) failed for good in the last day: see `lode jobs list`');
      expect(check.stdout).toMatch(/check: 1 problem\(s\) found\n$/);
    }, 90_000);

    it('jobs retry runs the failed job again; it succeeds once its receiver is up, and the outbox records that', async () => {
      receiver = await startWebhookReceiver(200, { port: hookPort });

      const r = await lode(['jobs', 'retry', failedJob]);
      expect(r).toMatchObject({ code: 0, stdout: `retried webhooks ${failedJob}\n` });
      await eventually(() => receiver!.received.length === 1, 15_000);
      const delivered = await eventually(async () => {
        const d = await lode(['hooks', 'deliveries', '--hook', String(hookId), '--json']);
        const json = JSON.parse(d.stdout) as { deliveries: { attempt: number; response_status: number | null }[] };
        expect(json.deliveries[0].response_status).toBe(200);
        return json;
      });
      // All four attempts again: the retried job starts from its first.
      expect(delivered.deliveries[0]).toMatchObject({ attempt: 1, response_status: 200 });
      const outbox = await eventually(async () => {
        const status = JSON.parse((await lode(['outbox', 'status', '--json'])).stdout);
        return status.totals.failed === 0 && status.totals.unfinished === 0 ? status : false;
      });
      expect(outbox.totals.failedLastDay).toBe(0);

      const none = await lode(['jobs', 'list']);
      expect(none).toMatchObject({ code: 0, stdout: '' });
      expect(none.stderr).toBe('no failed jobs in git, groups, maintenance, webhooks\n');
    }, 60_000);

    it('jobs retry fails (exit 1) for a job that is not failed or does not exist; --all with none failed is done', async () => {
      const again = await lode(['jobs', 'retry', failedJob]);
      expect(again.code).toBe(1);
      expect(again.stderr).toBe(`lode: job ${failedJob} (webhooks) is completed, not failed: nothing to retry\n`);
      const missing = await lode(['jobs', 'retry', 'no-such-job', '--queue', 'git']);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toBe('lode: no job no-such-job in git\n');
      const all = await lode(['jobs', 'retry', '--all']);
      expect(all).toMatchObject({ code: 0, stdout: '', stderr: '0 failed job(s) retried\n' });
      const completed = await lode(['jobs', 'list', '--state', 'completed', '--queue', 'webhooks', '--json']);
      expect((JSON.parse(completed.stdout) as { id: string }[]).map((j) => j.id)).toContain(failedJob);
    });

    it('jobs fail (exit 1) when the job queue does not answer, naming where it was looked for', async () => {
      const closed = await freePort();
      const started = Date.now();
      const r = await lode(['jobs', 'list'], { REDIS_URL: `redis://:pw@127.0.0.1:${closed}` });
      expect(r.code).toBe(1);
      // Perhaps after the throttle's own warning that Redis is away (a log line, as the server writes it).
      expect(r.stderr).toMatch(
        new RegExp(
          `(^|\\n)lode: the job queue \\(redis://:\\*\\*\\*@127\\.0\\.0\\.1:${closed}, prefix ${t.config.redisPrefix}\\) did not answer within 5 s\\n$`,
        ),
      );
      expect(r.stderr).not.toContain(':pw@');
      expect(Date.now() - started).toBeLessThan(20_000);
    });

    it('check finds a removed repository, a corrupt one, a stray one, an unrecorded push and leftovers (exit 1)', async () => {
      const { dataDir } = t.config;
      const pathA = repositoryPath(dataDir, projectA.id);
      const pathB = repositoryPath(dataDir, projectB.id);
      rmSync(pathB, { recursive: true });
      // Corrupt: every object of A's repository gone, its refs left pointing at nothing.
      for (const dir of readdirSync(join(pathA, 'objects')))
        if (/^[0-9a-f]{2}$/.test(dir) || dir === 'pack') rmSync(join(pathA, 'objects', dir), { recursive: true });
      const stray = repositoryPath(dataDir, 987_654);
      mkdirSync(join(stray, '..'), { recursive: true });
      await gitOk(['init', '-q', '--bare', stray]);
      const longAgo = new Date(Date.now() - 2 * 3600_000);
      const upload = join(dataDir, 'tmp', 'left-by-a-crash');
      mkdirSync(join(dataDir, 'tmp'), { recursive: true });
      writeFileSync(upload, 'partial upload');
      utimesSync(upload, longAgo, longAgo);
      const archive = join(
        dataDir,
        'cache',
        'archives',
        String(projectA.id),
        `${'0'.repeat(40)}-abc.tar.gz.tmp-0badcafe`,
      );
      mkdirSync(join(archive, '..'), { recursive: true });
      writeFileSync(archive, 'half an archive');
      utimesSync(archive, longAgo, longAgo);
      // A push git applied whose process died before recording it, written down 10 minutes ago.
      await t.db.query(
        `insert into pending_pushes (project_id, updates, pusher, created_at) values ($1, '[]', '{}', now() - interval '10 minutes')`,
        [projectA.id],
      );

      const r = await lode(['check']);
      expect(r.code).toBe(1);
      expect(r.stdout).toContain('repositories: 2 projects, 2 repositories on disk');
      expect(r.stdout).toContain(
        `problem: project ${projectB.id} (${projectB.path_with_namespace}): repository missing (${pathB})`,
      );
      expect(r.stdout).toContain(`problem: repository without a project: ${stray}\n`);
      expect(r.stdout).toContain('git fsck: 1 repositories checked, 1 with problems');
      expect(r.stdout).toMatch(
        new RegExp(
          `problem: project ${projectA.id} \\(${projectA.path_with_namespace}\\): .*(invalid sha1 pointer|missing|broken)`,
        ),
      );
      expect(r.stdout).toContain('pending pushes: 1 older than LODE_PUSH_RECONCILE_AFTER (60 s)');
      expect(r.stdout).toMatch(/problem: 1 push\(es\) not recorded, the oldest written 10 min ago/);
      expect(r.stdout).toContain('leftovers: 2 temporary files or directories');
      expect(r.stdout).toContain(`problem: left behind: ${upload}`);
      expect(r.stdout).toContain(`problem: left behind: ${archive}`);
      expect(r.stdout).toMatch(/check: 6 problem\(s\) found\n$/);
      // Read-only: nothing it found was changed.
      expect(existsSync(upload)).toBe(true);
      expect(existsSync(stray)).toBe(true);
    }, 60_000);
  });
});
