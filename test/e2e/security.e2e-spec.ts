import { Logger, type INestApplication } from '@nestjs/common';
import request from 'supertest';
import { createHttpApp } from '../../apps/lode/src/http-app';
import { createToken, createUser } from '../support/seed';
import { eventually, startTestApp, type TestApp } from '../support/test-app';

const api = (path: string) => `/api/v4${path}`;
const BLOCKED = { message: '403 Forbidden - User is blocked' };

/** The security issue's regressions: eviction of cached tokens, sudo as a blocked user. */
describe('security', () => {
  // A cache long enough that only an eviction can explain a refusal.
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ tokenCacheMs: 60_000 });
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
    let other: INestApplication;
    let otherHttp: TestApp['http'];
    beforeAll(async () => {
      // A second API process on the same database: no shared memory, only PostgreSQL's LISTEN/NOTIFY.
      other = await createHttpApp(t.config, { http: true, worker: false });
      await other.init();
      Logger.overrideLogger(['error']);
      otherHttp = () => request(other.getHttpServer());
    });
    afterAll(async () => {
      await other.close();
    });

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
});
