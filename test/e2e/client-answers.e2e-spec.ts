import type { Gitlab } from '@gitbeaker/rest' with { 'resolution-mode': 'import' };
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import * as openpgp from 'openpgp';
import { runPython } from '../support/python-gitlab';
import { createUser, type SeededUser } from '../support/seed';
import { freePort, startTestApp, type TestApp } from '../support/test-app';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

/**
 * The answers clients act on (docs/notes/gitlab-settings-pagination-and-answers.md §3-§6): 405 with
 * `Allow`, 415, the JSON 404 of unknown paths, system hooks (`GET /hooks/:id` answers, `POST` tests),
 * the GPG key create answer and `/version`, under the default settings and under
 * LODE_GITLAB_VERSION, LODE_GPG_KEY_CREATE_ANSWER=object and LODE_ALLOW_LOCAL_WEBHOOKS=true.
 */

const NOT_FOUND = { error: '404 Not Found' };
const TEST_DATA = {
  event_name: 'project_create',
  name: 'Ruby',
  path: 'ruby',
  project_id: 1,
  owner_name: 'Someone',
  owner_email: 'example@gitlabhq.com',
};

/** A request with Node's client, the path sent exactly as written (no `..` resolved on the way). */
function raw(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function armoredKey(email: string): Promise<string> {
  const { publicKey } = await openpgp.generateKey({
    type: 'ecc',
    curve: 'curve25519Legacy',
    userIDs: [{ name: 'A', email }],
    format: 'armored',
  });
  return publicKey;
}

describe('answers clients act on, default settings', () => {
  let t: TestApp;
  let port: number;
  let host: string;
  let user: SeededUser;
  const root = () => ({ 'PRIVATE-TOKEN': t.rootToken });

  beforeAll(async () => {
    port = await freePort();
    host = `http://127.0.0.1:${port}`;
    t = await startTestApp({ externalUrl: host });
    await t.app.listen(port, '127.0.0.1');
    user = await createUser(t);
  });
  afterAll(() => t.close());

  it('GET /version answers 10.8.0 and a revision', async () => {
    const res = await t.http().get('/api/v4/version').set(root());
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['revision', 'version']);
    expect(res.body.version).toBe('10.8.0');
    expect(typeof res.body.revision).toBe('string');
    expect((await t.http().get('/api/v4/version')).status).toBe(401);
  });

  describe('405, 415 and 404', () => {
    it('answers a known path asked with another method 405 with Allow, in JSON', async () => {
      for (const [method, path, allow] of [
        ['DELETE', '/api/v4/version', 'OPTIONS, GET, HEAD'],
        ['PUT', '/api/v4/projects', 'OPTIONS, GET, HEAD, POST'],
        ['POST', `/api/v4/users/${user.id}/projects`, 'OPTIONS, GET, HEAD'],
      ] as const) {
        const res = await raw(port, method, path, root());
        expect(res.status).toBe(405);
        expect(res.headers.allow).toBe(allow);
        expect(res.headers['content-type']).toBe('application/json');
        expect(JSON.parse(res.body)).toEqual({ error: '405 Not Allowed' });
      }
      const options = await raw(port, 'OPTIONS', '/api/v4/projects');
      expect(options.status).toBe(204);
      expect(options.headers.allow).toBe('OPTIONS, GET, HEAD, POST');
    });

    it('answers a body that is none of JSON, form or multipart 415 on a route that takes one', async () => {
      for (const type of ['application/xml', 'text/plain; charset=utf-8']) {
        const res = await raw(port, 'POST', '/api/v4/projects', { ...root(), 'Content-Type': type }, '<name>x</name>');
        expect(res.status).toBe(415);
        expect(JSON.parse(res.body)).toEqual({
          error: `The provided content-type '${type.split(';')[0]}' is not supported.`,
        });
      }
      expect((await t.http().get('/api/v4/projects?search=x-from-xml').set(root())).body).toEqual([]);
      // JSON, forms and multipart still create; an unknown path is still a 404.
      const json = await raw(
        port,
        'POST',
        '/api/v4/projects',
        { ...root(), 'Content-Type': 'application/json' },
        '{"name":"j"}',
      );
      expect(json.status).toBe(201);
      const form = await t.http().post('/api/v4/projects').set(root()).type('form').send({ name: 'f' });
      expect(form.status).toBe(201);
      const unknown = await raw(port, 'POST', '/api/v4/nothing', { 'Content-Type': 'application/xml' }, '<a/>');
      expect(unknown.status).toBe(404);
      expect(JSON.parse(unknown.body)).toEqual(NOT_FOUND);
    });

    it('answers every unknown path with a JSON 404, `..` and encoded ones included, never HTML', async () => {
      for (const path of [
        '/api/v4/nothing',
        '/api/v4/projects/1/nothing/here',
        '/api/v4/../../etc/passwd',
        '/api/v4/projects/../../etc/passwd',
        '/api/v4/%2e%2e/%2e%2e/etc/passwd',
        '/api/v4/projects/%2E%2E%2Fversion/x',
        '/nothing',
        '/../etc/passwd',
        '/%2e%2e/etc/passwd',
      ]) {
        const res = await raw(port, 'GET', path, root());
        expect([path, res.status]).toEqual([path, 404]);
        expect(res.headers['content-type']).toBe('application/json');
        expect(JSON.parse(res.body)).toEqual(NOT_FOUND);
      }
    });
  });

  describe('system hooks', () => {
    it('refuses a local URL saying so, 400 on `url`', async () => {
      for (const [url, text] of [
        ['http://127.0.0.1:9/hook', 'is blocked: Requests to localhost are not allowed'],
        ['http://10.1.2.3/hook', 'is blocked: Requests to the local network are not allowed'],
        ['http://192.168.1.1/hook', 'is blocked: Requests to the local network are not allowed'],
      ]) {
        const res = await t.http().post('/api/v4/hooks').set(root()).send({ url });
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ message: { url: [text] } });
      }
      expect((await t.http().get('/api/v4/hooks').set(root())).body).toEqual([]);
    });

    it('keeps a hook, shows it on GET /hooks/:id, and removes it', async () => {
      const created = await t
        .http()
        .post('/api/v4/hooks')
        .set(root())
        .send({ url: 'https://ops:s3cret@hooks.example.com/all', token: 'tok-en', push_events: true });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({
        id: expect.any(Number),
        url: 'https://ops:*****@hooks.example.com/all',
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        push_events: true,
        tag_push_events: false,
        merge_requests_events: false,
        repository_update_events: true,
        enable_ssl_verification: true,
      });
      expect(JSON.stringify(created.body)).not.toContain('tok-en');
      const one = await t.http().get(`/api/v4/hooks/${created.body.id}`).set(root());
      expect(one.status).toBe(200);
      expect(one.body).toEqual(created.body);
      const list = await t.http().get('/api/v4/hooks').set(root());
      expect(list.body).toEqual([created.body]);
      expect(list.headers['x-total']).toBe('1');
      const events = await t.db.query(`select data::text from events where stream_id = $1`, [
        `system-hook-${created.body.id}`,
      ]);
      expect(JSON.stringify(events)).not.toMatch(/s3cret|tok-en/);

      expect((await t.http().delete(`/api/v4/hooks/${created.body.id}`).set(root())).status).toBe(204);
      const gone = await t.http().get(`/api/v4/hooks/${created.body.id}`).set(root());
      expect(gone.status).toBe(404);
      expect(gone.body).toEqual({ message: '404 Not found' });
      const again = await t.http().delete(`/api/v4/hooks/${created.body.id}`).set(root());
      expect(again.status).toBe(404);
      expect(again.body).toEqual({ message: '404 System hook Not Found' });
      expect((await t.http().post(`/api/v4/hooks/${created.body.id}`).set(root())).status).toBe(404);
    });

    it('is for administrators only', async () => {
      for (const [method, path] of [
        ['get', '/api/v4/hooks'],
        ['post', '/api/v4/hooks'],
        ['get', '/api/v4/hooks/1'],
        ['post', '/api/v4/hooks/1'],
        ['delete', '/api/v4/hooks/1'],
      ] as const) {
        const asUser = await t.http()[method](path).set('PRIVATE-TOKEN', user.token).send({ url: 'https://x.example' });
        expect(asUser.status).toBe(403);
        expect((await t.http()[method](path)).status).toBe(401);
      }
      const missing = await t.http().post('/api/v4/hooks').set(root()).send({});
      expect(missing.status).toBe(400);
      expect(missing.body).toEqual({ error: 'url is missing' });
    });
  });

  describe('GPG key create answer', () => {
    it('is an array holding the key by default, which python-gitlab 3.12 cannot read', async () => {
      const key = await armoredKey('array@example.com');
      const res = await t.http().post('/api/v4/user/gpg_keys').set('PRIVATE-TOKEN', user.token).send({ key });
      expect(res.status).toBe(201);
      expect(res.body).toEqual([{ id: expect.any(Number), key: key.trim(), created_at: expect.any(String) }]);
      const admin = await t
        .http()
        .post(`/api/v4/users/${user.id}/gpg_keys`)
        .set(root())
        .send({ key: await armoredKey('b@example.com') });
      expect(admin.status).toBe(201);
      expect(Array.isArray(admin.body)).toBe(true);
      const script = `
import sys, gitlab
gl = gitlab.Gitlab(sys.argv[1], private_token=sys.argv[2])
try:
    gl.users.get(int(sys.argv[3]), lazy=True).gpgkeys.create({"key": sys.argv[4]})
    print("created")
except gitlab.exceptions.GitlabParsingError:
    print("parsing error")
`;
      const out = await runPython(script, [host, t.rootToken, String(user.id), await armoredKey('c@example.com')]);
      expect(out.trim()).toBe('parsing error');
    });
  });
});

