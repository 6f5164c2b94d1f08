import { HookSecrets1763780000700 } from '@app/hooks';
import { dataSourceOptions, ProjectionRebuilder, runMigrations, SECRET_KEY_FILE, SecretBox } from '@app/platform';
import { readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { MIGRATIONS } from '../../apps/lode/src/lode.module';
import { gitOk, tempDirs } from '../support/git';
import { createUser, type SeededUser } from '../support/seed';
import {
  describeOnServers,
  dropDatabase,
  eventually,
  startTestApp,
  testConfig,
  type TestApp,
} from '../support/test-app';
import { startWebhookReceiver, type Delivery, type WebhookReceiver } from '../support/webhook-receiver';

/** Hook tokens and URL passwords live sealed beside the event log, never in it, and go with their hook. */
describe('hook secrets', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let port: number;
  let owner: SeededUser;
  let received: Delivery[];
  const tmp = tempDirs();

  const as = (token: string) => ({
    get: (path: string) => t.http().get(`/api/v4${path}`).set('PRIVATE-TOKEN', token),
    post: (path: string) => t.http().post(`/api/v4${path}`).set('PRIVATE-TOKEN', token),
    put: (path: string) => t.http().put(`/api/v4${path}`).set('PRIVATE-TOKEN', token),
    delete: (path: string) => t.http().delete(`/api/v4${path}`).set('PRIVATE-TOKEN', token),
  });
  /** Everything the database holds as text: events, read models, the outbox. */
  async function databaseText(): Promise<string> {
    const tables = (await t.db.query(
      `select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`,
    )) as { table_name: string }[];
    const parts: string[] = [];
    for (const { table_name } of tables) parts.push(JSON.stringify(await t.db.query(`select * from "${table_name}"`)));
    return parts.join('\n');
  }
  async function newProject(name: string): Promise<{ id: number; path_with_namespace: string }> {
    const res = await as(owner.token).post('/projects').send({ name, visibility: 'private' });
    expect(res.status).toBe(201);
    return res.body;
  }
  async function push(project: { path_with_namespace: string }): Promise<void> {
    const work = tmp.make();
    await gitOk(['init', '-q', '-b', 'master', work]);
    writeFileSync(join(work, 'a.txt'), `${Math.random()}\n`);
    await gitOk(['add', '.'], work);
    await gitOk(['commit', '-q', '-m', 'one'], work);
    const server = t.app.getHttpServer().address() as AddressInfo;
    await gitOk(
      ['push', '-q', `http://git:${owner.token}@127.0.0.1:${server.port}/${project.path_with_namespace}.git`, 'master'],
      work,
    );
  }
  const arrival = (path: string) =>
    eventually(() => received.find((r) => r.path === path) ?? false) as Promise<Delivery>;
  const secretRows = async (): Promise<number> =>
    Number((await t.db.query(`select count(*) from project_hook_secrets`))[0].count);

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    received = receiver.received;
    port = receiver.port;
    t = await startTestApp({ allowLocalWebhooks: true, webhookTimeoutMs: 1000, webhookRetryDelayMs: 200 });
    await t.app.listen(0, '127.0.0.1');
    owner = await createUser(t);
  });
  afterAll(async () => {
    tmp.removeAll();
    await t.close();
    await receiver.close();
  });

  it('keeps the token and the URL password out of every table but their sealed row, and delivers with both', async () => {
    const project = await newProject('Sealed');
    const url = `http://deploy:pa55-in-url@127.0.0.1:${port}/sealed`;
    const res = await as(owner.token).post(`/projects/${project.id}/hooks`).send({ url, token: 'tok-in-header' });
    expect(res.status).toBe(201);
    expect(res.body.url).toBe(`http://deploy:*****@127.0.0.1:${port}/sealed`);
    expect(JSON.stringify(res.body)).not.toMatch(/pa55-in-url|tok-in-header/);
    expect((await as(owner.token).get(`/projects/${project.id}/hooks/${res.body.id}`)).body.url).toBe(res.body.url);

    const text = await databaseText();
    expect(text).not.toContain('pa55-in-url');
    expect(text).not.toContain('tok-in-header');
    const [row] = (await t.db.query(`select sealed from project_hook_secrets where hook_id = $1`, [res.body.id])) as {
      sealed: string;
    }[];
    expect(row.sealed).toMatch(/^v1:/);
    // Sealed with the installation's key file, created private in the data directory.
    const key = readFileSync(join(t.config.dataDir, SECRET_KEY_FILE), 'utf8').trim();
    expect(JSON.parse(SecretBox.withKey(Buffer.from(key, 'hex')).open(row.sealed))).toEqual({
      token: 'tok-in-header',
      url,
    });

    await push(project);
    const hit = await arrival('/sealed');
    expect(hit.headers['x-gitlab-token']).toBe('tok-in-header');
    expect(hit.headers.authorization).toBe(`Basic ${Buffer.from('deploy:pa55-in-url').toString('base64')}`);
    // The delivery log shows where it delivered, without the credentials.
    const log = (await eventually(async () => {
      const r = await as(owner.token).get(`/projects/${project.id}/hooks/${res.body.id}/events`);
      return r.body.length ? r.body : false;
    })) as { url: string }[];
    expect(log[0].url).toBe(`http://127.0.0.1:${port}/sealed`);
    expect(await databaseText()).not.toMatch(/pa55-in-url|tok-in-header/);
  });

  it('keeps the stored URL when a PUT sends back the masked one, and replaces the token as GitLab does', async () => {
    const project = await newProject('Resaved');
    const url = `http://deploy:kept-pass@127.0.0.1:${port}/resaved`;
    const hook = (await as(owner.token).post(`/projects/${project.id}/hooks`).send({ url, token: 'old-token' })).body;
    const put = await as(owner.token)
      .put(`/projects/${project.id}/hooks/${hook.id}`)
      .send({ url: hook.url, token: 'new-token', push_events: true });
    expect(put.status).toBe(200);
    expect(put.body.url).toBe(hook.url);
    await push(project);
    const hit = await arrival('/resaved');
    expect(hit.headers['x-gitlab-token']).toBe('new-token');
    expect(hit.headers.authorization).toBe(`Basic ${Buffer.from('deploy:kept-pass').toString('base64')}`);
    expect(await databaseText()).not.toMatch(/old-token|new-token|kept-pass/);
  });

  it('removes the secrets with the hook, and with a deleted project', async () => {
    const before = await secretRows();
    const project = await newProject('Gone');
    const a = (
      await as(owner.token)
        .post(`/projects/${project.id}/hooks`)
        .send({ url: `http://127.0.0.1:${port}/a`, token: 'x1' })
    ).body;
    await as(owner.token)
      .post(`/projects/${project.id}/hooks`)
      .send({ url: `http://127.0.0.1:${port}/b`, token: 'x2' });
    await as(owner.token)
      .post(`/projects/${project.id}/hooks`)
      .send({ url: `http://127.0.0.1:${port}/c` });
    expect(await secretRows()).toBe(before + 2);
    expect((await as(owner.token).delete(`/projects/${project.id}/hooks/${a.id}`)).status).toBe(204);
    expect(await secretRows()).toBe(before + 1);
    expect([202, 204]).toContain((await as(owner.token).delete(`/projects/${project.id}`)).status);
    await eventually(async () => (await secretRows()) === before);
  });

  it('survives a projection rebuild: the secrets are not a read model', async () => {
    const project = await newProject('Rebuilt');
    await as(owner.token)
      .post(`/projects/${project.id}/hooks`)
      .send({ url: `http://127.0.0.1:${port}/rebuilt`, token: 'after-rebuild' });
    await t.app.get(ProjectionRebuilder).rebuild();
    await push(project);
    const hit = await arrival('/rebuilt');
    expect(hit.headers['x-gitlab-token']).toBe('after-rebuild');
  });
});

