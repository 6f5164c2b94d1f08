import { repositoryPath } from '@app/git';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { gitOk, tempDirs } from '../support/git';
import { createToken, createUser } from '../support/seed';
import { eventually, secondAppFor, startTestApp, type TestApp } from '../support/test-app';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

const api = (path: string) => `/api/v4${path}`;
const BLOCKED = { message: '403 Forbidden - User is blocked' };

/** The security issue's regressions: eviction of cached tokens, sudo as a blocked user, response headers, hook delivery log. */
describe('security', () => {
  // A cache long enough that only an eviction can explain a refusal.
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ tokenCacheMs: 60_000, allowLocalWebhooks: true });
  });
  afterAll(async () => {
    await t.close();
  });

  const whoAmI = (token: string, on: TestApp['http'] = t.http) => on().get(api('/user')).set('PRIVATE-TOKEN', token);
  const tokenId = async (userId: number): Promise<number> =>
    (await t.db.query(`select id from access_tokens where user_id = $1 order by id desc limit 1`, [userId]))[0].id;

  describe('token cache eviction in the process that wrote the event', () => {
    it('refuses a revoked token on the very next request (401)', async () => {
      const u = await createUser(t);
      expect((await whoAmI(u.token)).status).toBe(200);
      const del = await t
        .http()
        .delete(api(`/users/${u.id}/impersonation_tokens/${await tokenId(u.id)}`))
        .set('PRIVATE-TOKEN', t.rootToken);
      expect(del.status).toBe(204);
      const res = await whoAmI(u.token);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ message: '401 Unauthorized' });
    });

    it('refuses a blocked user on the very next request (403), and serves them again once unblocked', async () => {
      const u = await createUser(t);
      expect((await whoAmI(u.token)).status).toBe(200);
      expect(
        (
          await t
            .http()
            .post(api(`/users/${u.id}/block`))
            .set('PRIVATE-TOKEN', t.rootToken)
        ).status,
      ).toBe(201);
      const res = await whoAmI(u.token);
      expect(res.status).toBe(403);
      expect(res.body).toEqual(BLOCKED);
      expect(
        (
          await t
            .http()
            .post(api(`/users/${u.id}/unblock`))
            .set('PRIVATE-TOKEN', t.rootToken)
        ).status,
      ).toBe(201);
      expect((await whoAmI(u.token)).status).toBe(200);
    });

    it('refuses a deleted user on the very next request (401)', async () => {
      const u = await createUser(t);
      expect((await whoAmI(u.token)).status).toBe(200);
      const del = await t
        .http()
        .delete(api(`/users/${u.id}`))
        .query({ hard_delete: true })
        .set('PRIVATE-TOKEN', t.rootToken);
      expect(del.status).toBe(204);
      expect((await whoAmI(u.token)).status).toBe(401);
    });

    it('takes an administrator flag away on the very next request', async () => {
      const u = await createUser(t, { admin: true });
      const adminOnly = () =>
        t
          .http()
          .get(api(`/users/${u.id}/impersonation_tokens`))
          .set('PRIVATE-TOKEN', u.token);
      expect((await adminOnly()).status).toBe(200);
      const put = await t
        .http()
        .put(api(`/users/${u.id}`))
        .set('PRIVATE-TOKEN', t.rootToken)
        .send({ admin: false });
      expect(put.status).toBe(200);
      expect((await adminOnly()).status).toBe(403);
    });

    it("keeps other users' cached tokens", async () => {
      const a = await createUser(t);
      const b = await createUser(t);
      expect((await whoAmI(a.token)).status).toBe(200);
      expect((await whoAmI(b.token)).status).toBe(200);
      expect(
        (
          await t
            .http()
            .post(api(`/users/${a.id}/block`))
            .set('PRIVATE-TOKEN', t.rootToken)
        ).status,
      ).toBe(201);
      expect((await whoAmI(b.token)).status).toBe(200);
    });
  });

  describe('token cache eviction in another process, through the notification', () => {
    // A second API process on the same database: no shared memory, only PostgreSQL's LISTEN/NOTIFY.
    const other = secondAppFor(() => t);
    const otherHttp = other.http;

    it('refuses a token revoked through the first process', async () => {
      const u = await createUser(t);
      expect((await whoAmI(u.token, otherHttp)).status).toBe(200);
      const del = await t
        .http()
        .delete(api(`/users/${u.id}/impersonation_tokens/${await tokenId(u.id)}`))
        .set('PRIVATE-TOKEN', t.rootToken);
      expect(del.status).toBe(204);
      // Well within the 60 s cache: only the notification can have evicted it.
      await eventually(async () => (await whoAmI(u.token, otherHttp)).status === 401, 3000, 20);
    });

    it('refuses a user blocked through the first process', async () => {
      const u = await createUser(t);
      const second = await createToken(t, u.id);
      expect((await whoAmI(second, otherHttp)).status).toBe(200);
      expect(
        (
          await t
            .http()
            .post(api(`/users/${u.id}/block`))
            .set('PRIVATE-TOKEN', t.rootToken)
        ).status,
      ).toBe(201);
      await eventually(async () => (await whoAmI(second, otherHttp)).status === 403, 3000, 20);
      expect((await whoAmI(second, otherHttp)).body).toEqual(BLOCKED);
    });
  });

  describe('sudo', () => {
    it('refuses to act as a blocked user, with the answer a blocked user gets (403)', async () => {
      const u = await createUser(t);
      expect(
        (
          await t
            .http()
            .post(api(`/users/${u.id}/block`))
            .set('PRIVATE-TOKEN', t.rootToken)
        ).status,
      ).toBe(201);
      for (const sudo of [String(u.id), u.username]) {
        const res = await t.http().get(api('/user')).set('PRIVATE-TOKEN', t.rootToken).set('Sudo', sudo);
        expect(res.status).toBe(403);
        expect(res.body).toEqual(BLOCKED);
      }
      const write = await t
        .http()
        .post(api('/user/keys'))
        .query({ sudo: u.id })
        .set('PRIVATE-TOKEN', t.rootToken)
        .send({ title: 'k', key: 'ssh-ed25519 AAAA' });
      expect(write.status).toBe(403);
      expect(
        (
          await t
            .http()
            .post(api(`/users/${u.id}/unblock`))
            .set('PRIVATE-TOKEN', t.rootToken)
        ).status,
      ).toBe(201);
      const res = await t.http().get(api('/user')).set('PRIVATE-TOKEN', t.rootToken).set('Sudo', String(u.id));
      expect(res.status).toBe(200);
      expect(res.body.id).toBe(u.id);
    });
  });

  describe('response headers', () => {
    const tmp = tempDirs();
    afterAll(() => tmp.removeAll());
    const SAFE = { 'x-content-type-options': 'nosniff', 'x-frame-options': 'DENY' };

    it('marks every answer nosniff and DENY, and authenticated ones private, no-store', async () => {
      const u = await createUser(t);
      const anonymous = [
        await t.http().get(api('/projects')),
        await t.http().get(api('/users/1')),
        await t.http().get(api('/no/such/route')),
        await t.http().get(api('/user')).set('PRIVATE-TOKEN', 'not-a-token'),
        await t.http().get('/-/health'),
      ];
      for (const res of anonymous) {
        expect(res.headers).toMatchObject(SAFE);
        expect(res.headers['cache-control']).toBeUndefined();
      }
      const authenticated = [
        await whoAmI(u.token),
        await t.http().get(api('/projects')).query({ private_token: u.token }),
        await t.http().get(api('/projects/987654')).set('Authorization', `Bearer ${u.token}`),
        await t.http().get(api('/users')).query({ sudo: u.id }).set('PRIVATE-TOKEN', t.rootToken),
        await t.http().post(api('/user/keys')).set('PRIVATE-TOKEN', u.token).send({}),
      ];
      expect(authenticated.map((r) => r.status)).toEqual([200, 200, 404, 200, 400]);
      for (const res of authenticated)
        expect(res.headers).toMatchObject({ ...SAFE, 'cache-control': 'private, no-store' });
    });

    it('keeps raw blobs sandboxed and adds the same headers', async () => {
      const u = await createUser(t);
      const project = (
        await t.http().post(api('/projects')).set('PRIVATE-TOKEN', u.token).send({ name: 'raw', visibility: 'public' })
      ).body;
      const work = tmp.make();
      await gitOk(['init', '-q', '-b', 'master', work]);
      writeFileSync(join(work, 'page.html'), '<script>alert(1)</script>\n');
      await gitOk(['add', '-A'], work);
      await gitOk(['commit', '-q', '-m', 'page'], work, {
        GIT_AUTHOR_NAME: 'A',
        GIT_AUTHOR_EMAIL: 'a@example.com',
        GIT_COMMITTER_NAME: 'A',
        GIT_COMMITTER_EMAIL: 'a@example.com',
      });
      await gitOk(['push', '-q', repositoryPath(t.config.dataDir, project.id), 'master'], work);
      const tree = (await t.http().get(api(`/projects/${project.id}/repository/tree`))).body;
      const raw = api(`/projects/${project.id}/repository/blobs/${tree[0].id}/raw`);
      const sandboxed = {
        ...SAFE,
        'content-type': 'text/plain; charset=utf-8',
        'content-security-policy': "sandbox; default-src 'none'",
      };
      const anonymous = await t.http().get(raw);
      expect(anonymous.status).toBe(200);
      expect(anonymous.headers).toMatchObject(sandboxed);
      expect(anonymous.headers['cache-control']).toBeUndefined();
      const authenticated = await t.http().get(raw).set('PRIVATE-TOKEN', u.token);
      expect(authenticated.status).toBe(200);
      expect(authenticated.headers).toMatchObject({ ...sandboxed, 'cache-control': 'private, no-store' });
    });
  });

  describe('hook delivery log', () => {
    const tmp = tempDirs();
    let receiver: WebhookReceiver;
    beforeAll(async () => {
      receiver = await startWebhookReceiver({ status: 503, body: 'not now' });
      await t.app.listen(0, '127.0.0.1');
    });
    afterAll(async () => {
      tmp.removeAll();
      await receiver?.close();
    });

    it('gives maintainers a generic reason, never an address, port, DNS answer or socket error', async () => {
      const u = await createUser(t);
      const project = (
        await t.http().post(api('/projects')).set('PRIVATE-TOKEN', u.token).send({ name: 'hooked-reasons' })
      ).body;
      const closed = createServer();
      await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
      const closedPort = (closed.address() as AddressInfo).port;
      await new Promise((r) => closed.close(r));
      const cases: [string, string][] = [
        [`${receiver.url}/answers-503`, 'HTTP 503'],
        [`http://127.0.0.1:${closedPort}/nobody`, 'connection failed'],
        ['http://no-such-host.invalid/hook', 'connection failed'],
        [`https://127.0.0.1:${receiver.port}/plain-http`, 'TLS error'],
      ];
      const hooks: number[] = [];
      for (const [url] of cases) {
        const res = await t
          .http()
          .post(api(`/projects/${project.id}/hooks`))
          .set('PRIVATE-TOKEN', u.token)
          .send({ url });
        expect(res.status).toBe(201);
        hooks.push(res.body.id);
      }
      const work = tmp.make();
      await gitOk(['init', '-q', '-b', 'master', work]);
      writeFileSync(join(work, 'a.txt'), 'a\n');
      await gitOk(['add', '-A'], work);
      await gitOk(['commit', '-q', '-m', 'a'], work, {
        GIT_AUTHOR_NAME: 'A',
        GIT_AUTHOR_EMAIL: 'a@example.com',
        GIT_COMMITTER_NAME: 'A',
        GIT_COMMITTER_EMAIL: 'a@example.com',
      });
      const port = (t.app.getHttpServer().address() as AddressInfo).port;
      await gitOk(
        ['push', '-q', `http://git:${u.token}@127.0.0.1:${port}/${project.path_with_namespace}.git`, 'master'],
        work,
      );
      for (const [i, [, reason]] of cases.entries()) {
        const log = await eventually(async () => {
          const res = await t
            .http()
            .get(api(`/projects/${project.id}/hooks/${hooks[i]}/events`))
            .set('PRIVATE-TOKEN', u.token);
          return res.body.length ? res.body : false;
        }, 15_000);
        const first = log[log.length - 1];
        expect(first).toMatchObject({ attempt: 1, error: reason });
        for (const leak of ['127.0.0.1', String(closedPort), 'no-such-host', 'ECONN', 'ENOTFOUND', 'EAI_'])
          expect(JSON.stringify(log.map((e: { error: string }) => e.error))).not.toContain(leak);
      }
    });
  });
});