describe('answers clients act on, under LODE_GITLAB_VERSION, LODE_GPG_KEY_CREATE_ANSWER=object, local hooks allowed', () => {
  let t: TestApp;
  let host: string;
  let user: SeededUser;
  let receiver: WebhookReceiver;
  let receiverUrl: string;
  let gb: typeof import('@gitbeaker/rest', { with: { 'resolution-mode': 'import' } });
  let api: InstanceType<typeof Gitlab<false>>;
  const root = () => ({ 'PRIVATE-TOKEN': t.rootToken });

  beforeAll(async () => {
    const port = await freePort();
    host = `http://127.0.0.1:${port}`;
    t = await startTestApp({
      externalUrl: host,
      gitlabVersion: '16.11.2-ee',
      gpgKeyCreateAnswer: 'object',
      allowLocalWebhooks: true,
    });
    await t.app.listen(port, '127.0.0.1');
    user = await createUser(t);
    receiver = await startWebhookReceiver();
    receiverUrl = `${receiver.url}/system`;
    gb = await import('@gitbeaker/rest');
    api = new gb.Gitlab({ host, token: t.rootToken });
  });
  afterAll(async () => {
    await receiver?.close();
    await t.close();
  });

  it('GET /version answers the configured version', async () => {
    const res = await t.http().get('/api/v4/version').set(root());
    expect(res.body.version).toBe('16.11.2-ee');
  });

  it('POST /hooks/:id sends the sample data to the hook and answers it (python-gitlab)', async () => {
    const script = `
import json, sys, gitlab
gl = gitlab.Gitlab(sys.argv[1], private_token=sys.argv[2])
hook = gl.hooks.create({"url": sys.argv[3], "token": "t0ken"})
got = gl.hooks.get(hook.id)
listed = [h.id for h in gl.hooks.list()]
tested = gl.http_post("/hooks/%d" % hook.id)
print(json.dumps({"id": hook.id, "got": got.attributes, "listed": listed, "tested": tested}))
`;
    receiver.received.length = 0;
    const out = JSON.parse(await runPython(script, [host, t.rootToken, receiverUrl])) as {
      id: number;
      got: Record<string, unknown>;
      listed: number[];
      tested: unknown;
    };
    expect(out.got).toMatchObject({ id: out.id, url: receiverUrl, repository_update_events: true });
    expect(out.listed).toEqual([out.id]);
    expect(out.tested).toEqual(TEST_DATA);
    expect(receiver.received).toHaveLength(1);
    expect(receiver.received[0].body).toEqual(TEST_DATA);
    expect(receiver.received[0].headers['x-gitlab-event']).toBe('System Hook');
    expect(receiver.received[0].headers['x-gitlab-token']).toBe('t0ken');
    expect(receiver.received[0].headers['user-agent']).toMatch(/^GitLab\/16\.11\.2-ee Lode\//);
    await t.http().delete(`/api/v4/hooks/${out.id}`).set(root());
  });

  it('gitbeaker SystemHooks add, all, test and remove', async () => {
    const hook = (await api.SystemHooks.add(receiverUrl, { pushEvents: true } as never)) as unknown as {
      id: number;
      push_events?: boolean;
      pushEvents?: boolean;
    };
    expect(hook.id).toEqual(expect.any(Number));
    const all = (await api.SystemHooks.all()) as unknown as { id: number }[];
    expect(all.map((h) => h.id)).toEqual([hook.id]);
    receiver.received.length = 0;
    // gitbeaker 43's `show` posts, as `test` does: both reach the test route (keys as sent, not camelized).
    expect(await api.SystemHooks.test(hook.id)).toEqual(TEST_DATA);
    expect(receiver.received).toHaveLength(1);
    await api.SystemHooks.remove(hook.id);
    expect((await t.http().get(`/api/v4/hooks/${hook.id}`).set(root())).status).toBe(404);
  });

  it('answers the created GPG key itself, which python-gitlab 3.12 reads', async () => {
    const key = await armoredKey('object@example.com');
    const res = await t.http().post('/api/v4/user/gpg_keys').set('PRIVATE-TOKEN', user.token).send({ key });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: expect.any(Number), key: key.trim(), created_at: expect.any(String) });
    const script = `
import json, sys, gitlab
gl = gitlab.Gitlab(sys.argv[1], private_token=sys.argv[2])
k = gl.users.get(int(sys.argv[3]), lazy=True).gpgkeys.create({"key": sys.argv[4]})
print(json.dumps({"id": k.id, "key": k.key}))
`;
    const other = await armoredKey('python@example.com');
    const out = JSON.parse(await runPython(script, [host, t.rootToken, String(user.id), other])) as {
      id: number;
      key: string;
    };
    expect(out.key).toBe(other.trim());
    const listed = await t.http().get(`/api/v4/users/${user.id}/gpg_keys`).set(root());
    expect(listed.body.map((k: { id: number }) => k.id)).toContain(out.id);
  });
});
