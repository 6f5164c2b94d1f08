import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { gitOk, tempDirs } from '../support/git';
import { verifyStandardWebhook } from '../support/standard-webhooks';
import { createUser, type SeededUser } from '../support/seed';
import { eventually, startTestApp, type TestApp } from '../support/test-app';
import { startWebhookReceiver, type Delivery, type WebhookReceiver } from '../support/webhook-receiver';

/** One entry of a hook's delivery log, as the API answers it. */
interface LogEntry {
  attempt: number;
  response_status: number | 'skipped' | null;
  error: string | null;
  skipped: boolean;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const BASE_MS = 6000;

describe('webhooks you can trust: headers, signatures, auto-disabling', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let hookBase: string;
  let owner: SeededUser;
  let project: { id: number; path_with_namespace: string };
  /** Failures still to answer per path; -1: fail every time. */
  const failuresLeft = new Map<string, number>();
  const tmp = tempDirs();
  let remote: string;
  let work: string;
  let files = 0;
  const signingToken = `whsec_${randomBytes(32).toString('base64')}`;

  const api = {
    get: (path: string) => t.http().get(`/api/v4${path}`).set('PRIVATE-TOKEN', owner.token),
    post: (path: string) => t.http().post(`/api/v4${path}`).set('PRIVATE-TOKEN', owner.token),
    put: (path: string) => t.http().put(`/api/v4${path}`).set('PRIVATE-TOKEN', owner.token),
  };
  const at = (path: string) => receiver.at(path);
  /** The requests `path` has received once it has received more than `n`. */
  const moreThan = async (path: string, n: number, timeoutMs?: number): Promise<Delivery[]> => {
    await eventually(() => at(path).length > n, timeoutMs);
    return at(path);
  };
  async function addHook(path: string, settings: Record<string, unknown> = {}): Promise<number> {
    const res = await api.post(`/projects/${project.id}/hooks`).send({ url: `${hookBase}${path}`, ...settings });
    expect(res.status).toBe(201);
    return res.body.id;
  }
  async function push(): Promise<void> {
    files += 1;
    writeFileSync(join(work, `f${files}.txt`), `${files}\n`);
    await gitOk(['add', '.'], work);
    await gitOk(['commit', '-q', '-m', `file ${files}`], work);
    await gitOk(['push', '-q', remote, 'master'], work);
  }
  async function log(hookId: number): Promise<LogEntry[]> {
    const res = await api.get(`/projects/${project.id}/hooks/${hookId}/events?per_page=100`);
    expect(res.status).toBe(200);
    return res.body;
  }
  const hook = async (hookId: number) => (await api.get(`/projects/${project.id}/hooks/${hookId}`)).body;

  beforeAll(async () => {
    receiver = await startWebhookReceiver(({ path }) => {
      const left = failuresLeft.get(path) ?? 0;
      if (left !== 0) {
        if (left > 0) failuresLeft.set(path, left - 1);
        return { status: 500, body: 'not now' };
      }
      if (path === '/moved') return { status: 302, headers: { Location: `${hookBase}/elsewhere` } };
      return 200;
    });
    hookBase = receiver.url;
    t = await startTestApp({
      allowLocalWebhooks: true,
      webhookTimeoutMs: 1000,
      webhookRetryDelayMs: 200,
      webhookDisableBaseMs: BASE_MS,
      defaultBranchProtection: 0,
    });
    await t.app.listen(0, '127.0.0.1');
    owner = await createUser(t);
    project = (await api.post('/projects').send({ name: 'Trusted', visibility: 'private' })).body;
    remote = `http://git:${owner.token}@127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}/${project.path_with_namespace}.git`;
    work = tmp.make();
    await gitOk(['init', '-q', '-b', 'master', work]);
  });
  afterAll(async () => {
    tmp.removeAll();
    await t.close();
    await receiver.close();
  });

  it('sends every header, and a Standard Webhooks signature only for a hook with a signing_token', async () => {
    const signed = await addHook('/signed', { token: 'plain-token', signing_token: signingToken });
    const unsigned = await addHook('/unsigned');
    await push();
    const [hit] = await moreThan('/signed', 0);
    const [plain] = await moreThan('/unsigned', 0);

    expect(hit.headers).toMatchObject({
      'content-type': 'application/json',
      'x-gitlab-event': 'Push Hook',
      'x-gitlab-token': 'plain-token',
      'x-gitlab-instance': 'http://lode.test',
    });
    expect(hit.headers['user-agent']).toMatch(/^GitLab\/10\.8\.0 Lode\/\d+\.\d+\.\d+/);
    expect(hit.headers['x-gitlab-event-uuid']).toMatch(UUID);
    expect(hit.headers['x-gitlab-webhook-uuid']).toMatch(UUID);
    expect(hit.headers['idempotency-key']).toMatch(UUID);
    // One UUID per hook, one event UUID and idempotency key per delivery.
    expect(plain.headers['x-gitlab-webhook-uuid']).toMatch(UUID);
    expect(plain.headers['x-gitlab-webhook-uuid']).not.toBe(hit.headers['x-gitlab-webhook-uuid']);
    expect(plain.headers['idempotency-key']).not.toBe(hit.headers['idempotency-key']);

    expect(hit.headers['webhook-id']).toBe(hit.headers['idempotency-key']);
    expect(hit.headers['webhook-timestamp']).toMatch(/^\d{10}$/);
    expect(hit.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(verifyStandardWebhook(signingToken, hit.headers, hit.raw)).toBe(true);
    // A changed body, another secret, or a replayed old timestamp is refused.
    expect(verifyStandardWebhook(signingToken, hit.headers, hit.raw.replace('"push"', '"pusH"'))).toBe(false);
    expect(verifyStandardWebhook(`whsec_${randomBytes(32).toString('base64')}`, hit.headers, hit.raw)).toBe(false);
    expect(
      verifyStandardWebhook(
        signingToken,
        { ...hit.headers, 'webhook-timestamp': String(Number(hit.headers['webhook-timestamp']) - 600) },
        hit.raw,
      ),
    ).toBe(false);

    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature'])
      expect(plain.headers[name]).toBeUndefined();
    expect(plain.headers['x-gitlab-token']).toBeUndefined();

    // The next delivery to the same hook: the same hook UUID, a new idempotency key.
    await push();
    const second = (await moreThan('/signed', 1))[1];
    expect(second.headers['x-gitlab-webhook-uuid']).toBe(hit.headers['x-gitlab-webhook-uuid']);
    expect(second.headers['idempotency-key']).not.toBe(hit.headers['idempotency-key']);
    expect(verifyStandardWebhook(signingToken, second.headers, second.raw)).toBe(true);

    expect((await hook(signed)).alert_status).toBe('executable');
    expect((await hook(unsigned)).disabled_until).toBeNull();
  });

  it('keeps the Idempotency-Key and webhook-id across the retries of one delivery', async () => {
    await addHook('/flaky', { signing_token: signingToken });
    failuresLeft.set('/flaky', 2);
    await push();
    const hits = await moreThan('/flaky', 2, 15_000);
    expect(hits.map((h) => h.headers['idempotency-key'])).toEqual(Array(3).fill(hits[0].headers['idempotency-key']));
    expect(new Set(hits.map((h) => h.headers['webhook-id'])).size).toBe(1);
    expect(new Set(hits.map((h) => h.headers['x-gitlab-event-uuid'])).size).toBe(1);
    // Each attempt is signed with its own timestamp, and each verifies.
    for (const h of hits) expect(verifyStandardWebhook(signingToken, h.headers, h.raw)).toBe(true);
  });

  it('never answers, logs or records the signing_token', async () => {
    const secret = `whsec_${randomBytes(24).toString('base64')}`;
    const created = await api
      .post(`/projects/${project.id}/hooks`)
      .send({ url: `${hookBase}/quiet`, signing_token: secret });
    expect(created.status).toBe(201);
    const id = created.body.id;
    const answers = [
      created,
      await api.get(`/projects/${project.id}/hooks/${id}`),
      await api.get(`/projects/${project.id}/hooks`),
      await api.put(`/projects/${project.id}/hooks/${id}`).send({ url: `${hookBase}/quiet`, signing_token: secret }),
    ];
    for (const res of answers) {
      expect(res.status).toBe(200 + (res === created ? 1 : 0));
      expect(JSON.stringify(res.body)).not.toContain(secret.slice(6));
      expect(JSON.stringify(res.body)).not.toContain('whsec_');
    }
    await push();
    const entries = await eventually(async () => {
      const l = await log(id);
      return l.length ? l : false;
    });
    expect(JSON.stringify(entries)).not.toContain('whsec_');
    // Never in an event, nor in plain text anywhere in the database's hook tables.
    const [{ n }] = await t.db.query(`select count(*)::int as n from events where data::text like '%whsec_%'`);
    expect(n).toBe(0);
    const [{ m }] = await t.db.query(`select count(*)::int as m from project_hook_secrets where sealed like $1`, [
      `%${secret.slice(6, 20)}%`,
    ]);
    expect(m).toBe(0);

    // A PUT without signing_token keeps it: the next delivery is still signed with it.
    expect((await api.put(`/projects/${project.id}/hooks/${id}`).send({ url: `${hookBase}/quiet` })).status).toBe(200);
    const before = at('/quiet').length;
    await push();
    const next = (await moreThan('/quiet', before))[before];
    expect(verifyStandardWebhook(secret, next.headers, next.raw)).toBe(true);
    // An empty one removes it.
    expect(
      (await api.put(`/projects/${project.id}/hooks/${id}`).send({ url: `${hookBase}/quiet`, signing_token: '' }))
        .status,
    ).toBe(200);
    const count = at('/quiet').length;
    await push();
    const unsigned = (await moreThan('/quiet', count))[count];
    expect(unsigned.headers['webhook-signature']).toBeUndefined();
  });

  it('answers 400 to a signing_token that is not whsec_ and the base64 of 24 to 64 bytes', async () => {
    const id = await addHook('/unused', { push_events: false });
    for (const bad of [
      'secret',
      randomBytes(32).toString('base64'),
      `whsec_${randomBytes(16).toString('base64')}`,
      `whsec_${randomBytes(65).toString('base64')}`,
      'whsec_not*base64!!',
      'whsec_',
    ]) {
      const created = await api
        .post(`/projects/${project.id}/hooks`)
        .send({ url: `${hookBase}/x`, signing_token: bad });
      expect(created.status).toBe(400);
      expect(created.body.error).toMatch(/^signing_token is invalid/);
      if (bad.length > 12) expect(JSON.stringify(created.body)).not.toContain(bad);
      const updated = await api
        .put(`/projects/${project.id}/hooks/${id}`)
        .send({ url: `${hookBase}/x`, signing_token: bad });
      expect(updated.status).toBe(400);
    }
    const [{ n }] = await t.db.query(`select count(*)::int as n from project_hooks where url like '%/x'`);
    expect(n).toBe(0);
    expect(
      (
        await api.post(`/projects/${project.id}/hooks`).send({
          url: `${hookBase}/x64`,
          signing_token: `whsec_${randomBytes(64).toString('base64')}`,
          push_events: false,
        })
      ).status,
    ).toBe(201);
  });

  it('disables a hook for a while after 4 failed requests, skips and logs its deliveries meanwhile, and enables it after the window or an edit', async () => {
    const id = await addHook('/dead');
    failuresLeft.set('/dead', -1);
    await push();
    // One delivery's 4 attempts are 4 failed requests.
    await eventually(async () => (await log(id)).length === 4, 15_000);
    const disabled = await hook(id);
    expect(disabled.alert_status).toBe('temporarily_disabled');
    const until = Date.parse(disabled.disabled_until);
    const fourth = at('/dead')[3].at;
    expect(until).toBeGreaterThanOrEqual(fourth + BASE_MS - 1000);
    expect(until).toBeLessThanOrEqual(fourth + BASE_MS + 2000);

    // Meanwhile a push is not sent to it, and its delivery log says so.
    const sent = at('/dead').length;
    await push();
    await eventually(async () => (await log(id)).length === 5);
    const [skipped] = await log(id);
    expect(Date.now()).toBeLessThan(until);
    expect(skipped).toMatchObject({ skipped: true, response_status: 'skipped', attempt: 1 });
    expect(skipped.error).toMatch(/temporarily disabled/);
    expect(at('/dead')).toHaveLength(sent);
    expect((await log(id)).slice(1).every((e) => e.skipped === false)).toBe(true);

    // After the window it is sent to again; a delivered request forgets the failures.
    failuresLeft.set('/dead', 0);
    await new Promise((r) => setTimeout(r, Math.max(0, until - Date.now() + 100)));
    expect((await hook(id)).alert_status).toBe('executable');
    await push();
    await eventually(() => at('/dead').length === sent + 1);
    await eventually(async () => (await log(id)).length === 6);
    expect(await hook(id)).toMatchObject({ alert_status: 'executable', disabled_until: null });

    // Failing again disables it again; an edit enables it at once.
    failuresLeft.set('/dead', -1);
    await push();
    await eventually(async () => (await hook(id)).alert_status === 'temporarily_disabled', 15_000);
    const edited = await api.put(`/projects/${project.id}/hooks/${id}`).send({ url: `${hookBase}/dead` });
    expect(edited.status).toBe(200);
    expect(edited.body).toMatchObject({ alert_status: 'executable', disabled_until: null });
  });

  it('does not count redirects towards disabling (GitLab files a 3xx as ok), though it retries them', async () => {
    const id = await addHook('/moved');
    await push();
    await eventually(async () => (await log(id)).length === 4, 15_000);
    expect((await log(id)).map((e) => e.response_status)).toEqual([302, 302, 302, 302]);
    expect(await hook(id)).toMatchObject({ alert_status: 'executable', disabled_until: null });
    const [{ n }] = await t.db.query(`select count(*)::int as n from hook_failures where hook_id = $1`, [id]);
    expect(n).toBe(0);
  });

  it('keeps a hook at its 40th consecutive failure disabled until it is edited', async () => {
    const id = await addHook('/forty');
    // Forty failures take days of backoff: the failure table is driven directly.
    await t.db.query(
      `insert into hook_failures (hook_kind, hook_id, recent_failures, disabled_until) values ('project', $1, 40, now() - interval '1 day')`,
      [id],
    );
    expect(await hook(id)).toMatchObject({ alert_status: 'disabled' });
    await push();
    await eventually(async () => (await log(id)).length > 0);
    const [skipped] = await log(id);
    expect(skipped).toMatchObject({ skipped: true, response_status: 'skipped' });
    expect(skipped.error).toMatch(/is disabled/);
    expect(at('/forty')).toHaveLength(0);
    const edited = await api.put(`/projects/${project.id}/hooks/${id}`).send({ url: `${hookBase}/forty` });
    expect(edited.body).toMatchObject({ alert_status: 'executable', disabled_until: null });
    await push();
    await eventually(() => at('/forty').length === 1);
    const [{ n }] = await t.db.query(`select count(*)::int as n from hook_failures where hook_id = $1`, [id]);
    expect(n).toBe(0);
  });
});
