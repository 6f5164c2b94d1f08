import { LodeConfig, runMigrations, startDatabase } from '@app/platform';
import { SeedRoot } from '@app/users';
import { Logger } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { createHttpApp } from '../../apps/lode/src/http-app';
import { MIGRATIONS } from '../../apps/lode/src/lode.module';
import { gitOk, tempDirs } from '../support/git';
import { dropDatabase, startTestApp, TEST_PG, TEST_REDIS, type TestApp } from '../support/test-app';

/**
 * `lode backup`, `lode restore` and `lode migrate-embedded`, run as real processes from dist/: the
 * archive of a running Lode restored into an empty one, and an embedded instance moved to PostgreSQL.
 * (The archive's contents and every refusal are in backup-restore.e2e-spec.ts.)
 */
const ROOT = process.cwd();
const CLI = join(ROOT, 'dist/apps/lode/src/cli.js');

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

function lode(args: string[], env: NodeJS.ProcessEnv): Promise<Ran> {
  const clean = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined));
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { env: { PATH: process.env.PATH, HOME: process.env.HOME, ...clean }, encoding: 'utf8', timeout: 120_000 },
      (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }),
    );
  });
}

/** The settings a command line uses to reach a test app's installation. */
function envOf(config: LodeConfig): NodeJS.ProcessEnv {
  return {
    // In embedded mode no DATABASE_URL: the command line finds the running instance's socket in the data directory.
    DATABASE_URL: config.embeddedDatabase ? undefined : config.databaseUrl,
    REDIS_URL: config.redisUrl,
    LODE_REDIS_PREFIX: config.redisPrefix,
    LODE_DATA_DIR: config.dataDir,
    LODE_SSH_PORT: '0',
  };
}

const pgUrl = (name: string) => {
  const url = new URL(TEST_PG);
  url.pathname = `/${name}`;
  return url.toString();
};

async function pushCommit(t: TestApp, path: string, dirs: ReturnType<typeof tempDirs>): Promise<string> {
  await t.app.listen(0, '127.0.0.1');
  const port = (t.app.getHttpServer().address() as AddressInfo).port;
  const work = dirs.make();
  await gitOk(['init', '-q', '-b', 'main', work]);
  writeFileSync(join(work, 'README.md'), '# kept\n');
  await gitOk(['add', '.'], work);
  await gitOk(['commit', '-q', '-m', 'kept'], work);
  await gitOk(['push', '-q', `http://root:${t.rootToken}@127.0.0.1:${port}/${path}.git`, 'main'], work);
  return (await gitOk(['rev-parse', 'HEAD'], work)).trim();
}