describeOnServers('hook secrets migration', () => {
  it('moves existing secrets out of the events and the read model, sealed with the key', async () => {
    const config = testConfig({ secretKey: 'migration test key' });
    config.dataDir = tempDirs().make();
    const before = MIGRATIONS.filter((m) => m !== HookSecrets1763780000700);
    await runMigrations(config, before);
    const db = new DataSource(dataSourceOptions(config));
    await db.initialize();
    try {
      // The shape the events had before: the token and the URL in clear.
      const settings = {
        url: 'https://user:old-pass@hooks.example.com/p',
        token: 'old-token',
        enableSslVerification: true,
        events: { pushEvents: true },
      };
      await db.query(
        `insert into events (stream_id, stream_version, type, data, metadata) values
           ('hook-1', 1, 'ProjectHookAdded', $1, '{}'), ('hook-1', 2, 'ProjectHookUpdated', $2, '{}')`,
        [
          JSON.stringify({ hookId: 1, projectId: 5, ...settings, at: '2026-01-01T00:00:00Z' }),
          JSON.stringify({ hookId: 1, projectId: 5, settings, at: '2026-01-01T00:00:00Z' }),
        ],
      );
      await db.query(`alter table project_hooks drop constraint if exists project_hooks_project_id_fkey`);
      await db.query(
        `insert into project_hooks (id, project_id, url, token, push_events, tag_push_events, issues_events, merge_requests_events,
           note_events, job_events, pipeline_events, wiki_page_events, enable_ssl_verification, created_at)
         values (1, 5, $1, 'old-token', true, false, false, false, false, false, false, false, true, now())`,
        [settings.url],
      );

      await runMigrations(config, MIGRATIONS);

      const events = JSON.stringify(await db.query(`select data from events where stream_id = 'hook-1'`));
      expect(events).not.toMatch(/old-pass|old-token/);
      expect(events).toContain('https://user:*****@hooks.example.com/p');
      const [hook] = await db.query(`select * from project_hooks where id = 1`);
      expect(hook.url).toBe('https://user:*****@hooks.example.com/p');
      expect(hook).not.toHaveProperty('token');
      const [{ sealed }] = await db.query(`select sealed from project_hook_secrets where hook_id = 1`);
      expect(JSON.parse(SecretBox.forConfig(config).open(sealed))).toEqual({
        token: 'old-token',
        url: 'https://user:old-pass@hooks.example.com/p',
      });
    } finally {
      await db.destroy();
      await dropDatabase(config.databaseUrl);
    }
  });
});
