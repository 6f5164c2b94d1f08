import { Logger } from '@nestjs/common';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { client, createGroup } from '../support/groups';
import { startTestApp, type TestApp } from '../support/test-app';

/** Raw HTTP, for what supertest will not send (bad Host headers, truncated bodies, oversized headers). */
async function raw(
  t: TestApp,
  opts: { method?: string; path: string; headers?: Record<string, string>; body?: string | Buffer },
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const server = t.app.getHttpServer() as import('node:http').Server;
  if (!server.listening) await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, method: opts.method ?? 'GET', path: opts.path, headers: opts.headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }),
        );
      },
    );
    req.on('error', reject);
    if (opts.body !== undefined) req.write(opts.body);
    req.end();
  });
}

describe('input that must never reach a 500', () => {
  let t: TestApp;
  const admin = () => client(t, t.rootToken);
  const anon = () => client(t);
  let errors: string[];

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });
  const logError = Logger.prototype.error;
  beforeEach(() => {
    errors = [];
    Logger.prototype.error = (m: unknown) => void errors.push(String(m));
  });
  afterEach(() => {
    Logger.prototype.error = logError;
    // A client's mistake is never logged as an error with a stack.
    expect(errors).toEqual([]);
  });

  describe('1. malformed multipart', () => {
    it('answers a truncated multipart body with 400 and a JSON body, without a token', async () => {
      const res = await raw(t, {
        method: 'POST',
        path: '/api/v4/session',
        headers: { 'Content-Type': 'multipart/form-data; boundary=XyZ' },
        body: '--XyZ\r\nContent-Disposition: form-data; name="login"\r\n\r\nroot',
      });
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toBe('application/json');
      expect(JSON.parse(res.body)).toEqual({ error: expect.any(String) });
    });

    it('answers multipart/form-data without a boundary with 400', async () => {
      const res = await raw(t, {
        method: 'POST',
        path: '/api/v4/groups',
        headers: { 'Content-Type': 'multipart/form-data' },
        body: 'name=x',
      });
      expect(res.status).toBe(400);
      expect(JSON.parse(res.body)).toEqual({ error: expect.any(String) });
    });
  });

  describe('2. deeply nested JSON', () => {
    it('answers JSON nested 3,000 levels deep with 400', async () => {
      const deep = '{"a":'.repeat(3000) + '1' + '}'.repeat(3000);
      const res = await anon().post('/groups').set('Content-Type', 'application/json').send(`{"name":${deep}}`);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: expect.any(String) });
      const put = await admin().put('/groups/1').set('Content-Type', 'application/json').send(`{"name":${deep}}`);
      expect(put.status).toBe(400);
    });

    it('still takes JSON nested a few levels (custom attributes, arrays)', async () => {
      const res = await admin()
        .get('/projects')
        .query({ custom_attributes: { a: 'b' } });
      expect(res.status).toBe(200);
    });
  });

  describe('3. Host header', () => {
    it('builds Link from LODE_EXTERNAL_URL, so an invalid Host cannot break a list', async () => {
      const res = await raw(t, { path: '/api/v4/projects?per_page=1', headers: { Host: 'bad host^{}' } });
      expect(res.status).toBe(200);
      expect(String(res.headers.link)).toContain('<http://lode.test/api/v4/projects?');
    });

    it('never puts the caller’s Host into Link', async () => {
      const res = await raw(t, { path: '/api/v4/projects?per_page=1', headers: { Host: 'evil.example' } });
      expect(res.status).toBe(200);
      expect(String(res.headers.link)).not.toContain('evil.example');
    });
  });

  describe('4. NUL and control characters', () => {
    it('refuses NUL in a query parameter with 400, also anonymously', async () => {
      const res = await anon().get('/users').query({ username: 'ro\u0000ot' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'username is invalid' });
    });

    it('refuses NUL in search', async () => {
      const res = await admin().get('/projects').query({ search: 'a\u0000' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'search is invalid' });
    });

    it('refuses NUL in sudo', async () => {
      const q = await admin().get('/user').query({ sudo: 'ro\u0000ot' });
      expect(q.status).toBe(400);
      expect(q.body).toEqual({ error: 'sudo is invalid' });
    });

    it('refuses NUL in a JSON field that would reach an event', async () => {
      const res = await admin().post('/groups').send({ name: 'nul', path: 'nul-group', description: 'a\u0000b' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'description is invalid' });
    });

    it('refuses NUL in a path parameter', async () => {
      const res = await admin().get('/projects/a%00b');
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'id is invalid' });
    });

    it('refuses other control characters but keeps tabs and newlines', async () => {
      const bad = await admin().post('/groups').send({ name: 'ctl', path: 'ctl-group', description: 'a\u0007b' });
      expect(bad.status).toBe(400);
      expect(bad.body).toEqual({ error: 'description is invalid' });
      const good = await admin().post('/groups').send({ name: 'ctl', path: 'ctl-group', description: 'a\tb\r\nc' });
      expect(good.status).toBe(201);
    });
  });

  describe('5. ids above 2^31-1', () => {
    it('answers 404 for huge ids in paths, as a lookup of an unknown id does', async () => {
      for (const path of ['/users/2147483648', '/users/99999999999999', '/groups/2147483648']) {
        const res = await admin().get(path);
        expect(res.status).toBe(404);
      }
      const unknown = await admin().get('/users/2147483647');
      const huge = await admin().get('/users/2147483648');
      expect(huge.body).toEqual(unknown.body);
      // `/users/:id/keys/:key_id` has only DELETE (GET there is 405); GET of one's own key looks it up.
      const keys = await admin().get('/user/keys/99999999999');
      expect(keys.status).toBe(404);
      expect((await admin().delete('/users/1/keys/99999999999')).status).toBe(404);
    });

    it('answers 400 for huge ids in bodies and queries', async () => {
      const res = await admin().post('/projects').send({ name: 'big', namespace_id: 99999999999 });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'namespace_id is invalid' });
      const q = await admin().post('/groups').send({ name: 'big', path: 'big-parent', parent_id: '2147483648' });
      expect(q.status).toBe(400);
      expect(q.body).toEqual({ error: 'parent_id is invalid' });
    });
  });

  describe('6. page 1e300', () => {
    it('answers {"page":1e300} with 400', async () => {
      const res = await admin().get('/projects').set('Content-Type', 'application/json').send('{"page":1e300}');
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'page is invalid' });
      const q = await admin().get('/projects').query({ page: '99999999999' });
      expect(q.status).toBe(400);
    });
  });

  describe('7-9. null', () => {
    it('7. POST /projects with path null: 400, never 500', async () => {
      const res = await admin().post('/projects').send({ name: 'nullpath', path: null });
      expect(res.status).toBeLessThan(500);
      expect([201, 400]).toContain(res.status);
      const noName = await admin().post('/projects').send({ path: null });
      expect(noName.status).toBe(400);
    });

    it('8. PUT /groups/:id with lfs_enabled null: as absent (alone: 200, nothing changed)', async () => {
      const g = await createGroup(t, { lfs_enabled: false });
      // GitLab's groups PUT has no `at_least_one_of` (unlike projects'): nothing to change is a 200.
      const alone = await admin().put(`/groups/${g.id}`).send({ lfs_enabled: null });
      expect(alone.status).toBe(200);
      expect(alone.body).toMatchObject({ id: g.id, lfs_enabled: false });
      const res = await admin().put(`/groups/${g.id}`).send({ lfs_enabled: null, description: 'd' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ lfs_enabled: false, description: 'd' });
    });

    it('9. PUT /groups/:id with name null: as absent; POST /groups with name null: name is missing', async () => {
      const g = await createGroup(t);
      const res = await admin().put(`/groups/${g.id}`).send({ name: null, description: 'd' });
      expect(res.status).toBe(200);
      expect(res.body.name).toBe(g.name);
      const create = await admin().post('/groups').send({ name: null, path: 'null-name' });
      expect(create.status).toBe(400);
      expect(create.body).toEqual({ error: 'name is missing' });
    });

    it('clears optional text with null, as GitLab (Grape keeps a key sent as null): projects', async () => {
      const created = await admin()
        .post('/projects')
        .send({ name: 'nulled', description: 'old', ci_config_path: 'a.yml' });
      expect(created.status).toBe(201);
      const res = await admin().put(`/projects/${created.body.id}`).send({ description: null, ci_config_path: null });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ description: null, ci_config_path: null, name: 'nulled' });
      // A null alone is a parameter sent, so it satisfies at_least_one_of, as in Grape.
      await admin().put(`/projects/${created.body.id}`).send({ description: 'again' });
      const alone = await admin().put(`/projects/${created.body.id}`).send({ description: null });
      expect(alone.status).toBe(200);
      expect(alone.body.description).toBeNull();
      // name and path stay required values: null is not sent (and never a 500).
      const names = await admin().put(`/projects/${created.body.id}`).send({ name: null, path: null });
      expect(names.status).toBe(400);
      expect(names.body.error).toMatch(/at least one parameter must be provided/);
    });

    it('clears optional text with null: groups (empty text, the column is not null) and users', async () => {
      const g = await createGroup(t, { description: 'old' });
      const group = await admin().put(`/groups/${g.id}`).send({ description: null });
      expect(group.status).toBe(200);
      expect(group.body.description).toBe('');
      const user = await admin().post('/users').send({
        email: 'nulled@example.com',
        username: 'nulled',
        name: 'Nulled',
        password: 'secret-password',
        bio: 'b',
        location: 'l',
        organization: 'o',
        website_url: 'https://example.com',
      });
      expect(user.status).toBe(201);
      const res = await admin()
        .put(`/users/${user.body.id}`)
        .send({ bio: null, location: null, organization: null, website_url: null, name: null });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        bio: null,
        location: null,
        organization: null,
        website_url: '',
        name: 'Nulled',
      });
    });

    it('keeps null where it means something: expires_at null on a member', async () => {
      const g = await createGroup(t);
      const res = await admin().put(`/groups/${g.id}/members/1`).send({ access_level: 50, expires_at: null });
      expect(res.status).toBe(200);
      expect(res.body.expires_at).toBeNull();
    });
  });

  describe("Node's own client errors", () => {
    it('answers oversized headers with a JSON 431', async () => {
      const res = await raw(t, { path: '/api/v4/version', headers: { 'X-Big': 'a'.repeat(20_000) } }).catch(
        () => undefined,
      );
      expect(res?.status).toBe(431);
      expect(JSON.parse(res!.body)).toEqual({ message: '431 Request Header Fields Too Large' });
    });

    it('lets the answer of a GET finish when a body sent without framing follows it (read as garbage)', async () => {
      // Node's client sends a GET's body with neither Content-Length nor chunked framing: HTTP reads
      // it as the next request, which fails to parse while the first is answered. The answer (the
      // OpenAPI document, large enough to be in flight) arrives whole; the connection is not reset.
      const server = t.app.getHttpServer() as import('node:http').Server;
      if (!server.listening) await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
      const { port } = server.address() as AddressInfo;
      const once = () =>
        new Promise<string>((resolve) => {
          const req = httpRequest(
            { host: '127.0.0.1', port, method: 'GET', path: '/api/v4/openapi.json', agent: false },
            (res) => {
              const chunks: Buffer[] = [];
              res.on('data', (c: Buffer) => chunks.push(c));
              res.on('end', () => resolve(`${res.statusCode} ${JSON.parse(Buffer.concat(chunks).toString()).openapi}`));
              res.on('error', (e) => resolve(String(e)));
            },
          );
          req.on('error', (e) => resolve(String(e)));
          req.write(JSON.stringify({ name: 'x'.repeat(120_000) }));
          req.end();
        });
      const answers: string[] = [];
      for (let i = 0; i < 10; i += 1) answers.push(await once());
      expect(answers).toEqual(Array(10).fill('200 3.1.0'));
    });
  });
});
