import { ChangeUserBlock } from '@app/users';
import { CommandBus } from '@nestjs/cqrs';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Response } from 'supertest';
import { expectShape } from '../contract/shape';
import { createToken, createUser, type SeededUser } from '../support/seed';
import { countStatements, eventually, startTestApp, type TestApp } from '../support/test-app';
import { bytes } from '../support/bytes';

/** A 1×1 PNG, the smallest valid avatar. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

let seq = 0;
/** A short suffix that keeps usernames and e-mails unique across the file. */
const unique = () => `${(seq += 1)}${randomBytes(3).toString('hex')}`;

describe('users API', () => {
  let t: TestApp;
  let viewer: SeededUser; // a normal, active user whose token the non-admin cases use

  const as = (token: string) => ({
    get: (path: string) => t.http().get(`/api/v4${path}`).set('PRIVATE-TOKEN', token),
    post: (path: string) => t.http().post(`/api/v4${path}`).set('PRIVATE-TOKEN', token),
    put: (path: string) => t.http().put(`/api/v4${path}`).set('PRIVATE-TOKEN', token),
    delete: (path: string) => t.http().delete(`/api/v4${path}`).set('PRIVATE-TOKEN', token),
  });
  const admin = () => as(t.rootToken);
  const anon = () => ({
    get: (path: string) => t.http().get(`/api/v4${path}`),
    post: (path: string) => t.http().post(`/api/v4${path}`),
    put: (path: string) => t.http().put(`/api/v4${path}`),
    delete: (path: string) => t.http().delete(`/api/v4${path}`),
  });
  const eventCount = async () => Number((await t.db.query('select count(*)::int as n from events'))[0].n);
  const newUserBody = (attrs: Record<string, unknown> = {}) => {
    const s = unique();
    return { username: `u${s}`, email: `u${s}@example.com`, name: `User ${s}`, password: 'secret-password', ...attrs };
  };
  /** Every element of a list answer has the shape. */
  const expectEachShape = (res: Response, shape: string) => {
    expect(Array.isArray(res.body)).toBe(true);
    for (const u of res.body) expectShape(u, shape);
  };
  const ids = (res: Response) => (res.body as { id: number }[]).map((u) => u.id);
  /** Asserts that a failed write left no trace: no new event, no user under that username. */
  const expectNothingStored = async (eventsBefore: number, username: string) => {
    expect(await eventCount()).toBe(eventsBefore);
    const res = await admin().get('/users').query({ username });
    expect(res.status).toBe(200);
    expect(res.body).toEqual([]);
  };

  beforeAll(async () => {
    t = await startTestApp();
    viewer = await createUser(t, { name: 'Viewer Person' });
  });
  afterAll(async () => {
    await t?.close();
  });

  describe('GET /users', () => {
    let alice: SeededUser;
    let external: SeededUser;
    let blocked: SeededUser;
    let ldap: SeededUser;
    let s: string;

    beforeAll(async () => {
      s = unique();
      alice = await createUser(t, {
        username: `alice${s}`,
        name: `Alice Zquux${s}`,
        email: `hidden-box-${s}@mail.test`,
      });
      external = await createUser(t, { external: true });
      blocked = await createUser(t);
      ldap = await createUser(t, { extern_uid: `uid=ldap${s},ou=people`, provider: 'ldapmain' });
      expect((await admin().post(`/users/${blocked.id}/block`)).status).toBe(201);
    });

    it('refuses anonymous callers without username: 403', async () => {
      const res = await anon().get('/users');
      expect(res.status).toBe(403);
      expect(res.headers['content-type']).toBe('application/json');
      expect(res.body).toEqual({ message: '403 Forbidden - Not authorized to access /api/v4/users' });
    });

    it('lets anonymous callers look up one username (0 or 1 result, basic view)', async () => {
      const res = await anon().get('/users').query({ username: alice.username.toUpperCase() });
      expect(res.status).toBe(200);
      expect(res.body).toHaveLength(1);
      expectShape(res.body[0], 'user-basic');
      expect(res.body[0]).toMatchObject({
        id: alice.id,
        username: alice.username,
        state: 'active',
        web_url: `http://lode.test/${alice.username}`,
      });
      const none = await anon()
        .get('/users')
        .query({ username: `nobody${s}` });
      expect(none.status).toBe(200);
      expect(none.body).toEqual([]);
      expect(none.headers['x-total']).toBe('0');
    });

    it('answers non-administrators with the basic view', async () => {
      const res = await as(viewer.token).get('/users');
      expect(res.status).toBe(200);
      expect(res.body.length).toBeGreaterThan(0);
      expectEachShape(res, 'user-basic');
    });

    it('answers administrators with the admin view', async () => {
      const res = await admin().get('/users');
      expect(res.status).toBe(200);
      expectEachShape(res, 'user-admin');
      const a = res.body.find((u: { id: number }) => u.id === alice.id);
      expect(a).toMatchObject({ email: alice.email, is_admin: false, identities: [], external: false });
      const r = res.body.find((u: { id: number }) => u.id === 1);
      expect(r).toMatchObject({ username: 'root', is_admin: true });
    });

    it('lists newest first', async () => {
      const res = await admin().get('/users').query({ per_page: 100 });
      expect(res.status).toBe(200);
      const list = ids(res);
      expect(list).toEqual([...list].sort((a, b) => b - a));
      expect(list[list.length - 1]).toBe(1);
    });

    it('filters by username: exact, case-insensitive', async () => {
      const res = await as(viewer.token).get('/users').query({ username: alice.username.toUpperCase() });
      expect(res.status).toBe(200);
      expect(ids(res)).toEqual([alice.id]);
      const partial = await as(viewer.token)
        .get('/users')
        .query({ username: alice.username.slice(0, -2) });
      expect(partial.status).toBe(200);
      expect(partial.body).toEqual([]);
    });

    it('searches name and username for non-administrators, never e-mail', async () => {
      const byName = await as(viewer.token)
        .get('/users')
        .query({ search: `zquux${s}` });
      expect(byName.status).toBe(200);
      expect(ids(byName)).toEqual([alice.id]);
      expectEachShape(byName, 'user-basic');
      const byUsername = await as(viewer.token)
        .get('/users')
        .query({ search: `ALICE${s}` });
      expect(ids(byUsername)).toEqual([alice.id]);
      const byEmail = await as(viewer.token)
        .get('/users')
        .query({ search: `hidden-box-${s}` });
      expect(byEmail.status).toBe(200);
      expect(byEmail.body).toEqual([]);
    });

    it('searches e-mail too for administrators', async () => {
      const res = await admin()
        .get('/users')
        .query({ search: `hidden-box-${s}` });
      expect(res.status).toBe(200);
      expect(ids(res)).toEqual([alice.id]);
      expectEachShape(res, 'user-admin');
    });

    it('treats LIKE wildcards in search as plain characters', async () => {
      const res = await admin().get('/users').query({ search: '%' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual([]);
    });

    it('filters active=true and blocked=true', async () => {
      const active = await admin().get('/users').query({ active: true, per_page: 100 });
      expect(active.status).toBe(200);
      expect(ids(active)).toEqual(expect.arrayContaining([alice.id, external.id, 1]));
      expect(ids(active)).not.toContain(blocked.id);
      for (const u of active.body) expect(u.state).toBe('active');
      const blockedOnly = await as(viewer.token).get('/users').query({ blocked: 'true', per_page: 100 });
      expect(blockedOnly.status).toBe(200);
      expect(ids(blockedOnly)).toContain(blocked.id);
      expect(ids(blockedOnly)).not.toContain(alice.id);
      for (const u of blockedOnly.body) expect(['blocked', 'ldap_blocked']).toContain(u.state);
    });

    it('filters external=true for administrators only', async () => {
      const res = await admin().get('/users').query({ external: true, per_page: 100 });
      expect(res.status).toBe(200);
      expect(ids(res)).toContain(external.id);
      expect(ids(res)).not.toContain(alice.id);
      for (const u of res.body) expect(u.external).toBe(true);
      const user = await as(viewer.token).get('/users').query({ external: true });
      expect(user.status).toBe(403);
      expect(user.body).toEqual({ message: '403 Forbidden' });
      // `external=false` is no filter at all, so anyone may send it (GitLab tests `params[:external].present?`).
      expect((await as(viewer.token).get('/users').query({ external: false })).status).toBe(200);
      const nobody = await anon().get('/users').query({ external: true });
      expect(nobody.status).toBe(401);
      expect(nobody.body).toEqual({ message: '401 Unauthorized' });
    });

    it('filters extern_uid + provider for administrators only, and wants both', async () => {
      const res = await admin()
        .get('/users')
        .query({ extern_uid: `uid=ldap${s},ou=people`, provider: 'ldapmain' });
      expect(res.status).toBe(200);
      expect(ids(res)).toEqual([ldap.id]);
      expect(res.body[0].identities).toEqual([{ provider: 'ldapmain', extern_uid: `uid=ldap${s},ou=people` }]);
      const other = await admin()
        .get('/users')
        .query({ extern_uid: `uid=ldap${s},ou=people`, provider: 'github' });
      expect(other.body).toEqual([]);
      const user = await as(viewer.token)
        .get('/users')
        .query({ extern_uid: `uid=ldap${s},ou=people`, provider: 'ldapmain' });
      expect(user.status).toBe(403);
      expect(user.body).toEqual({ message: '403 Forbidden' });
      for (const half of [{ extern_uid: 'x' }, { provider: 'ldapmain' }]) {
        const bad = await admin().get('/users').query(half);
        expect(bad.status).toBe(400);
        expect(bad.body).toEqual({ error: 'extern_uid, provider provide all or none of parameters' });
      }
    });

    it('filters created_before / created_after for administrators, ignores them for others', async () => {
      const all = await admin().get('/users').query({ per_page: 100 });
      const aliceCreated = all.body.find((u: { id: number }) => u.id === alice.id).created_at as string;
      const after = await admin().get('/users').query({ created_after: aliceCreated, per_page: 100 });
      expect(after.status).toBe(200);
      expect(ids(after)).not.toContain(alice.id);
      expect(ids(after)).toEqual(expect.arrayContaining([external.id, blocked.id, ldap.id]));
      expect(ids(after)).not.toContain(1);
      const before = await admin().get('/users').query({ created_before: aliceCreated, per_page: 100 });
      expect(ids(before)).toContain(1);
      expect(ids(before)).not.toContain(alice.id);
      expect(ids(before)).not.toContain(external.id);
      const future = '2999-01-01T00:00:00Z';
      expect((await admin().get('/users').query({ created_after: future })).body).toEqual([]);
      // Not an administrator: GitLab drops the filter, so the far-future bound changes nothing.
      const user = await as(viewer.token).get('/users').query({ created_after: future });
      expect(user.status).toBe(200);
      expect(user.body.length).toBeGreaterThan(0);
      const userBad = await as(viewer.token).get('/users').query({ created_before: 'yesterday' });
      expect(userBad.status).toBe(200);
    });

    it('refuses an unreadable created_before / created_after from administrators: 400', async () => {
      const res = await admin().get('/users').query({ created_before: 'not-a-date' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'created_before is invalid' });
      const res2 = await admin().get('/users').query({ created_after: '2020-13-45' });
      expect(res2.status).toBe(400);
      expect(res2.body).toEqual({ error: 'created_after is invalid' });
    });
  });

  describe('GET /users pagination', () => {
    let total: number;

    beforeAll(async () => {
      // Enough users for three pages of two whatever else the file made.
      for (let i = 0; i < 5; i++)
        await admin()
          .post('/users')
          .send(newUserBody({ password: undefined, reset_password: true }));
      total = Number((await admin().get('/users')).headers['x-total']);
      expect(total).toBeGreaterThanOrEqual(6);
    });

    it('sets X-* headers and absolute Link headers keeping the query parameters', async () => {
      const res = await admin().get('/users').query({ active: 'true', per_page: 2, page: 2 });
      expect(res.status).toBe(200);
      expect(res.body).toHaveLength(2);
      const activeTotal = Number(res.headers['x-total']);
      const pages = Math.ceil(activeTotal / 2);
      expect(res.headers['x-total-pages']).toBe(String(pages));
      expect(res.headers['x-per-page']).toBe('2');
      expect(res.headers['x-page']).toBe('2');
      expect(res.headers['x-next-page']).toBe('3');
      expect(res.headers['x-prev-page']).toBe('1');
      const links = Object.fromEntries(
        (res.headers.link as string).split(', ').map((l) => {
          const m = /^<([^>]+)>; rel="(\w+)"$/.exec(l);
          expect(m).not.toBeNull();
          return [m![2], new URL(m![1])];
        }),
      );
      expect(Object.keys(links).sort()).toEqual(['first', 'last', 'next', 'prev']);
      for (const [rel, page] of [
        ['prev', '1'],
        ['next', '3'],
        ['first', '1'],
        ['last', String(pages)],
      ] as const) {
        const u = links[rel];
        expect(u.protocol).toBe('http:');
        // On LODE_EXTERNAL_URL, not on the Host the client sent (here 127.0.0.1:<port>).
        expect(u.host).toBe(new URL(t.config.externalUrl).host);
        expect(u.pathname).toBe('/api/v4/users');
        expect(u.searchParams.get('active')).toBe('true');
        expect(u.searchParams.get('per_page')).toBe('2');
        expect(u.searchParams.get('page')).toBe(page);
      }
      // Following rel="next" gives the next slice of the same order.
      const first = await admin().get('/users').query({ active: 'true', per_page: 4 });
      expect(ids(first).slice(2, 4)).toEqual(ids(res));
    });

    it('leaves X-Prev-Page empty on the first page and X-Next-Page empty on the last', async () => {
      const first = await admin().get('/users').query({ per_page: 2 });
      expect(first.headers['x-page']).toBe('1');
      expect(first.headers['x-prev-page']).toBe('');
      expect(first.headers['x-next-page']).toBe('2');
      expect(first.headers.link).not.toContain('rel="prev"');
      const pages = Math.ceil(total / 2);
      const last = await admin().get('/users').query({ per_page: 2, page: pages });
      expect(last.status).toBe(200);
      expect(last.headers['x-page']).toBe(String(pages));
      expect(last.headers['x-next-page']).toBe('');
      expect(last.headers['x-prev-page']).toBe(String(pages - 1));
      expect(last.headers.link).not.toContain('rel="next"');
      expect(last.body.at(-1).id).toBe(1);
    });

    it('answers a page past the last one with no items and no prev/next (Kaminari)', async () => {
      const pages = Math.ceil(total / 2);
      const res = await admin()
        .get('/users')
        .query({ per_page: 2, page: pages + 5 });
      expect(res.status).toBe(200);
      expect(res.body).toEqual([]);
      expect(res.headers['x-page']).toBe(String(pages + 5));
      expect(res.headers['x-total-pages']).toBe(String(pages));
      expect(res.headers['x-next-page']).toBe('');
      expect(res.headers['x-prev-page']).toBe('');
      expect(res.headers.link).not.toMatch(/rel="(prev|next)"/);
      expect(res.headers.link).toContain('rel="first"');
      expect(res.headers.link).toContain('rel="last"');
    });

    it('defaults per_page to 20 and clamps it to 100', async () => {
      const res = await admin().get('/users');
      expect(res.headers['x-per-page']).toBe('20');
      expect(res.headers['x-page']).toBe('1');
      expect(res.body.length).toBe(Math.min(20, total));
      const big = await admin().get('/users').query({ per_page: 1000 });
      expect(big.status).toBe(200);
      expect(big.headers['x-per-page']).toBe('100');
      expect(big.headers.link).toContain('per_page=100');
    });

    it('keeps X-Total-Pages at 1 for an empty result', async () => {
      const res = await admin().get('/users').query({ username: 'no-such-user-at-all' });
      expect(res.body).toEqual([]);
      expect(res.headers['x-total']).toBe('0');
      expect(res.headers['x-total-pages']).toBe('1');
      expect(res.headers['x-next-page']).toBe('');
      expect(res.headers['x-prev-page']).toBe('');
    });

    it('refuses a non-integer per_page or page: 400', async () => {
      const res = await admin().get('/users').query({ per_page: 'abc' });
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toBe('application/json');
      expect(res.body).toEqual({ error: 'per_page is invalid' });
      const page = await admin().get('/users').query({ page: 'x' });
      expect(page.status).toBe(400);
      expect(page.body).toEqual({ error: 'page is invalid' });
    });
  });

  describe('GET /users statement count', () => {
    let counter: ReturnType<typeof countStatements>;

    beforeAll(async () => {
      const have = Number((await admin().get('/users')).headers['x-total']);
      const missing = Math.max(0, 32 - have);
      for (let i = 0; i < missing; i += 8) {
        await Promise.all(
          Array.from({ length: Math.min(8, missing - i) }, async (_, j) => {
            const body = newUserBody({ password: undefined, reset_password: true });
            if (j % 2) Object.assign(body, { extern_uid: `ext-${body.username}`, provider: 'github' });
            const res = await admin().post('/users').send(body);
            expect(res.status).toBe(201);
          }),
        );
      }
      // Today's activity is recorded on a token's first use; let that happen outside the measured requests.
      await admin().get('/user');
      await as(viewer.token).get('/user');
      counter = countStatements();
    });
    afterAll(() => counter.restore());

    it.each([
      ['an administrator', () => t.rootToken, 'user-admin'],
      ['a normal user', () => viewer.token, 'user-basic'],
    ])('stays within 5 statements for a page of 100 as %s', async (_, token, shape) => {
      const id = `stmt-${unique()}`;
      const res = await t
        .http()
        .get('/api/v4/users?per_page=100')
        .set('PRIVATE-TOKEN', token())
        .set('X-Request-Id', id);
      expect(res.status).toBe(200);
      expect(res.headers['x-request-id']).toBe(id);
      expect(res.body.length).toBeGreaterThanOrEqual(30);
      expectEachShape(res, shape);
      const n = counter.forRequest(id);
      expect(n).toBeGreaterThan(0);
      expect(n).toBeLessThanOrEqual(5);
    });
  });

  describe('GET /users/:id', () => {
    let u: SeededUser;
    beforeAll(async () => {
      u = await createUser(t, {
        bio: 'hello',
        location: 'Berlin',
        organization: 'Lode',
        website_url: 'https://example.com',
      });
    });

    it('answers non-administrators with the user view (no e-mail, no is_admin)', async () => {
      const res = await as(viewer.token).get(`/users/${u.id}`);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/json');
      expectShape(res.body, 'user');
      expect(res.body).toMatchObject({
        id: u.id,
        username: u.username,
        bio: 'hello',
        location: 'Berlin',
        organization: 'Lode',
        website_url: 'https://example.com',
      });
    });

    it('answers anonymous callers with the user view', async () => {
      const res = await anon().get(`/users/${u.id}`);
      expect(res.status).toBe(200);
      expectShape(res.body, 'user');
    });

    it('answers administrators with the admin view', async () => {
      const res = await admin().get(`/users/${u.id}`);
      expect(res.status).toBe(200);
      expectShape(res.body, 'user-admin');
      expect(res.body).toMatchObject({
        id: u.id,
        email: u.email,
        is_admin: false,
        state: 'active',
        confirmed_at: null,
      });
      expect(res.body.avatar_url).toMatch(/^https:\/\/www\.gravatar\.com\/avatar\/[0-9a-f]{32}\?s=80&d=identicon$/);
    });

    it('answers an unknown id with 404 User Not Found', async () => {
      for (const caller of [admin(), as(viewer.token), anon()]) {
        const res = await caller.get('/users/999999');
        expect(res.status).toBe(404);
        expect(res.headers['content-type']).toBe('application/json');
        expect(res.body).toEqual({ message: '404 User Not Found' });
      }
    });

    it('answers ids beyond the id column with 404 User Not Found, never a 500', async () => {
      for (const id of ['2147483648', '99999999999999']) {
        const calls = [
          admin().get(`/users/${id}`),
          anon().get(`/users/${id}`),
          admin().put(`/users/${id}`).send({ bio: 'x' }),
          admin().delete(`/users/${id}`),
          admin().post(`/users/${id}/block`),
          admin().post(`/users/${id}/unblock`),
          admin().get(`/users/${id}/custom_attributes`),
          admin().get(`/users/${id}/custom_attributes/k`),
          admin().put(`/users/${id}/custom_attributes/k`).send({ value: 'v' }),
          admin().delete(`/users/${id}/custom_attributes/k`),
        ];
        for (const res of await Promise.all(calls)) {
          expect(res.status).toBe(404);
          expect(res.body).toEqual({ message: '404 User Not Found' });
        }
        // Sudo to such an id is GitLab's `find_by` miss as well.
        const sudo = await admin().get('/user').set('Sudo', id);
        expect(sudo.status).toBe(404);
        expect(sudo.body).toEqual({ message: `404 User with ID or username '${id}' Not Found` });
      }
    });

    it('answers a non-numeric id with 404 (the route does not match)', async () => {
      const res = await admin().get('/users/abc');
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: '404 Not Found' });
    });
  });

  describe('POST /users', () => {
    it('creates a user from a JSON body: 201 with the UserPublic view', async () => {
      const body = newUserBody({
        bio: 'bio',
        location: 'here',
        messenger: 'm',
        career_profile: 'c',
        social_account: 's',
        website_url: 'https://w.example',
        organization: 'org',
        projects_limit: 7,
        can_create_group: false,
      });
      const res = await admin().post('/users').send(body);
      expect(res.status).toBe(201);
      expect(res.headers['content-type']).toBe('application/json');
      expectShape(res.body, 'user-public');
      expect(res.body).toMatchObject({
        username: body.username,
        email: body.email,
        name: body.name,
        state: 'active',
        bio: 'bio',
        location: 'here',
        messenger: 'm',
        career_profile: 'c',
        social_account: 's',
        website_url: 'https://w.example',
        organization: 'org',
        projects_limit: 7,
        can_create_group: false,
        can_create_project: true,
        external: false,
        identities: [],
        confirmed_at: null,
        web_url: `http://lode.test/${body.username}`,
      });
      expect(res.body).not.toHaveProperty('is_admin');
      expect(Date.parse(res.body.created_at)).not.toBeNaN();
      const read = await admin().get(`/users/${res.body.id}`);
      expect(read.status).toBe(200);
      expect(read.body).toMatchObject({ is_admin: false, email: body.email });
    });

    it('takes form-urlencoded bodies with string booleans', async () => {
      const body = newUserBody({
        admin: 'True',
        external: 'true',
        skip_confirmation: 'true',
        can_create_group: 'false',
        projects_limit: '3',
      });
      const res = await admin().post('/users').type('form').send(body);
      expect(res.status).toBe(201);
      expectShape(res.body, 'user-public');
      expect(res.body).toMatchObject({
        username: body.username,
        external: true,
        can_create_group: false,
        projects_limit: 3,
      });
      expect(Date.parse(res.body.confirmed_at)).not.toBeNaN();
      const read = await admin().get(`/users/${res.body.id}`);
      expect(read.body.is_admin).toBe(true);
    });

    it('takes multipart bodies', async () => {
      const body = newUserBody({ admin: 'false', external: 'False' });
      const req = admin().post('/users');
      for (const [k, v] of Object.entries(body)) req.field(k, String(v));
      const res = await req;
      expect(res.status).toBe(201);
      expectShape(res.body, 'user-public');
      expect(res.body).toMatchObject({ username: body.username, email: body.email, external: false });
      expect((await admin().get(`/users/${res.body.id}`)).body.is_admin).toBe(false);
    });

    it('takes parameters from the query string', async () => {
      const body = newUserBody();
      const res = await admin().post('/users').query(body);
      expect(res.status).toBe(201);
      expectShape(res.body, 'user-public');
      expect(res.body).toMatchObject({ username: body.username, email: body.email, name: body.name });
    });

    it('accepts reset_password instead of password', async () => {
      const body = newUserBody({ password: undefined, reset_password: true });
      const res = await admin().post('/users').send(body);
      expect(res.status).toBe(201);
      expectShape(res.body, 'user-public');
    });

    it('makes an administrator with admin=true', async () => {
      const res = await admin()
        .post('/users')
        .send(newUserBody({ admin: true }));
      expect(res.status).toBe(201);
      expect(res.body).not.toHaveProperty('is_admin');
      const read = await admin().get(`/users/${res.body.id}`);
      expectShape(read.body, 'user-admin');
      expect(read.body.is_admin).toBe(true);
      // The new administrator can do what administrators do.
      const token = await createToken(t, res.body.id);
      const list = await as(token).get('/users');
      expect(list.status).toBe(200);
      expectEachShape(list, 'user-admin');
    });

    it('records confirmed_at only with skip_confirmation=true', async () => {
      const res = await admin()
        .post('/users')
        .send(newUserBody({ skip_confirmation: true }));
      expect(res.status).toBe(201);
      expect(Date.parse(res.body.confirmed_at)).toBeGreaterThan(Date.now() - 60_000);
      const no = await admin()
        .post('/users')
        .send(newUserBody({ skip_confirmation: false }));
      expect(no.status).toBe(201);
      expect(no.body.confirmed_at).toBeNull();
    });

    it('shows extern_uid and provider in identities', async () => {
      const s = unique();
      const res = await admin()
        .post('/users')
        .send(newUserBody({ extern_uid: `42${s}`, provider: 'github' }));
      expect(res.status).toBe(201);
      expectShape(res.body, 'user-public');
      expect(res.body.identities).toEqual([{ provider: 'github', extern_uid: `42${s}` }]);
      const half = newUserBody({ provider: 'github' });
      const before = await eventCount();
      const bad = await admin().post('/users').send(half);
      expect(bad.status).toBe(400);
      expect(bad.body).toEqual({ error: 'extern_uid, provider provide all or none of parameters' });
      await expectNothingStored(before, half.username);
    });

    it('names missing parameters in Grape words: 400', async () => {
      const full = newUserBody();
      const cases: [Record<string, unknown>, string][] = [
        [{ ...full, email: undefined }, 'email is missing'],
        [{ ...full, name: undefined }, 'name is missing'],
        [{ ...full, username: undefined }, 'username is missing'],
        [
          { ...full, password: undefined },
          'password, reset_password are missing, at least one parameter must be provided',
        ],
      ];
      const before = await eventCount();
      for (const [body, error] of cases) {
        const res = await admin().post('/users').send(body);
        expect(res.status).toBe(400);
        expect(res.headers['content-type']).toBe('application/json');
        expect(res.body).toEqual({ error });
      }
      const empty = await admin().post('/users').send({});
      expect(empty.status).toBe(400);
      expect(empty.body.error).toEqual(expect.stringContaining('email is missing'));
      expect(empty.body.error).toEqual(expect.stringContaining('name is missing'));
      expect(empty.body.error).toEqual(expect.stringContaining('username is missing'));
      await expectNothingStored(before, full.username);
    });

    it('refuses a taken e-mail, whatever its case: 409', async () => {
      const first = newUserBody();
      expect((await admin().post('/users').send(first)).status).toBe(201);
      const dup = newUserBody({ email: first.email.toUpperCase() });
      const before = await eventCount();
      const res = await admin().post('/users').send(dup);
      expect(res.status).toBe(409);
      expect(res.body).toEqual({ message: 'Email has already been taken' });
      await expectNothingStored(before, dup.username);
    });

    it("refuses another user's secondary e-mail: 409", async () => {
      const owner = await createUser(t);
      const secondary = `second-${unique()}@example.com`;
      const added = await admin().post(`/users/${owner.id}/emails`).send({ email: secondary });
      expect(added.status).toBe(201);
      const dup = newUserBody({ email: secondary.replace('second', 'SECOND') });
      const before = await eventCount();
      const res = await admin().post('/users').send(dup);
      expect(res.status).toBe(409);
      expect(res.body).toEqual({ message: 'Email has already been taken' });
      await expectNothingStored(before, dup.username);
    });

    it('refuses a taken username, whatever its case: 409', async () => {
      const first = newUserBody();
      expect((await admin().post('/users').send(first)).status).toBe(201);
      const before = await eventCount();
      const res = await admin()
        .post('/users')
        .send(newUserBody({ username: first.username.toUpperCase() }));
      expect(res.status).toBe(409);
      expect(res.body).toEqual({ message: 'Username has already been taken' });
      expect(await eventCount()).toBe(before);
      expect(
        (
          await admin()
            .post('/users')
            .send(newUserBody({ username: 'ROOT' }))
        ).body,
      ).toEqual({ message: 'Username has already been taken' });
    });

    it('reports a taken e-mail before a taken username, and both before other validation errors (GitLab order)', async () => {
      const taken = await createUser(t);
      const before = await eventCount();
      const both = await admin()
        .post('/users')
        .send(newUserBody({ email: taken.email, username: taken.username }));
      expect(both.status).toBe(409);
      expect(both.body).toEqual({ message: 'Email has already been taken' });
      const emailAndShort = await admin()
        .post('/users')
        .send(newUserBody({ email: taken.email, password: 'short' }));
      expect(emailAndShort.status).toBe(409);
      expect(emailAndShort.body).toEqual({ message: 'Email has already been taken' });
      const usernameAndBio = await admin()
        .post('/users')
        .send(newUserBody({ username: taken.username, bio: 'b'.repeat(256) }));
      expect(usernameAndBio.status).toBe(409);
      expect(usernameAndBio.body).toEqual({ message: 'Username has already been taken' });
      expect(await eventCount()).toBe(before);
    });

    it.each([
      ['username', { username: '-bad' }],
      ['username', { username: 'foo.git' }],
      ['username', { username: 'foo.' }],
      ['username', { username: 'api' }],
      ['username', { username: 'bad name' }],
      ['username', { username: 'u'.repeat(256) }],
      ['email', { email: 'not-an-email' }],
      ['email', { email: `${'e'.repeat(250)}@example.com` }],
      ['password', { password: 'short' }],
      ['bio', { bio: 'b'.repeat(256) }],
      ['projects_limit', { projects_limit: -1 }],
      ['name', { name: 'n'.repeat(256) }],
      ['location', { location: 'l'.repeat(256) }],
      ['messenger', { messenger: 'm'.repeat(256) }],
      ['career_profile', { career_profile: 'c'.repeat(256) }],
      ['social_account', { social_account: 's'.repeat(256) }],
      ['website_url', { website_url: 'w'.repeat(256) }],
      ['organization', { organization: 'o'.repeat(256) }],
      ['extern_uid', { extern_uid: 'x'.repeat(256), provider: 'github' }],
      ['provider', { extern_uid: 'x', provider: 'p'.repeat(256) }],
    ])('refuses an invalid %s with the model errors: 400 %#', async (field, attrs) => {
      const body = newUserBody(attrs);
      const before = await eventCount();
      const res = await admin().post('/users').send(body);
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toBe('application/json');
      expect(Object.keys(res.body)).toEqual(['message']);
      expect(res.body.message[field]).toEqual(expect.arrayContaining([expect.any(String)]));
      expect(await eventCount()).toBe(before);
      if (typeof body.username === 'string' && body.username.length < 256)
        await expectNothingStored(before, body.username);
    });

    it('words the common model errors as GitLab does', async () => {
      const reserved = await admin()
        .post('/users')
        .send(newUserBody({ username: 'api' }));
      expect(reserved.body).toEqual({ message: { username: ['api is a reserved name'] } });
      const short = await admin()
        .post('/users')
        .send(newUserBody({ password: 'short' }));
      expect(short.body).toEqual({ message: { password: ['is too short (minimum is 8 characters)'] } });
      const bio = await admin()
        .post('/users')
        .send(newUserBody({ bio: 'b'.repeat(256) }));
      expect(bio.body).toEqual({ message: { bio: ['is too long (maximum is 255 characters)'] } });
      const limit = await admin()
        .post('/users')
        .send(newUserBody({ projects_limit: -1 }));
      expect(limit.body).toEqual({ message: { projects_limit: ['must be greater than or equal to 0'] } });
      const email = await admin()
        .post('/users')
        .send(newUserBody({ email: 'nope' }));
      expect(email.body).toEqual({ message: { email: ['is invalid'] } });
    });

    it('refuses wrongly typed parameters: 400', async () => {
      const res = await admin()
        .post('/users')
        .send(newUserBody({ projects_limit: 'many' }));
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'projects_limit is invalid' });
      const admin2 = await admin()
        .post('/users')
        .send(newUserBody({ admin: 'perhaps' }));
      expect(admin2.status).toBe(400);
      expect(admin2.body).toEqual({ error: 'admin is invalid' });
    });

    it('is for administrators: 403 for others, 401 anonymous', async () => {
      const body = newUserBody();
      const before = await eventCount();
      const user = await as(viewer.token).post('/users').send(body);
      expect(user.status).toBe(403);
      expect(user.body).toEqual({ message: '403 Forbidden' });
      const nobody = await anon().post('/users').send(body);
      expect(nobody.status).toBe(401);
      expect(nobody.body).toEqual({ message: '401 Unauthorized' });
      const nobodyEmpty = await anon().post('/users');
      expect(nobodyEmpty.status).toBe(401);
      await expectNothingStored(before, body.username);
    });
  });

  describe('PUT /users/:id', () => {
    let target: SeededUser;
    let other: SeededUser;
    beforeAll(async () => {
      target = await createUser(t, { name: 'Target Person' });
      other = await createUser(t);
    });

    it('updates profile fields: 200 with the UserPublic view', async () => {
      const res = await admin()
        .put(`/users/${target.id}`)
        .send({ bio: 'new bio', location: 'Paris', projects_limit: 5, can_create_group: 'false' });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/json');
      expectShape(res.body, 'user-public');
      expect(res.body).toMatchObject({
        id: target.id,
        bio: 'new bio',
        location: 'Paris',
        projects_limit: 5,
        can_create_group: false,
        username: target.username,
      });
      const read = await admin().get(`/users/${target.id}`);
      expect(read.body).toMatchObject({
        bio: 'new bio',
        location: 'Paris',
        projects_limit: 5,
        can_create_group: false,
      });
    });

    it('takes form bodies and makes or unmakes administrators', async () => {
      const up = await admin().put(`/users/${target.id}`).type('form').send({ admin: 'True' });
      expect(up.status).toBe(200);
      expectShape(up.body, 'user-public');
      expect((await admin().get(`/users/${target.id}`)).body.is_admin).toBe(true);
      const down = await admin().put(`/users/${target.id}`).query({ admin: 'false' });
      expect(down.status).toBe(200);
      expect((await admin().get(`/users/${target.id}`)).body.is_admin).toBe(false);
    });

    it("accepts the user's own e-mail, username and name again (python-gitlab's save())", async () => {
      const current = (await admin().get(`/users/${target.id}`)).body;
      const before = await eventCount();
      const res = await admin().put(`/users/${target.id}`).send({
        email: current.email,
        username: current.username,
        name: current.name,
        bio: current.bio,
      });
      expect(res.status).toBe(200);
      expectShape(res.body, 'user-public');
      expect(res.body).toMatchObject({ email: current.email, username: current.username, name: current.name });
      // Nothing changed, so nothing was recorded.
      expect(await eventCount()).toBe(before);
      const recased = await admin()
        .put(`/users/${target.id}`)
        .send({ email: current.email.toUpperCase(), username: current.username.toUpperCase() });
      expect(recased.status).toBe(200);
      expect(recased.body.username).toBe(current.username.toUpperCase());
      // (GitLab would store the address lower-cased, as Devise does; Lode keeps it as given. Either way it is no conflict.)
      expect(recased.body.email.toLowerCase()).toBe(current.email.toLowerCase());
      const back = await admin().put(`/users/${target.id}`).send({ email: current.email, username: current.username });
      expect(back.status).toBe(200);
    });

    it('changes e-mail and username', async () => {
      const s = unique();
      const res = await admin()
        .put(`/users/${target.id}`)
        .send({ email: `moved-${s}@example.com`, username: `moved${s}` });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        email: `moved-${s}@example.com`,
        username: `moved${s}`,
        web_url: `http://lode.test/moved${s}`,
      });
      // The old address is free again.
      const reuse = await admin()
        .post('/users')
        .send(newUserBody({ email: target.email }));
      expect(reuse.status).toBe(201);
      target = { ...target, email: `moved-${s}@example.com`, username: `moved${s}` };
      const found = await admin()
        .get('/users')
        .query({ username: `moved${s}` });
      expect(ids(found)).toEqual([target.id]);
    });

    it("refuses another user's e-mail or username: 409", async () => {
      const before = await eventCount();
      const email = await admin().put(`/users/${target.id}`).send({ email: other.email.toUpperCase() });
      expect(email.status).toBe(409);
      expect(email.body).toEqual({ message: 'Email has already been taken' });
      const username = await admin().put(`/users/${target.id}`).send({ username: other.username.toUpperCase() });
      expect(username.status).toBe(409);
      expect(username.body).toEqual({ message: 'Username has already been taken' });
      expect(await eventCount()).toBe(before);
      const read = await admin().get(`/users/${target.id}`);
      expect(read.body).toMatchObject({ email: target.email, username: target.username });
    });

    it('reports a taken e-mail before a taken username, and both before other validation errors (GitLab order)', async () => {
      const before = await eventCount();
      const both = await admin().put(`/users/${target.id}`).send({ username: other.username, email: other.email });
      expect(both.status).toBe(409);
      expect(both.body).toEqual({ message: 'Email has already been taken' });
      const withInvalid = await admin()
        .put(`/users/${target.id}`)
        .send({ username: other.username, password: 'short' });
      expect(withInvalid.status).toBe(409);
      expect(withInvalid.body).toEqual({ message: 'Username has already been taken' });
      // The user's own values next to an invalid one: the validation error, no conflict.
      const own = await admin()
        .put(`/users/${target.id}`)
        .send({ username: target.username, email: target.email, bio: 'b'.repeat(256) });
      expect(own.status).toBe(400);
      expect(own.body).toEqual({ message: { bio: ['is too long (maximum is 255 characters)'] } });
      expect(await eventCount()).toBe(before);
    });

    it("refuses another user's secondary e-mail: 409", async () => {
      const secondary = `second-${unique()}@example.com`;
      expect((await admin().post(`/users/${other.id}/emails`).send({ email: secondary })).status).toBe(201);
      const res = await admin().put(`/users/${target.id}`).send({ email: secondary });
      expect(res.status).toBe(409);
      expect(res.body).toEqual({ message: 'Email has already been taken' });
    });

    it("swaps the primary e-mail with one of the user's own secondary addresses, as GitLab does", async () => {
      const own = await createUser(t);
      const secondary = `own-second-${unique()}@example.com`;
      const added = await admin().post(`/users/${own.id}/emails`).send({ email: secondary });
      expect(added.status).toBe(201);
      const res = await admin().put(`/users/${own.id}`).send({ email: secondary });
      expect(res.status).toBe(200);
      expect(res.body.email).toBe(secondary);
      const emails = await admin().get(`/users/${own.id}/emails`);
      expect(emails.body.map((e: { email: string }) => e.email)).toEqual([own.email.toLowerCase()]);
      // The old primary is now the user's secondary: nobody else may take it.
      const clash = await admin().post(`/users/${other.id}/emails`).send({ email: own.email });
      expect(clash.status).toBe(400);
      expect(clash.body).toEqual({ message: { email: ['has already been taken'] } });
    });

    it('wants at least one parameter: 400', async () => {
      const res = await admin().put(`/users/${target.id}`).send({});
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: expect.stringMatching(
          /^email, password, name, username, .* are missing, at least one parameter must be provided$/,
        ),
      });
    });

    it('refuses invalid values: 400 with the model errors', async () => {
      const before = await eventCount();
      const cases: [Record<string, unknown>, string][] = [
        [{ username: '-bad' }, 'username'],
        [{ email: 'nope' }, 'email'],
        [{ password: 'short' }, 'password'],
        [{ bio: 'b'.repeat(256) }, 'bio'],
        [{ projects_limit: -1 }, 'projects_limit'],
        [{ name: '' }, 'name'],
        [{ organization: 'o'.repeat(256) }, 'organization'],
      ];
      for (const [body, field] of cases) {
        const res = await admin().put(`/users/${target.id}`).send(body);
        expect(res.status).toBe(400);
        expect(Object.keys(res.body)).toEqual(['message']);
        expect(res.body.message[field]).toEqual(expect.arrayContaining([expect.any(String)]));
      }
      const half = await admin().put(`/users/${target.id}`).send({ extern_uid: 'x' });
      expect(half.status).toBe(400);
      expect(half.body).toEqual({ error: 'extern_uid, provider provide all or none of parameters' });
      expect(await eventCount()).toBe(before);
    });

    it('adds or replaces an identity', async () => {
      const res = await admin().put(`/users/${target.id}`).send({ extern_uid: 'gh-1', provider: 'github' });
      expect(res.status).toBe(200);
      expect(res.body.identities).toEqual([{ provider: 'github', extern_uid: 'gh-1' }]);
      const again = await admin().put(`/users/${target.id}`).send({ extern_uid: 'gh-2', provider: 'github' });
      expect(again.body.identities).toEqual([{ provider: 'github', extern_uid: 'gh-2' }]);
    });

    it('changes the password', async () => {
      const res = await admin().put(`/users/${target.id}`).send({ password: 'another-secret' });
      expect(res.status).toBe(200);
      expectShape(res.body, 'user-public');
    });

    it('answers an unknown user with 404, a non-admin with 403, anonymous with 401', async () => {
      const unknown = await admin().put('/users/999999').send({ bio: 'x' });
      expect(unknown.status).toBe(404);
      expect(unknown.body).toEqual({ message: '404 User Not Found' });
      const user = await as(viewer.token).put(`/users/${target.id}`).send({ bio: 'x' });
      expect(user.status).toBe(403);
      expect(user.body).toEqual({ message: '403 Forbidden' });
      const self = await as(target.token).put(`/users/${target.id}`).send({ admin: true });
      expect(self.status).toBe(403);
      const nobody = await anon().put(`/users/${target.id}`).send({ bio: 'x' });
      expect(nobody.status).toBe(401);
      expect(nobody.body).toEqual({ message: '401 Unauthorized' });
      expect((await admin().get(`/users/${target.id}`)).body.bio).not.toBe('x');
    });
  });

  describe('DELETE /users/:id', () => {
    it('deletes: 204 without a body; the user is gone and so is their token', async () => {
      const u = await createUser(t);
      expect((await as(u.token).get('/user')).status).toBe(200);
      const res = await admin().delete(`/users/${u.id}`);
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expect(res.headers['content-type']).toBeUndefined();
      const read = await admin().get(`/users/${u.id}`);
      expect(read.status).toBe(404);
      expect(read.body).toEqual({ message: '404 User Not Found' });
      expect((await admin().get('/users').query({ username: u.username })).body).toEqual([]);
      const token = await as(u.token).get('/user');
      expect(token.status).toBe(401);
      expect(token.body).toEqual({ message: '401 Unauthorized' });
      const [event] = await t.db.query(`select data from events where type = 'UserDeleted' and stream_id = $1`, [
        `user-${u.id}`,
      ]);
      expect(event.data).toMatchObject({ userId: u.id, username: u.username, hardDelete: false });
      const again = await admin().delete(`/users/${u.id}`);
      expect(again.status).toBe(404);
      expect(again.body).toEqual({ message: '404 User Not Found' });
    });

    it('records hard_delete=true in UserDeleted', async () => {
      const u = await createUser(t);
      const res = await admin().delete(`/users/${u.id}`).query({ hard_delete: 'true' });
      expect(res.status).toBe(204);
      const [event] = await t.db.query(`select data from events where type = 'UserDeleted' and stream_id = $1`, [
        `user-${u.id}`,
      ]);
      expect(event.data).toMatchObject({ userId: u.id, hardDelete: true });
    });

    it('frees the username and e-mail of a deleted user', async () => {
      const u = await createUser(t);
      expect((await admin().delete(`/users/${u.id}`)).status).toBe(204);
      const res = await admin()
        .post('/users')
        .send(newUserBody({ username: u.username, email: u.email }));
      expect(res.status).toBe(201);
      expect(res.body.id).not.toBe(u.id);
    });

    it('answers unknown 404, non-admin 403, anonymous 401', async () => {
      const u = await createUser(t);
      const unknown = await admin().delete('/users/999999');
      expect(unknown.status).toBe(404);
      expect(unknown.body).toEqual({ message: '404 User Not Found' });
      const user = await as(viewer.token).delete(`/users/${u.id}`);
      expect(user.status).toBe(403);
      expect(user.body).toEqual({ message: '403 Forbidden' });
      const nobody = await anon().delete(`/users/${u.id}`);
      expect(nobody.status).toBe(401);
      expect(nobody.body).toEqual({ message: '401 Unauthorized' });
      expect((await admin().get(`/users/${u.id}`)).status).toBe(200);
    });
  });

  describe('POST /users/:id/block and /unblock', () => {
    it('blocks (201 true), refuses the blocked token (403), blocks again (201 null), unblocks (201 true)', async () => {
      const u = await createUser(t);
      const res = await admin().post(`/users/${u.id}/block`);
      expect(res.status).toBe(201);
      expect(res.headers['content-type']).toBe('application/json');
      expect(res.body).toBe(true);
      expect((await admin().get(`/users/${u.id}`)).body.state).toBe('blocked');
      const blockedToken = await as(u.token).get('/user');
      expect(blockedToken.status).toBe(403);
      expect(blockedToken.body).toEqual({ message: '403 Forbidden - User is blocked' });
      const listing = await as(u.token).get('/users');
      expect(listing.status).toBe(403);
      expect(listing.body).toEqual({ message: '403 Forbidden - User is blocked' });
      const again = await admin().post(`/users/${u.id}/block`);
      // GitLab's `break if user.blocked?`: 201 and a JSON null.
      expect(again.status).toBe(201);
      expect(again.headers['content-type']).toBe('application/json');
      expect(again.text).toBe('null');
      const unblock = await admin().post(`/users/${u.id}/unblock`);
      expect(unblock.status).toBe(201);
      expect(unblock.body).toBe(true);
      expect((await admin().get(`/users/${u.id}`)).body.state).toBe('active');
      expect((await as(u.token).get('/user')).status).toBe(200);
      // Unblocking an active user moves nothing: GitLab's state machine answers false.
      const unblockAgain = await admin().post(`/users/${u.id}/unblock`);
      expect(unblockAgain.status).toBe(201);
      expect(unblockAgain.body).toBe(false);
    });

    it('takes python-gitlab style action POSTs with an empty JSON body', async () => {
      const u = await createUser(t);
      const res = await admin().post(`/users/${u.id}/block`).set('Content-Type', 'application/json').send({});
      expect(res.status).toBe(201);
      expect(res.body).toBe(true);
    });

    it('answers unknown 404, non-admin 403, anonymous 401', async () => {
      const u = await createUser(t);
      for (const action of ['block', 'unblock']) {
        const unknown = await admin().post(`/users/999999/${action}`);
        expect(unknown.status).toBe(404);
        expect(unknown.body).toEqual({ message: '404 User Not Found' });
        const user = await as(viewer.token).post(`/users/${u.id}/${action}`);
        expect(user.status).toBe(403);
        expect(user.body).toEqual({ message: '403 Forbidden' });
        const nobody = await anon().post(`/users/${u.id}/${action}`);
        expect(nobody.status).toBe(401);
        expect(nobody.body).toEqual({ message: '401 Unauthorized' });
      }
      expect((await admin().get(`/users/${u.id}`)).body.state).toBe('active');
    });

    it('leaves users blocked by the directory alone: 403 for block and unblock', async () => {
      const u = await createUser(t);
      const moved = await t.app.get(CommandBus).execute(new ChangeUserBlock(u.id, 'block', true));
      expect(moved).toBe(true);
      // GitLab 10.x shows the state machine's own name for a directory block.
      const read = await admin().get(`/users/${u.id}`);
      expectShape(read.body, 'user-admin');
      expect(read.body.state).toBe('ldap_blocked');
      const blocked = await admin().get('/users').query({ blocked: true, per_page: 100 });
      expect(ids(blocked)).toContain(u.id);
      const active = await admin().get('/users').query({ active: true, per_page: 100 });
      expect(ids(active)).not.toContain(u.id);
      const token = await as(u.token).get('/user');
      expect(token.status).toBe(403);
      expect(token.body).toEqual({ message: '403 Forbidden - User is blocked' });
      const block = await admin().post(`/users/${u.id}/block`);
      expect(block.status).toBe(403);
      expect(block.body).toEqual({ message: '403 Forbidden - LDAP blocked users cannot be modified by the API' });
      const unblock = await admin().post(`/users/${u.id}/unblock`);
      expect(unblock.status).toBe(403);
      expect(unblock.body).toEqual({ message: '403 Forbidden - LDAP blocked users cannot be unblocked by the API' });
      expect((await admin().get(`/users/${u.id}`)).body.state).toBe('ldap_blocked');
    });
  });

  describe('custom attributes', () => {
    let u: SeededUser;
    let v: SeededUser;
    beforeAll(async () => {
      u = await createUser(t);
      v = await createUser(t);
    });

    it('sets (200 {key,value}), lists, reads and deletes (204)', async () => {
      const set = await admin().put(`/users/${u.id}/custom_attributes/team`).send({ value: 'blue' });
      expect(set.status).toBe(200);
      expect(set.headers['content-type']).toBe('application/json');
      expectShape(set.body, 'custom-attribute');
      expect(set.body).toEqual({ key: 'team', value: 'blue' });
      const form = await admin().put(`/users/${u.id}/custom_attributes/floor`).type('form').send({ value: '3' });
      expect(form.status).toBe(200);
      expect(form.body).toEqual({ key: 'floor', value: '3' });
      const update = await admin().put(`/users/${u.id}/custom_attributes/team`).query({ value: 'red' });
      expect(update.status).toBe(200);
      expect(update.body).toEqual({ key: 'team', value: 'red' });
      const list = await admin().get(`/users/${u.id}/custom_attributes`);
      expect(list.status).toBe(200);
      for (const a of list.body) expectShape(a, 'custom-attribute');
      expect(list.body).toEqual(
        expect.arrayContaining([
          { key: 'team', value: 'red' },
          { key: 'floor', value: '3' },
        ]),
      );
      expect(list.body).toHaveLength(2);
      const one = await admin().get(`/users/${u.id}/custom_attributes/team`);
      expect(one.status).toBe(200);
      expect(one.body).toEqual({ key: 'team', value: 'red' });
      const del = await admin().delete(`/users/${u.id}/custom_attributes/floor`);
      expect(del.status).toBe(204);
      expect(del.text).toBe('');
      expect((await admin().get(`/users/${u.id}/custom_attributes`)).body).toEqual([{ key: 'team', value: 'red' }]);
    });

    it('answers an unknown key with 404', async () => {
      // GitLab's `custom_attributes.find_by!` miss is an ActiveRecord::RecordNotFound: `404 Not found`.
      const get = await admin().get(`/users/${u.id}/custom_attributes/nope`);
      expect(get.status).toBe(404);
      expect(get.body).toEqual({ message: '404 Not found' });
      const del = await admin().delete(`/users/${u.id}/custom_attributes/nope`);
      expect(del.status).toBe(404);
      expect(del.body).toEqual({ message: '404 Not found' });
    });

    it('wants a value: 400', async () => {
      const res = await admin().put(`/users/${u.id}/custom_attributes/team`).send({});
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'value is missing' });
    });

    it('answers an unknown user with 404', async () => {
      for (const res of [
        await admin().get('/users/999999/custom_attributes'),
        await admin().get('/users/999999/custom_attributes/team'),
        await admin().put('/users/999999/custom_attributes/team').send({ value: 'x' }),
        await admin().delete('/users/999999/custom_attributes/team'),
      ]) {
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ message: '404 User Not Found' });
      }
    });

    it('is for administrators: 403 for others, 401 anonymous', async () => {
      const calls = (c: ReturnType<typeof anon>) => [
        c.get(`/users/${u.id}/custom_attributes`),
        c.get(`/users/${u.id}/custom_attributes/team`),
        c.put(`/users/${u.id}/custom_attributes/team`).send({ value: 'x' }),
        c.delete(`/users/${u.id}/custom_attributes/team`),
      ];
      for (const res of await Promise.all(calls(as(viewer.token)))) {
        expect(res.status).toBe(403);
        expect(res.body).toEqual({ message: '403 Forbidden' });
      }
      for (const res of await Promise.all(calls(anon()))) {
        expect(res.status).toBe(401);
        expect(res.body).toEqual({ message: '401 Unauthorized' });
      }
      expect((await admin().get(`/users/${u.id}/custom_attributes/team`)).body).toEqual({ key: 'team', value: 'red' });
    });

    it('filters GET /users by custom_attributes[key]=value for administrators only', async () => {
      const s = unique();
      expect(
        (
          await admin()
            .put(`/users/${u.id}/custom_attributes/dept`)
            .send({ value: `ops${s}` })
        ).status,
      ).toBe(200);
      expect(
        (
          await admin()
            .put(`/users/${v.id}/custom_attributes/dept`)
            .send({ value: `ops${s}` })
        ).status,
      ).toBe(200);
      expect((await admin().put(`/users/${v.id}/custom_attributes/site`).send({ value: 'north' })).status).toBe(200);
      const one = await admin().get(`/users?custom_attributes[dept]=ops${s}`);
      expect(one.status).toBe(200);
      expectEachShape(one, 'user-admin');
      expect(ids(one)).toEqual([v.id, u.id]);
      const both = await admin().get(`/users?custom_attributes[dept]=ops${s}&custom_attributes[site]=north`);
      expect(ids(both)).toEqual([v.id]);
      expect(both.headers['x-total']).toBe('1');
      const none = await admin().get(`/users?custom_attributes[dept]=nothing${s}`);
      expect(none.body).toEqual([]);
      // Not an administrator: the filter is ignored, as GitLab does.
      const user = await as(viewer.token).get(`/users?custom_attributes[dept]=nothing${s}&per_page=100`);
      expect(user.status).toBe(200);
      expect(ids(user)).toEqual(expect.arrayContaining([u.id, v.id]));
    });
  });

  describe('avatars', () => {
    it('stores a PNG sent with POST /users and serves it where avatar_url points', async () => {
      const body = newUserBody();
      const req = admin().post('/users');
      for (const [k, v] of Object.entries(body)) req.field(k, String(v));
      const res = await req.attach('avatar', PNG, { filename: 'me.png', contentType: 'image/png' });
      expect(res.status).toBe(201);
      expectShape(res.body, 'user-public');
      expect(res.body.avatar_url).toBe(`http://lode.test/uploads/-/system/user/avatar/${res.body.id}/me.png`);
      const path = new URL(res.body.avatar_url).pathname;
      const file = await t.http().get(path).buffer(true).parse(bytes);
      expect(file.status).toBe(200);
      expect(file.headers['content-type']).toBe('image/png');
      expect(file.headers['x-content-type-options']).toBe('nosniff');
      expect(Buffer.compare(file.body as Buffer, PNG)).toBe(0);
      // Lists and single reads point at the same file.
      const listed = await as(viewer.token).get('/users').query({ username: body.username });
      expect(listed.body[0].avatar_url).toBe(res.body.avatar_url);
      // What does not exist is a 404, not a directory listing or another user's file.
      expect((await t.http().get(`/uploads/-/system/user/avatar/${res.body.id}/other.png`)).status).toBe(404);
      expect((await t.http().get(`/uploads/-/system/user/avatar/${viewer.id}/me.png`)).status).toBe(404);
    });

    it('keeps a UTF-8 file name as sent', async () => {
      const u = await createUser(t);
      const res = await admin()
        .put(`/users/${u.id}`)
        .attach('avatar', PNG, { filename: 'café ü.png', contentType: 'image/png' });
      expect(res.status).toBe(200);
      expect(res.body.avatar_url).toBe(
        `http://lode.test/uploads/-/system/user/avatar/${u.id}/${encodeURIComponent('café ü.png')}`,
      );
      const file = await t.http().get(new URL(res.body.avatar_url).pathname);
      expect(file.status).toBe(200);
      expect(file.headers['content-type']).toBe('image/png');
    });

    it('replaces the avatar with PUT /users/:id', async () => {
      const u = await createUser(t);
      const res = await admin()
        .put(`/users/${u.id}`)
        .attach('avatar', PNG, { filename: 'new.png', contentType: 'image/png' });
      expect(res.status).toBe(200);
      expectShape(res.body, 'user-public');
      expect(res.body.avatar_url).toBe(`http://lode.test/uploads/-/system/user/avatar/${u.id}/new.png`);
      expect((await t.http().get(`/uploads/-/system/user/avatar/${u.id}/new.png`)).status).toBe(200);
    });

    it.each([
      ['an SVG', 'evil.svg', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>')],
      ['an HTML file', 'evil.html', Buffer.from('<html><script>alert(1)</script></html>')],
      ['a file over 200 KB', 'big.png', Buffer.concat([PNG, Buffer.alloc(201 * 1024)])],
    ])('refuses %s as avatar: 400, nothing stored', async (_, filename, content) => {
      const body = newUserBody();
      const before = await eventCount();
      const req = admin().post('/users');
      for (const [k, v] of Object.entries(body)) req.field(k, String(v));
      const res = await req.attach('avatar', content, { filename });
      expect(res.status).toBe(400);
      expect(Object.keys(res.body)).toEqual(['message']);
      expect(Object.keys(res.body.message)).toEqual(['avatar']);
      expect(res.body.message.avatar).toEqual([expect.any(String)]);
      await expectNothingStored(before, body.username);
      // The upload's temporary file goes as well.
      await eventually(async () => (await readdir(join(t.config.dataDir, 'tmp'))).length === 0);
    });

    it('keeps the old avatar when PUT sends one it refuses', async () => {
      const u = await createUser(t);
      expect(
        (await admin().put(`/users/${u.id}`).attach('avatar', PNG, { filename: 'keep.png', contentType: 'image/png' }))
          .status,
      ).toBe(200);
      const res = await admin().put(`/users/${u.id}`).attach('avatar', Buffer.from('<svg/>'), { filename: 'x.svg' });
      expect(res.status).toBe(400);
      expect(Object.keys(res.body.message)).toEqual(['avatar']);
      const read = await admin().get(`/users/${u.id}`);
      expect(read.body.avatar_url).toBe(`http://lode.test/uploads/-/system/user/avatar/${u.id}/keep.png`);
      expect((await t.http().get(`/uploads/-/system/user/avatar/${u.id}/keep.png`)).status).toBe(200);
    });

    it('removes the avatar directory after the user is deleted', async () => {
      const body = newUserBody();
      const req = admin().post('/users');
      for (const [k, v] of Object.entries(body)) req.field(k, String(v));
      const res = await req.attach('avatar', PNG, { filename: 'gone.png', contentType: 'image/png' });
      expect(res.status).toBe(201);
      const dir = join(t.config.dataDir, 'uploads', '-', 'system', 'user', 'avatar', String(res.body.id));
      expect(existsSync(join(dir, 'gone.png'))).toBe(true);
      expect((await admin().delete(`/users/${res.body.id}`)).status).toBe(204);
      await eventually(() => !existsSync(dir), 15_000);
      expect((await t.http().get(`/uploads/-/system/user/avatar/${res.body.id}/gone.png`)).status).toBe(404);
    });
  });

  describe('HTTP edge', () => {
    it("answers unknown routes with Grape's 404 body", async () => {
      const res = await admin().get('/nonexistent');
      expect(res.status).toBe(404);
      expect(res.headers['content-type']).toBe('application/json');
      expect(res.body).toEqual({ error: '404 Not Found' });
      const anonymous = await anon().get('/nonexistent');
      expect(anonymous.status).toBe(404);
      expect(anonymous.body).toEqual({ error: '404 Not Found' });
    });

    it('sends Content-Type application/json exactly, for answers and errors', async () => {
      const answers = [
        await admin().get('/users'),
        await admin().get('/users/1'),
        await anon().get('/users'),
        await admin().post('/users').send({}),
        await as(viewer.token).post('/users').send({}),
        await t.http().get('/api/v4/users').set('PRIVATE-TOKEN', 'not-a-token'),
      ];
      expect(answers.map((r) => r.status)).toEqual([200, 200, 403, 400, 403, 401]);
      for (const res of answers) expect(res.headers['content-type']).toBe('application/json');
    });

    it('echoes X-Request-Id when given and makes one otherwise', async () => {
      const given = await admin().get('/users/1').set('X-Request-Id', 'my-request-123');
      expect(given.headers['x-request-id']).toBe('my-request-123');
      const made = await admin().get('/users/1');
      expect(made.headers['x-request-id']).toMatch(/^[\w.:-]{8,}$/);
      const other = await admin().get('/users/1');
      expect(other.headers['x-request-id']).not.toBe(made.headers['x-request-id']);
      const error = await anon().get('/users').set('X-Request-Id', 'failing-request');
      expect(error.status).toBe(403);
      expect(error.headers['x-request-id']).toBe('failing-request');
    });

    it('takes python-gitlab style GETs that carry Content-Type: application/json and no body', async () => {
      const res = await admin().get('/users').set('Content-Type', 'application/json');
      expect(res.status).toBe(200);
      expectEachShape(res, 'user-admin');
    });

    it('refuses an unknown token with 401', async () => {
      const res = await t.http().get('/api/v4/users/1').set('PRIVATE-TOKEN', 'not-a-token');
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ message: '401 Unauthorized' });
    });
  });
});
