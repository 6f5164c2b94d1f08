import { randomBytes } from 'node:crypto';
import { createUser } from '../support/seed';
import { verifyStandardWebhook } from '../support/standard-webhooks';
import { eventually, startTestApp, type TestApp } from '../support/test-app';
import { startWebhookReceiver, type Delivery, type WebhookReceiver } from '../support/webhook-receiver';

const whsec = (bytes = 32) => `whsec_${randomBytes(bytes).toString('base64')}`;

/*
 * System hooks take `signing_token` as project hooks do (webhook-trust.e2e-spec.ts): their deliveries
 * and their test carry the Standard Webhooks headers; `PUT /hooks/:id` (GitLab 16.x/17.x) edits one;
 * removing a hook removes its `hook_failures` row.
 */
describe('system hooks: signing_token, PUT, removal', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let hookBase: string;

  const root = {
    get: (path: string) => t.http().get(`/api/v4${path}`).set('PRIVATE-TOKEN', t.rootToken),
    post: (path: string) => t.http().post(`/api/v4${path}`).set('PRIVATE-TOKEN', t.rootToken),
    put: (path: string) => t.http().put(`/api/v4${path}`).set('PRIVATE-TOKEN', t.rootToken),
    delete: (path: string) => t.http().delete(`/api/v4${path}`).set('PRIVATE-TOKEN', t.rootToken),
  };
  const at = (path: string) => receiver.at(path);
  /** The requests to `path` once there are more than `count`. */
  const moreThan = (path: string, count: number) =>
    eventually(() => (at(path).length > count ? at(path) : false)) as Promise<Delivery[]>;
  const userCreatedAt = (path: string, userId: number) =>
    eventually(() => {
      const hit = at(path).find((r) => {
        const body = JSON.parse(r.raw) as { event_name: string; user_id: number };
        return body.event_name === 'user_create' && body.user_id === userId;
      });
      return hit ?? false;
    }) as Promise<Delivery>;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    hookBase = receiver.url;
    t = await startTestApp({ allowLocalWebhooks: true, webhookTimeoutMs: 1000, webhookRetryDelayMs: 200 });
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  it('signs deliveries and the test of a hook with a signing_token, never answering or recording it', async () => {
    const secret = whsec();
    const created = await root
      .post('/hooks')
      .send({ url: `${hookBase}/signed`, token: 'sys-token', signing_token: secret });
    expect(created.status).toBe(201);
    const unsigned = await root.post('/hooks').send({ url: `${hookBase}/unsigned` });
    expect(unsigned.status).toBe(201);

    const user = await createUser(t);
    const hit = await userCreatedAt('/signed', user.id);
    expect(hit.headers).toMatchObject({ 'x-gitlab-event': 'System Hook', 'x-gitlab-token': 'sys-token' });
    // webhook-id is the Idempotency-Key, as for project hooks.
    expect(hit.headers['webhook-id']).toBe(hit.headers['idempotency-key']);
    expect(hit.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(verifyStandardWebhook(secret, hit.headers, hit.raw)).toBe(true);
    expect(verifyStandardWebhook(secret, hit.headers, hit.raw.replace('user_create', 'user_destroy'))).toBe(false);
    expect(verifyStandardWebhook(whsec(), hit.headers, hit.raw)).toBe(false);
    // A hook without one gets no Standard Webhooks headers.
    const plain = await userCreatedAt('/unsigned', user.id);
    expect(plain.headers['webhook-signature']).toBeUndefined();
    expect(plain.headers['webhook-id']).toBeUndefined();

    // The test (POST /hooks/:id) is signed too, with an id of its own.
    const before = at('/signed').length;
    const tested = await root.post(`/hooks/${created.body.id}`);
    expect(tested.status).toBe(201);
    const test = (await moreThan('/signed', before))[before];
    expect(JSON.parse(test.raw)).toMatchObject({ event_name: 'project_create', name: 'Ruby' });
    expect(verifyStandardWebhook(secret, test.headers, test.raw)).toBe(true);
    expect(test.headers['webhook-id']).not.toBe(hit.headers['webhook-id']);

    const answers = [created, tested, await root.get(`/hooks/${created.body.id}`), await root.get('/hooks')];
    for (const res of answers) expect(JSON.stringify(res.body)).not.toContain('whsec_');
    const [{ n }] = await t.db.query(`select count(*)::int as n from events where data::text like '%whsec_%'`);
    expect(n).toBe(0);
    const [{ m }] = await t.db.query(`select count(*)::int as m from system_hook_secrets where sealed like $1`, [
      `%${secret.slice(6, 20)}%`,
    ]);
    expect(m).toBe(0);
    await root.delete(`/hooks/${created.body.id}`);
    await root.delete(`/hooks/${unsigned.body.id}`);
  });

  it.each([
    ['no prefix', randomBytes(32).toString('base64')],
    ['too short', whsec(16)],
    ['too long', whsec(65)],
    ['not base64', 'whsec_not*base64'],
  ])('answers 400 to a signing_token with %s, on POST and PUT', async (_why, bad) => {
    const created = await root.post('/hooks').send({ url: `${hookBase}/bad`, signing_token: bad });
    expect(created.status).toBe(400);
    expect(created.body.error).toMatch(/^signing_token is invalid/);
    const hook = await root.post('/hooks').send({ url: `${hookBase}/bad` });
    const updated = await root.put(`/hooks/${hook.body.id}`).send({ signing_token: bad });
    expect(updated.status).toBe(400);
    expect(updated.body.error).toMatch(/^signing_token is invalid/);
    await root.delete(`/hooks/${hook.body.id}`);
  });

  it('PUT /hooks/:id changes what it gives, keeps the rest and the secrets, 404 for an unknown hook', async () => {
    const secret = whsec(24);
    const created = await root
      .post('/hooks')
      .send({ url: `${hookBase}/put`, token: 'kept', signing_token: secret, push_events: true });
    const id = created.body.id as number;
    const updated = await root.put(`/hooks/${id}`).send({ tag_push_events: true, enable_ssl_verification: false });
    expect(updated.status).toBe(200);
    expect(updated.body).toEqual({
      ...created.body,
      tag_push_events: true,
      enable_ssl_verification: false,
    });
    expect((await root.get(`/hooks/${id}`)).body).toEqual(updated.body);
    // Token and signing token kept: the next delivery carries both.
    const user = await createUser(t);
    const hit = await userCreatedAt('/put', user.id);
    expect(hit.headers['x-gitlab-token']).toBe('kept');
    expect(verifyStandardWebhook(secret, hit.headers, hit.raw)).toBe(true);

    // A new URL without a token drops the old token (GitLab's reset_token); an empty signing_token removes it.
    const moved = await root.put(`/hooks/${id}`).send({ url: `${hookBase}/moved`, signing_token: '' });
    expect(moved.status).toBe(200);
    expect(moved.body.url).toBe(`${hookBase}/moved`);
    const other = await createUser(t);
    const next = await userCreatedAt('/moved', other.id);
    expect(next.headers['x-gitlab-token']).toBeUndefined();
    expect(next.headers['webhook-signature']).toBeUndefined();
    const [{ n }] = await t.db.query(`select count(*)::int as n from system_hook_secrets where hook_id = $1`, [id]);
    expect(n).toBe(0);

    expect((await root.put('/hooks/999999').send({ push_events: true })).status).toBe(404);
    // The URL's validation is POST's.
    const badUrl = { url: 'ftp://example.com/hook' };
    const refusedPost = await root.post('/hooks').send(badUrl);
    const refusedPut = await root.put(`/hooks/${id}`).send(badUrl);
    expect(refusedPost.status).toBeGreaterThanOrEqual(400);
    expect(refusedPost.status).toBeLessThan(500);
    expect([refusedPut.status, refusedPut.body]).toEqual([refusedPost.status, refusedPost.body]);
    const nonAdmin = await createUser(t);
    expect(
      (await t.http().put(`/api/v4/hooks/${id}`).set('PRIVATE-TOKEN', nonAdmin.token).send({ push_events: true }))
        .status,
    ).toBe(403);
    await root.delete(`/hooks/${id}`);
  });

  it('removing a system hook, or a project hook, removes its hook_failures row', async () => {
    const sys = (await root.post('/hooks').send({ url: `${hookBase}/failing` })).body.id as number;
    const owner = await createUser(t);
    const project = await t
      .http()
      .post('/api/v4/projects')
      .set('PRIVATE-TOKEN', owner.token)
      .send({ name: `failing-${randomBytes(3).toString('hex')}` });
    expect(project.status).toBe(201);
    const hook = await t
      .http()
      .post(`/api/v4/projects/${project.body.id}/hooks`)
      .set('PRIVATE-TOKEN', owner.token)
      .send({ url: `${hookBase}/failing-project` });
    expect(hook.status).toBe(201);
    // As the delivery's accounting leaves them after failed requests.
    await t.db.query(
      `insert into hook_failures (hook_kind, hook_id, recent_failures) values ('system', $1, 3), ('project', $2, 3)`,
      [sys, hook.body.id],
    );
    const rows = async () =>
      (
        await t.db.query<{ hook_kind: string }[]>(
          `select hook_kind from hook_failures where (hook_kind, hook_id) in (('system', $1), ('project', $2))
           order by hook_kind`,
          [sys, hook.body.id],
        )
      ).map((r) => r.hook_kind);
    expect(await rows()).toEqual(['project', 'system']);
    expect((await root.delete(`/hooks/${sys}`)).status).toBe(204);
    expect(await rows()).toEqual(['project']);
    expect(
      (
        await t
          .http()
          .delete(`/api/v4/projects/${project.body.id}/hooks/${hook.body.id}`)
          .set('PRIVATE-TOKEN', owner.token)
      ).status,
    ).toBe(204);
    expect(await rows()).toEqual([]);
  });
});