describe('lode backup, restore and migrate-embedded', () => {
  const dirs = tempDirs();
  beforeAll(() => {
    execFileSync(process.execPath, [join(ROOT, 'scripts/build-if-needed.cjs')], { stdio: 'inherit' });
  }, 180_000);
  afterAll(() => dirs.removeAll());

  it('backs up a running Lode and restores the archive into an empty installation, which then serves it', async () => {
    const source = await startTestApp();
    const target = await startTestApp(); // only for its settings: a fresh database name and data directory
    await target.close();
    let restored: TestApp | undefined;
    try {
      const project = await source.http().post('/api/v4/projects').set('PRIVATE-TOKEN', source.rootToken).send({
        name: 'kept',
      });
      const head = await pushCommit(source, project.body.path_with_namespace, dirs);
      const archive = join(dirs.make(), 'lode.tar');

      const usage = await lode(['backup'], envOf(source.config));
      expect(usage.code).toBe(2);
      expect(usage.stderr).toMatch(/required option '--to <file\|dir>'/);

      const backup = await lode(['backup', '--to', archive], envOf(source.config));
      expect([backup.code, backup.stderr]).toEqual([0, '']);
      expect(backup.stdout).toMatch(new RegExp(`^wrote ${archive} \\(`, 'm'));
      expect(backup.stdout).toMatch(/^repositories: 1 \(0 empty\), 1 refs/m);
      expect(existsSync(archive)).toBe(true);

      // Into the running source: refused (it holds rows), exit 1, nothing changed.
      const refused = await lode(['restore', '--from', archive], envOf(source.config));
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/^lode: the data directory .* holds repositories already/m);

      const into = envOf(target.config);
      const restoreStarted = Date.now();
      const restore = await lode(['restore', '--from', archive], into);
      const restoreWall = (Date.now() - restoreStarted) / 1000;
      expect([restore.code, restore.stderr.replace(/^.*ran \d+ migration.*\n/m, '')]).toEqual([0, '']);
      expect(restore.stdout).toMatch(/^restored .* in \d+\.\d s$/m);
      // The whole command is reported, from the process's start (loading Lode, the database's start
      // and stop too), not only the copy: all of the wall time but the exec of the process.
      const reported = Number(/ in (\d+\.\d) s$/m.exec(restore.stdout)![1]);
      expect(reported).toBeLessThanOrEqual(restoreWall + 0.1);
      expect(reported).toBeGreaterThan(restoreWall - 1);

      restored = await startTestApp({ ...target.config, rootToken: source.rootToken });
      const got = await restored
        .http()
        .get(`/api/v4/projects/${project.body.id}`)
        .set('PRIVATE-TOKEN', source.rootToken);
      expect(got.status).toBe(200);
      expect(got.body.path_with_namespace).toBe(project.body.path_with_namespace);
      const branch = await restored
        .http()
        .get(`/api/v4/projects/${project.body.id}/repository/branches/main`)
        .set('PRIVATE-TOKEN', source.rootToken);
      expect(branch.body.commit.id).toBe(head);
    } finally {
      await restored?.close();
      await source.close();
    }
  }, 120_000);

  it('moves an embedded instance into PostgreSQL with migrate-embedded, which refuses while Lode runs or the target holds a Lode', async () => {
    // An embedded Lode, whatever mode this run is in.
    Logger.overrideLogger(['error']);
    const config = new LodeConfig();
    Object.assign(config, {
      embeddedDatabase: true,
      databaseUrl: '',
      redisUrl: undefined,
      dataDir: mkdtempSync(join(tmpdir(), 'lode-embedded-')),
      rootToken: `root-${randomBytes(16).toString('hex')}`,
      externalUrl: 'http://lode.test',
      logLevel: 'error',
      authFailures: 0,
      sshPort: 0,
    });
    const database = await startDatabase(config);
    await runMigrations(config, MIGRATIONS);
    const app = await createHttpApp(config, { http: true, worker: true });
    await app.init();
    await app.get(CommandBus).execute(new SeedRoot());
    const created = await request(app.getHttpServer())
      .post('/api/v4/projects')
      .set('PRIVATE-TOKEN', config.rootToken!)
      .send({ name: 'moved', description: 'from PGlite' });
    expect(created.status).toBe(201);
    const env = { ...envOf(config), DATABASE_URL: undefined, REDIS_URL: undefined };
    const targetName = `lode_migrated_${randomBytes(5).toString('hex')}`;
    const target = pgUrl(targetName);
    let moved: TestApp | undefined;
    try {
      const running = await lode(['migrate-embedded', '--to', target], env);
      expect(running.code).toBe(1);
      expect(running.stderr).toMatch(/^lode: a running Lode serves the embedded database: stop it first/m);
      await app.close();
      await database.stop();

      expect((await lode(['migrate-embedded', '--to', 'redis://cache'], env)).code).toBe(2);
      expect((await lode(['migrate-embedded', '--to', target], { ...env, DATABASE_URL: target })).code).toBe(2);

      const migrated = await lode(['migrate-embedded', '--to', target], env);
      expect([migrated.code, migrated.stderr.replace(/^.*(ran \d+ migration|created database).*\n/gm, '')]).toEqual([
        0,
        `copying the embedded database in ${join(config.dataDir, 'pglite')} to ${target}\n`,
      ]);
      expect(migrated.stdout).toMatch(/^copied \d+ rows in \d+ tables \(\d+ events\) and \d+ sequences to /m);

      // The copy left behind is marked moved: a command, and Lode itself, refuse to open it...
      const movedMessage = new RegExp(
        `the embedded database in ${join(config.dataDir, 'pglite')} was moved to ${target.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} by lode migrate-embedded`,
      );
      const again = await lode(['migrate-embedded', '--to', target], env);
      expect(again.code).not.toBe(0);
      expect(again.stderr).toMatch(movedMessage);
      const started = await new Promise<Ran>((resolve) =>
        execFile(
          process.execPath,
          [join(ROOT, 'dist/apps/lode/src/main.js')],
          {
            env: {
              PATH: process.env.PATH,
              HOME: process.env.HOME,
              LODE_DATA_DIR: config.dataDir,
              PORT: '0',
              LODE_SSH_PORT: '0',
            },
            encoding: 'utf8',
            timeout: 60_000,
          },
          (err, stdout, stderr) => resolve({ code: err ? Number(err.code) : 0, stdout, stderr }),
        ),
      );
      expect(started.code).toBe(1);
      expect(started.stdout + started.stderr).toMatch(movedMessage);
      // ...unless the operator says so explicitly.
      const forced = await lode(['migrate-embedded', '--to', target], { ...env, LODE_SERVE_MOVED_EMBEDDED: 'true' });
      expect(forced.code).toBe(1);
      expect(forced.stderr).toMatch(/^lode: the target database is not empty/m);

      // The same data directory on PostgreSQL: the project, its id and its repository are there.
      moved = await startTestApp({
        embeddedDatabase: false,
        databaseUrl: target,
        redisUrl: TEST_REDIS,
        dataDir: config.dataDir,
        rootToken: config.rootToken,
      });
      const got = await moved.http().get(`/api/v4/projects/${created.body.id}`).set('PRIVATE-TOKEN', config.rootToken!);
      expect([got.status, got.body.name, got.body.description]).toEqual([200, 'moved', 'from PGlite']);
      // New ids continue after the embedded ones (the sequences came along).
      const next = await moved.http().post('/api/v4/projects').set('PRIVATE-TOKEN', config.rootToken!).send({
        name: 'after the move',
      });
      expect(next.status).toBe(201);
      expect(next.body.id).toBeGreaterThan(created.body.id);
    } finally {
      if (moved) await moved.close();
      else {
        await dropDatabase(target).catch(() => undefined);
        dirs.removeAll();
      }
    }
  }, 240_000);

  it('refuses migrate-embedded without an embedded database in the data directory', async () => {
    const empty = dirs.make();
    const ran = await lode(['migrate-embedded', '--to', pgUrl('lode_never_made')], { LODE_DATA_DIR: empty });
    expect(ran.code).toBe(3);
    expect(ran.stderr).toMatch(/^lode: no embedded database in /m);
  });
});
