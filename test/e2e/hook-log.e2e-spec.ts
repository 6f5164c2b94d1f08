import { DeliveryLog, WEBHOOKS_QUEUE } from '@app/hooks';
import { getQueueToken } from '@nestjs/bullmq';
import type { Queue } from 'bullmq';
import { ProjectionRebuilder } from '@app/platform';
import { writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { gitOk, tempDirs } from '../support/git';
import { createUser, type SeededUser } from '../support/seed';
import { eventually, startTestApp, type TestApp } from '../support/test-app';
import { startWebhookReceiver, type Delivery, type WebhookReceiver } from '../support/webhook-receiver';

/** One entry of the delivery log as the API answers it (read field by field). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Entry = Record<string, any>;

const BIG = 'x'.repeat(20_000);

describe('the webhook delivery log (GitLab 17.x shape), test hooks, resend, retention', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let hookBase: string;
  let owner: SeededUser;
  let developer: SeededUser;
  let project: { id: number; path_with_namespace: string };
  const tmp = tempDirs();
  let remote: string;
  let work: string;
  let ok: number;

  const as = (token: string) => ({
    get: (path: string) => t.http().get(`/api/v4${path}`).set('PRIVATE-TOKEN', token),
    post: (path: string) => t.http().post(`/api/v4${path}`).set('PRIVATE-TOKEN', token),
  });
  const at = (path: string) => receiver.at(path);
  async function addHook(path: string, settings: Record<string, unknown> = {}): Promise<number> {
    const res = await as(owner.token)
      .post(`/projects/${project.id}/hooks`)
      .send({ url: `${hookBase}${path}`, ...settings });
    expect(res.status).toBe(201);
    return res.body.id;
  }
  async function log(hookId: number): Promise<Entry[]> {
    const res = await as(owner.token).get(`/projects/${project.id}/hooks/${hookId}/events?per_page=100`);
    expect(res.status).toBe(200);
    return res.body;
  }
  async function commit(file: string): Promise<string> {
    writeFileSync(join(work, file), `${file}\n`);
    await gitOk(['add', '.'], work);
    await gitOk(['commit', '-q', '-m', `add ${file}`], work);
    return (await gitOk(['rev-parse', 'HEAD'], work)).trim();
  }
  const disable = (hookId: number) =>
    t.db.query(
      `insert into hook_failures (hook_kind, hook_id, recent_failures, disabled_until) values ('project', $1, 40, null)
         on conflict (hook_kind, hook_id) do update set recent_failures = 40, disabled_until = null`,
      [hookId],
    );

  beforeAll(async () => {
    receiver = await startWebhookReceiver(({ path }) => {
      if (path === '/fail') return { status: 500, headers: { 'Content-Type': 'text/plain' }, body: 'nope' };
      if (path === '/big') return { status: 200, headers: { 'Content-Type': 'text/plain' }, body: BIG };
      return { status: 200, headers: { 'Content-Type': 'application/json', 'X-Receiver': 'yes' }, body: '{"ok":true}' };
    });
    hookBase = receiver.url;
    t = await startTestApp({
      allowLocalWebhooks: true,
      webhookTimeoutMs: 1000,
      webhookRetryDelayMs: 200,
      defaultBranchProtection: 0,
    });
    await t.app.listen(0, '127.0.0.1');
    owner = await createUser(t);
    developer = await createUser(t);
    project = (await as(owner.token).post('/projects').send({ name: 'Logged', visibility: 'private' })).body;
    expect(
      (await as(owner.token).post(`/projects/${project.id}/members`).send({ user_id: developer.id, access_level: 30 }))
        .status,
    ).toBe(201);
    remote = `http://git:${owner.token}@127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}/${project.path_with_namespace}.git`;
    work = tmp.make();
    await gitOk(['init', '-q', '-b', 'master', work]);
    ok = await addHook('/ok', { token: 's3cret-token', tag_push_events: true });
  });
  afterAll(async () => {
    tmp.removeAll();
    await t.close();
    await receiver.close();
  });

  it('answers a test of a project without commits as GitLab does, and an unknown trigger 400', async () => {
    const empty = await as(owner.token).post(`/projects/${project.id}/hooks/${ok}/test/push_events`);
    expect([empty.status, empty.body]).toEqual([422, { message: 'Ensure the project has at least one commit.' }]);
    const unknown = await as(owner.token).post(`/projects/${project.id}/hooks/${ok}/test/wiki_events`);
    expect([unknown.status, unknown.body]).toEqual([400, { error: 'trigger does not have a valid value' }]);
    expect((await as(owner.token).post(`/projects/${project.id}/hooks/999999/test/push_events`)).status).toBe(404);
    expect(at('/ok')).toHaveLength(0);
  });

  it("logs each delivery in later GitLab's shape, the token redacted", async () => {
    for (const f of ['a', 'b', 'c']) await commit(`${f}.txt`);
    await commit('d.txt');
    await gitOk(['push', '-q', remote, 'master'], work);
    const [hit] = (await eventually(() => (at('/ok').length ? at('/ok') : false))) as Delivery[];
    const [entry] = (await eventually(async () => {
      const entries = await log(ok);
      return entries.length ? entries : false;
    })) as Entry[];
    expect(entry).toMatchObject({
      url: `${hookBase}/ok`,
      trigger: 'push_hooks',
      request_data: hit.body,
      response_status: 200,
      response_body: '{"ok":true}',
      event_uuid: hit.headers['x-gitlab-event-uuid'],
      attempt: 1,
      error: null,
      skipped: false,
    });
    expect(typeof entry.id).toBe('number');
    expect(typeof entry.execution_duration).toBe('number');
    expect(entry.execution_duration).toBe(entry.duration_ms / 1000);
    expect(new Date(entry.created_at).toISOString()).toBe(entry.created_at);
    expect(entry.request_headers).toMatchObject({
      'Content-Type': 'application/json',
      'X-Gitlab-Event': 'Push Hook',
      'X-Gitlab-Token': '[REDACTED]',
      'Idempotency-Key': hit.headers['idempotency-key'],
    });
    expect(JSON.stringify(entry)).not.toContain('s3cret-token');
    expect(entry.response_headers).toMatchObject({ 'x-receiver': 'yes', 'content-type': 'application/json' });
  });

  it("keeps only an answer's first 8 KB", async () => {
    const big = await addHook('/big');
    const res = await as(owner.token).post(`/projects/${project.id}/hooks/${big}/test/push_events`);
    expect([res.status, res.body]).toEqual([201, { message: '201 Created' }]);
    const [entry] = await log(big);
    expect(entry.response_body).toBe(BIG.slice(0, 8192));
  });

  it("sends the default branch's sample for push_events and the newest tag for tag_push_events", async () => {
    const head = (await gitOk(['rev-parse', 'HEAD'], work)).trim();
    const before = at('/ok').length;
    const push = await as(owner.token).post(`/projects/${project.id}/hooks/${ok}/test/push_events`);
    expect([push.status, push.body]).toEqual([201, { message: '201 Created' }]);
    const sample = at('/ok')[before];
    expect(sample.headers['x-gitlab-event']).toBe('Push Hook');
    expect(sample.body).toMatchObject({ object_kind: 'push', ref: 'refs/heads/master', after: head });
    // GitLab's build_sample: the 3 newest commits.
    expect(sample.body.commits.map((c: { message: string }) => c.message)).toEqual([
      'add b.txt\n',
      'add c.txt\n',
      'add d.txt\n',
    ]);

    await gitOk(['tag', '-a', 'v1.0', '-m', 'First release'], work);
    await gitOk(['push', '-q', remote, 'v1.0'], work);
    await eventually(() => at('/ok').some((r) => r.body.ref === 'refs/tags/v1.0'));
    const n = at('/ok').length;
    const tag = await as(owner.token).post(`/projects/${project.id}/hooks/${ok}/test/tag_push_events`);
    expect([tag.status, tag.body]).toEqual([201, { message: '201 Created' }]);
    expect(at('/ok')[n].headers['x-gitlab-event']).toBe('Tag Push Hook');
    expect(at('/ok')[n].body).toMatchObject({
      object_kind: 'tag_push',
      ref: 'refs/tags/v1.0',
      checkout_sha: head,
      message: 'First release',
    });
    const [latest] = await log(ok);
    expect(latest).toMatchObject({ trigger: 'tag_push_hooks', response_status: 200, request_data: at('/ok')[n].body });
  });

  it("answers 422 with the receiver's body when a test is not answered 2xx", async () => {
    const fail = await addHook('/fail');
    const res = await as(owner.token).post(`/projects/${project.id}/hooks/${fail}/test/push_events`);
    expect([res.status, res.body]).toEqual([422, { message: 'nope' }]);
    const [entry] = await log(fail);
    expect(entry).toMatchObject({ response_status: 500, response_body: 'nope', error: 'HTTP 500' });
  });

  it("logs a disabled hook's skipped delivery, and a test enables the hook again", async () => {
    const off = await addHook('/off');
    await disable(off);
    const hook = async () => (await as(owner.token).get(`/projects/${project.id}/hooks/${off}`)).body;
    expect((await hook()).alert_status).toBe('disabled');
    await commit('e.txt');
    await gitOk(['push', '-q', remote, 'master'], work);
    const [skipped] = (await eventually(async () => {
      const entries = await log(off);
      return entries.length ? entries : false;
    })) as Entry[];
    expect(skipped).toMatchObject({ response_status: 'skipped', skipped: true, trigger: 'push_hooks' });
    expect(at('/off')).toHaveLength(0);

    const res = await as(owner.token).post(`/projects/${project.id}/hooks/${off}/test/push_events`);
    expect(res.status).toBe(201);
    expect(at('/off')).toHaveLength(1);
    expect((await hook()).alert_status).toBe('executable');
  });

  it('resends a logged delivery with its payload and Idempotency-Key', async () => {
    const entries = await log(ok);
    const original = entries[entries.length - 1];
    const first = at('/ok')[0];
    const before = at('/ok').length;
    const res = await as(owner.token).post(`/projects/${project.id}/hooks/${ok}/events/${original.id}/resend`);
    expect([res.status, res.body]).toEqual([201, { response_status: 200 }]);
    const again = at('/ok')[before];
    expect(again.body).toEqual(first.body);
    expect(again.headers['idempotency-key']).toBe(first.headers['idempotency-key']);
    expect(again.headers['x-gitlab-event-uuid']).toBe(first.headers['x-gitlab-event-uuid']);
    const [logged] = await log(ok);
    expect(logged).toMatchObject({ event_uuid: original.event_uuid, attempt: 2, response_status: 200 });

    // An entry logged before payloads were kept (copied from the old log by the migration).
    const [{ id: old }] = (await t.db.query(
      `insert into hook_delivery_log (hook_id, event_uuid, event, url, attempt, response_status, duration_ms, created_at)
         values ($1, gen_random_uuid(), 'Push Hook', $2, 1, 200, 5, now() - interval '1 day') returning id`,
      [ok, `${hookBase}/ok`],
    )) as { id: string }[];
    const unsendable = await as(owner.token).post(`/projects/${project.id}/hooks/${ok}/events/${old}/resend`);
    expect([unsendable.status, unsendable.body]).toEqual([
      422,
      { message: 'This webhook event has no payload to resend' },
    ]);
    await t.db.query(`delete from hook_delivery_log where id = $1`, [old]);

    const other = await addHook('/other');
    for (const path of [
      `/projects/${project.id}/hooks/${ok}/events/99999999/resend`,
      `/projects/${project.id}/hooks/${ok}/events/abc/resend`,
      // Another hook's entry is not this hook's.
      `/projects/${project.id}/hooks/${other}/events/${original.id}/resend`,
    ])
      expect((await as(owner.token).post(path)).status).toBe(404);
  });

  it('is for maintainers: a developer is refused', async () => {
    const [entry] = await log(ok);
    const n = at('/ok').length;
    for (const res of [
      await as(developer.token).get(`/projects/${project.id}/hooks/${ok}/events`),
      await as(developer.token).post(`/projects/${project.id}/hooks/${ok}/test/push_events`),
      await as(developer.token).post(`/projects/${project.id}/hooks/${ok}/events/${entry.id}/resend`),
    ])
      expect(res.status).toBe(403);
    expect(at('/ok')).toHaveLength(n);
  });

  it("keeps the log through a read model rebuild, and removes a hook's log with the hook", async () => {
    // The hook that answers: another's retries may still be arriving.
    const count = async () =>
      (
        (await t.db.query(`select count(*)::int as n from hook_delivery_log where hook_id = $1`, [ok])) as {
          n: number;
        }[]
      )[0].n;
    const n = await count();
    await t.app.get(ProjectionRebuilder).rebuild();
    expect(await count()).toBe(n);
    const gone = await addHook('/gone');
    expect((await as(owner.token).post(`/projects/${project.id}/hooks/${gone}/test/push_events`)).status).toBe(201);
    const rows = () => t.db.query(`select id from hook_delivery_log where hook_id = $1`, [gone]);
    expect(await rows()).toHaveLength(1);
    expect(
      (await t.http().delete(`/api/v4/projects/${project.id}/hooks/${gone}`).set('PRIVATE-TOKEN', owner.token)).status,
    ).toBe(204);
    expect(await rows()).toHaveLength(0);
  });

  it('removes entries older than LODE_WEBHOOK_LOG_DAYS', async () => {
    const entries = await log(ok);
    expect(entries.length).toBeGreaterThan(2);
    const [newest, ...older] = entries;
    await t.db.query(`update hook_delivery_log set created_at = now() - interval '31 days' where id = any($1)`, [
      older.map((e) => e.id),
    ]);
    expect(t.config.webhookLogDays).toBe(30);
    expect(await t.app.get(DeliveryLog).prune(t.config.webhookLogDays)).toBeGreaterThanOrEqual(older.length);
    expect((await log(ok)).map((e) => e.id)).toEqual([newest.id]);
    // The job that runs it is scheduled, repeating, where workers run.
    const queue = t.app.get<Queue>(getQueueToken(WEBHOOKS_QUEUE));
    const scheduler = await queue.getJobScheduler('prune-delivery-log');
    expect(scheduler).toMatchObject({ every: 60 * 60 * 1000 });
  });
});
