import type { Gitlab } from '@gitbeaker/rest' with { 'resolution-mode': 'import' };
import request from 'supertest';
import { expectShape } from '../contract/shape';
import { git, gitOk, tempDirs } from '../support/git';
import { runPython } from '../support/python-gitlab';
import { createUser, type SeededUser } from '../support/seed';
import { freePort, secondAppFor, startTestApp, type TestApp } from '../support/test-app';

/**
 * GitLab's Personal Access Tokens API over Lode's tokens: plain HTTP (statuses, shapes, who may see
 * and revoke what), python-gitlab 3.12's and gitbeaker's own methods, the calls terraform's
 * `gitlab_personal_access_token` makes, and revocation seen at once by a second Lode on the same
 * database whose token cache would otherwise keep the token for a minute.
 */
describe('personal access tokens', () => {
  let t: TestApp;
  let host: string;
  let alice: SeededUser;
  let bob: SeededUser;
  const api = (path: string) => `/api/v4${path}`;
  const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
  const as = (token: string) => ({
    get: (path: string) => t.http().get(api(path)).set('PRIVATE-TOKEN', token),
    post: (path: string, body: object = {}) => t.http().post(api(path)).set('PRIVATE-TOKEN', token).send(body),
    delete: (path: string) => t.http().delete(api(path)).set('PRIVATE-TOKEN', token),
  });
  const root = () => as(t.rootToken);
  const whoAmI = (token: string, on: TestApp['http'] = t.http) => on().get(api('/user')).set('PRIVATE-TOKEN', token);

  /** A personal access token made by root through the route under test. */
  async function personal(userId: number, body: object = {}) {
    const res = await root().post(`/users/${userId}/personal_access_tokens`, { name: 'ci', scopes: ['api'], ...body });
    expect(res.status).toBe(201);
    return res.body as { id: number; token: string; name: string; scopes: string[]; expires_at: string | null };
  }

  beforeAll(async () => {
    const port = await freePort();
    host = `http://127.0.0.1:${port}`;
    // A minute-long token cache: every "refused at once" below is the cache's eviction, not its expiry.
    t = await startTestApp({ externalUrl: host, tokenCacheMs: 60_000 });
    await t.app.listen(port, '127.0.0.1');
    alice = await createUser(t);
    bob = await createUser(t);
  });

  afterAll(async () => {
    await t.close();
  });

  describe('POST /users/:user_id/personal_access_tokens', () => {
    it('makes a working token for an administrator: 201, the secret this once, GitLab 16 shape', async () => {
      const res = await root().post(`/users/${alice.id}/personal_access_tokens`, {
        name: 'deploy',
        scopes: ['api', 'read_user'],
        expires_at: day(30),
      });
      expect(res.status).toBe(201);
      expectShape(res.body, 'personal-access-token-created');
      expect(res.body).toMatchObject({
        name: 'deploy',
        revoked: false,
        scopes: ['api', 'read_user'],
        user_id: alice.id,
        last_used_at: null,
        active: true,
        expires_at: day(30),
      });
      expect(res.body.token).toMatch(/^\S{20,}$/);
      expect(new Date(res.body.created_at).toISOString()).toBe(res.body.created_at);
      const me = await whoAmI(res.body.token);
      expect([me.status, me.body.id]).toEqual([200, alice.id]);
      // Never shown again.
      const read = await root().get(`/personal_access_tokens/${res.body.id}`);
      expect(read.status).toBe(200);
      expect(read.body).not.toHaveProperty('token');
      expect(JSON.stringify(read.body)).not.toContain(res.body.token);
    });

    it('takes scopes as a comma-separated string and no expiry, as form clients send them', async () => {
      const res = await t
        .http()
        .post(api(`/users/${alice.id}/personal_access_tokens`))
        .set('PRIVATE-TOKEN', t.rootToken)
        .type('form')
        .send({ name: 'form', scopes: 'api,read_user' });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ scopes: ['api', 'read_user'], expires_at: null, active: true });
    });

    it('is for administrators: 401 anonymous, 403 others, 404 for an unknown user', async () => {
      const body = { name: 'x', scopes: ['api'] };
      const anonymous = await t
        .http()
        .post(api(`/users/${alice.id}/personal_access_tokens`))
        .send(body);
      expect([anonymous.status, anonymous.body]).toEqual([401, { message: '401 Unauthorized' }]);
      const own = await as(alice.token).post(`/users/${alice.id}/personal_access_tokens`, body);
      expect([own.status, own.body]).toEqual([403, { message: '403 Forbidden' }]);
      const unknown = await root().post('/users/987654/personal_access_tokens', body);
      expect([unknown.status, unknown.body]).toEqual([404, { message: '404 User Not Found' }]);
    });

    it("refuses bad parameters with Grape's 400s", async () => {
      const path = `/users/${alice.id}/personal_access_tokens`;
      for (const [body, error] of [
        [{ scopes: ['api'] }, 'name is missing'],
        [{ name: 'x' }, 'scopes is missing'],
        [{ name: 'x', scopes: ['api', 'write_everything'] }, 'scopes does not have a valid value'],
        [{ name: 'x', scopes: ['api'], expires_at: '2024-02-30' }, 'expires_at is invalid'],
      ] as const) {
        const res = await root().post(path, body);
        expect([res.status, res.body]).toEqual([400, { error }]);
      }
      // sudo is an administrator's scope only, as for Lode's other tokens.
      const sudo = await root().post(path, { name: 'x', scopes: ['sudo'] });
      expect(sudo.status).toBe(400);
      expect(sudo.body).toEqual({ message: { scopes: ['can only contain available scopes'] } });
    });
  });

  describe('GET /personal_access_tokens', () => {
    let carol: SeededUser;
    let active: number;
    let revoked: number;
    let expired: number;

    beforeAll(async () => {
      carol = await createUser(t); // holds one impersonation token from the seed
      active = (await personal(carol.id, { name: 'build-active' })).id;
      const gone = await personal(carol.id, { name: 'build-revoked' });
      revoked = gone.id;
      expect((await root().delete(`/personal_access_tokens/${revoked}`)).status).toBe(204);
      expired = (await personal(carol.id, { name: 'old', expires_at: day(-1) })).id;
    });

    const ids = (res: request.Response) => (res.body as { id: number }[]).map((x) => x.id);

    it("lists a user's own personal tokens, oldest first, without impersonation tokens or the secret", async () => {
      const res = await as(carol.token).get('/personal_access_tokens');
      expect(res.status).toBe(200);
      expect(ids(res)).toEqual([active, revoked, expired]);
      expect(res.headers['x-total']).toBe('3');
      for (const item of res.body) expectShape(item, 'personal-access-token');
      expect(res.body.map((x: { active: boolean }) => x.active)).toEqual([true, false, false]);
      expect((await as(carol.token).get(`/personal_access_tokens?user_id=${carol.id}`)).body).toEqual(res.body);
    });

    it("answers 401 to a user asking for another user's tokens, and to anonymous callers", async () => {
      const other = await as(carol.token).get(`/personal_access_tokens?user_id=${alice.id}`);
      expect([other.status, other.body]).toEqual([401, { message: '401 Unauthorized' }]);
      expect((await t.http().get(api('/personal_access_tokens'))).status).toBe(401);
    });

    it("lists everyone's tokens for an administrator, impersonation ones too, and one user's with user_id", async () => {
      const all = await root().get('/personal_access_tokens?per_page=100');
      expect(all.status).toBe(200);
      expect(new Set((all.body as { user_id: number }[]).map((x) => x.user_id))).toEqual(
        new Set([1, alice.id, bob.id, carol.id]),
      );
      const carols = await root().get(`/personal_access_tokens?user_id=${carol.id}`);
      expect(carols.body).toHaveLength(4); // the seeded impersonation token and the three above
      for (const userId of ['987654', '']) {
        const res = await root().get(`/personal_access_tokens?user_id=${userId}`);
        expect([res.status, res.body]).toEqual([404, { message: '404 Not found' }]);
      }
    });

    it("filters by GitLab's parameters", async () => {
      const q = (query: string) => root().get(`/personal_access_tokens?user_id=${carol.id}&${query}`);
      const personalOnly = (res: request.Response) => ids(res).filter((id) => [active, revoked, expired].includes(id));
      expect(personalOnly(await q('revoked=true'))).toEqual([revoked]);
      expect(personalOnly(await q('revoked=false'))).toEqual([active, expired]);
      expect(personalOnly(await q('state=active'))).toEqual([active]);
      expect(personalOnly(await q('state=inactive'))).toEqual([revoked, expired]);
      expect(ids(await q('search=BUILD'))).toEqual([active, revoked]);
      expect(ids(await q('search=%25'))).toEqual([]);
      expect(ids(await q(`created_before=${day(-1)}`))).toEqual([]);
      expect((await q(`created_after=${day(-1)}`)).body).toHaveLength(4);
      // Lode records no use, so no token was ever used, and GitLab leaves never-used tokens out.
      expect(ids(await q(`last_used_after=${day(-30)}`))).toEqual([]);
      for (const [query, error] of [
        ['state=gone', 'state does not have a valid value'],
        ['revoked=maybe', 'revoked is invalid'],
        ['created_before=yesterday', 'created_before is invalid'],
        ['user_id=abc', 'user_id is invalid'],
      ]) {
        const res = await root().get(`/personal_access_tokens?${query}`);
        expect([res.status, res.body]).toEqual([400, { error }]);
      }
    });

    it('needs the api scope: a read_user token is 403', async () => {
      const reader = await personal(carol.id, { scopes: ['read_user'] });
      const res = await as(reader.token).get('/personal_access_tokens');
      expect(res.status).toBe(403);
    });
  });

  describe('GET /personal_access_tokens/:id and /self', () => {
    it("shows the owner's token to the owner and to administrators", async () => {
      const made = await personal(alice.id, { name: 'mine' });
      for (const token of [alice.token, t.rootToken]) {
        const res = await as(token).get(`/personal_access_tokens/${made.id}`);
        expect(res.status).toBe(200);
        expectShape(res.body, 'personal-access-token');
        expect(res.body).toMatchObject({ id: made.id, name: 'mine', user_id: alice.id, active: true });
      }
    });

    it('tells only administrators that an id is unknown: 401 for others, also for an unknown id', async () => {
      const made = await personal(alice.id);
      for (const id of [made.id, 987654]) {
        const res = await as(bob.token).get(`/personal_access_tokens/${id}`);
        expect([res.status, res.body]).toEqual([401, { message: '401 Unauthorized' }]);
      }
      const unknown = await root().get('/personal_access_tokens/987654');
      expect([unknown.status, unknown.body]).toEqual([404, { message: '404 Not found' }]);
      expect((await root().get('/personal_access_tokens/99999999999')).status).toBe(404);
      const bad = await root().get('/personal_access_tokens/abc');
      expect([bad.status, bad.body]).toEqual([400, { error: 'id is invalid' }]);
    });

    it('shows the calling token on /self, whatever its scopes', async () => {
      const reader = await personal(alice.id, { name: 'reader', scopes: ['read_user'] });
      const res = await as(reader.token).get('/personal_access_tokens/self');
      expect(res.status).toBe(200);
      expectShape(res.body, 'personal-access-token');
      expect(res.body).toMatchObject({ id: reader.id, name: 'reader', scopes: ['read_user'], user_id: alice.id });
      expect((await t.http().get(api('/personal_access_tokens/self'))).status).toBe(401);
    });
  });

  describe('DELETE /personal_access_tokens/:id and /self', () => {
    it("revokes the caller's own token: 204, refused on the very next request, then shown revoked", async () => {
      const made = await personal(alice.id);
      expect((await whoAmI(made.token)).status).toBe(200); // cached from here on
      const del = await as(alice.token).delete(`/personal_access_tokens/${made.id}`);
      expect([del.status, del.text]).toEqual([204, '']);
      expect((await whoAmI(made.token)).status).toBe(401);
      const read = await as(alice.token).get(`/personal_access_tokens/${made.id}`);
      expect(read.body).toMatchObject({ revoked: true, active: false });
      // Revoking again is no error, as GitLab's revoke! of a revoked token.
      expect((await as(alice.token).delete(`/personal_access_tokens/${made.id}`)).status).toBe(204);
    });

    it("answers a bare 400 for another user's token and for one's own impersonation token, 404 for none", async () => {
      const alices = await personal(alice.id);
      const other = await as(bob.token).delete(`/personal_access_tokens/${alices.id}`);
      expect([other.status, other.body]).toEqual([400, { message: '400 Bad request' }]);
      expect((await whoAmI(alices.token)).status).toBe(200);
      const impersonation = (await as(bob.token).get('/personal_access_tokens/self')).body.id as number;
      const own = await as(bob.token).delete(`/personal_access_tokens/${impersonation}`);
      expect([own.status, own.body]).toEqual([400, { message: '400 Bad request' }]);
      const none = await as(bob.token).delete('/personal_access_tokens/987654');
      expect([none.status, none.body]).toEqual([404, { message: '404 Not found' }]);
    });

    it("lets an administrator revoke anyone's token, impersonation ones too", async () => {
      const dave = await createUser(t);
      const impersonation = (await as(dave.token).get('/personal_access_tokens/self')).body.id as number;
      expect((await root().delete(`/personal_access_tokens/${impersonation}`)).status).toBe(204);
      expect((await whoAmI(dave.token)).status).toBe(401);
    });

    it('revokes the calling token on /self, whatever its scopes', async () => {
      const reader = await personal(alice.id, { scopes: ['read_user'] });
      expect((await as(reader.token).get('/personal_access_tokens/self')).status).toBe(200);
      expect((await as(reader.token).delete('/personal_access_tokens/self')).status).toBe(204);
      expect((await as(reader.token).get('/personal_access_tokens/self')).status).toBe(401);
    });
  });

  describe('POST /personal_access_tokens/:id/rotate and /self/rotate', () => {
    it('revokes the old token and answers a new one: 200, same name and scopes, a week of life', async () => {
      const old = await personal(alice.id, { name: 'rotating', scopes: ['api', 'read_user'] });
      expect((await whoAmI(old.token)).status).toBe(200);
      const res = await as(alice.token).post(`/personal_access_tokens/${old.id}/rotate`);
      expect(res.status).toBe(200);
      expectShape(res.body, 'personal-access-token-created');
      expect(res.body).toMatchObject({
        name: 'rotating',
        scopes: ['api', 'read_user'],
        user_id: alice.id,
        revoked: false,
        active: true,
        expires_at: day(7),
      });
      expect(res.body.id).toBeGreaterThan(old.id);
      expect(res.body.token).not.toBe(old.token);
      expect((await whoAmI(old.token)).status).toBe(401);
      expect((await whoAmI(res.body.token)).status).toBe(200);
      expect((await root().get(`/personal_access_tokens/${old.id}`)).body).toMatchObject({
        revoked: true,
        active: false,
      });
      const again = await as(alice.token).post(`/personal_access_tokens/${old.id}/rotate`);
      expect([again.status, again.body]).toEqual([400, { message: '400 Bad request - Token already revoked' }]);
    });

    it('takes expires_at, and refuses a bad one', async () => {
      const old = await personal(alice.id);
      const bad = await root().post(`/personal_access_tokens/${old.id}/rotate`, { expires_at: 'soon' });
      expect([bad.status, bad.body]).toEqual([400, { error: 'expires_at is invalid' }]);
      const res = await root().post(`/personal_access_tokens/${old.id}/rotate`, { expires_at: day(60) });
      expect([res.status, res.body.expires_at]).toEqual([200, day(60)]);
    });

    it('tells only administrators that an id is unknown: 401 for others', async () => {
      const alices = await personal(alice.id);
      const other = await as(bob.token).post(`/personal_access_tokens/${alices.id}/rotate`);
      expect([other.status, other.body]).toEqual([401, { message: '401 Unauthorized' }]);
      expect((await whoAmI(alices.token)).status).toBe(200);
      expect((await root().post('/personal_access_tokens/987654/rotate')).status).toBe(404);
    });

    it('rotates the calling token on /self/rotate with the api scope; other scopes are 403', async () => {
      const old = await personal(alice.id, { name: 'self' });
      const res = await as(old.token).post('/personal_access_tokens/self/rotate');
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ name: 'self', user_id: alice.id, expires_at: day(7) });
      expect((await whoAmI(old.token)).status).toBe(401);
      // The old token is refused: it cannot rotate again.
      expect((await as(old.token).post('/personal_access_tokens/self/rotate')).status).toBe(401);
      const reader = await personal(alice.id, { scopes: ['read_user'] });
      expect((await as(reader.token).post('/personal_access_tokens/self/rotate')).status).toBe(403);
      expect((await as(reader.token).get('/personal_access_tokens/self')).body.revoked).toBe(false);
    });
  });

  describe('a second Lode on the same database', () => {
    // No shared memory with the first, and the same minute-long token cache.
    const other = secondAppFor(() => t);
    const otherHttp = other.http;

    it('refuses a token revoked or rotated away through the first on its very next request', async () => {
      for (let round = 0; round < 5; round += 1) {
        const revoked = await personal(alice.id);
        const rotated = await personal(alice.id);
        expect((await whoAmI(revoked.token, otherHttp)).status).toBe(200);
        expect((await whoAmI(rotated.token, otherHttp)).status).toBe(200);
        expect((await root().delete(`/personal_access_tokens/${revoked.id}`)).status).toBe(204);
        expect((await whoAmI(revoked.token, otherHttp)).status).toBe(401);
        const next = await root().post(`/personal_access_tokens/${rotated.id}/rotate`);
        expect(next.status).toBe(200);
        expect((await whoAmI(rotated.token, otherHttp)).status).toBe(401);
        expect((await whoAmI(next.body.token, otherHttp)).status).toBe(200);
      }
    });
  });

  describe('python-gitlab 3.12', () => {
    const SCRIPT = `
import json, sys, warnings
import gitlab
warnings.simplefilter("ignore")
url, root_token, user_id, own_token = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
gl = gitlab.Gitlab(url, private_token=root_token)
user = gl.users.get(user_id)
made = user.personal_access_tokens.create({"name": "py", "scopes": ["api", "read_user"], "expires_at": sys.argv[5]})
out = {"made": {"id": made.id, "name": made.name, "scopes": made.scopes, "expires_at": made.expires_at, "has_token": bool(made.token)}}
mine = gitlab.Gitlab(url, private_token=made.token)
mine.auth()
out["me"] = mine.user.id
out["listed"] = [t.id for t in gl.personal_access_tokens.list(user_id=user_id, get_all=True)]
out["own_list"] = [t.id for t in gitlab.Gitlab(url, private_token=own_token).personal_access_tokens.list()]
gl.personal_access_tokens.delete(made.id)
try:
    mine.auth()
    out["after_delete"] = None
except gitlab.exceptions.GitlabAuthenticationError as e:
    out["after_delete"] = e.response_code
second = user.personal_access_tokens.create({"name": "py2", "scopes": "api"})
listed = [t for t in gl.personal_access_tokens.list(user_id=user_id, get_all=True) if t.id == second.id][0]
listed.delete()
out["second_revoked"] = [t.revoked for t in gl.personal_access_tokens.list(user_id=user_id, get_all=True) if t.id == second.id]
try:
    gitlab.Gitlab(url, private_token=own_token).users.get(user_id).personal_access_tokens.create({"name": "x", "scopes": ["api"]})
    out["non_admin"] = None
except gitlab.exceptions.GitlabCreateError as e:
    out["non_admin"] = e.response_code
print(json.dumps(out))
`;

    it('creates, lists and deletes through its own managers', async () => {
      const erin = await createUser(t);
      const out = JSON.parse(await runPython(SCRIPT, [host, t.rootToken, String(erin.id), erin.token, day(10)]));
      expect(out.made).toEqual({
        id: expect.any(Number),
        name: 'py',
        scopes: ['api', 'read_user'],
        expires_at: day(10),
        has_token: true,
      });
      expect(out.me).toBe(erin.id);
      expect(out.listed).toContain(out.made.id);
      // The user's own list shows personal tokens only: the seeded impersonation token is not there.
      expect(out.own_list).toEqual([out.made.id]);
      expect(out.after_delete).toBe(401);
      expect(out.second_revoked).toEqual([true]);
      expect(out.non_admin).toBe(403);
    });
  });

  describe('gitbeaker PersonalAccessTokens', () => {
    let gb: typeof import('@gitbeaker/rest', { with: { 'resolution-mode': 'import' } });
    let admin: InstanceType<typeof Gitlab<false>>;
    /** The status of the `GitbeakerRequestError` a call fails with. */
    async function refusal(call: Promise<unknown>): Promise<number | undefined> {
      try {
        await call;
      } catch (err) {
        if (!(err instanceof gb.GitbeakerRequestError)) throw err;
        return err.cause?.response.status;
      }
      throw new Error('the call succeeded');
    }
    beforeAll(async () => {
      gb = await import('@gitbeaker/rest');
      admin = new gb.Gitlab({ host, token: t.rootToken });
    });

    it('creates, shows, lists, rotates and removes', async () => {
      const frank = await createUser(t);
      const made = await admin.PersonalAccessTokens.create(frank.id, 'gb', ['api'], { expiresAt: day(20) });
      expect(made).toMatchObject({ name: 'gb', scopes: ['api'], user_id: frank.id, expires_at: day(20) });
      const mine = new gb.Gitlab({ host, token: made.token as string });
      expect(await mine.PersonalAccessTokens.show()).toMatchObject({ id: made.id, name: 'gb' });
      expect(await admin.PersonalAccessTokens.show({ tokenId: made.id })).toMatchObject({ id: made.id });
      const listed = await admin.PersonalAccessTokens.all({ userId: frank.id, state: 'active' });
      expect(listed.map((x) => x.id)).toContain(made.id);
      const rotated = await admin.PersonalAccessTokens.rotate(made.id, { expiresAt: day(3) });
      expect(rotated).toMatchObject({ name: 'gb', expires_at: day(3), revoked: false });
      expect(rotated.id).not.toBe(made.id);
      expect(await refusal(mine.PersonalAccessTokens.show())).toBe(401);
      const next = new gb.Gitlab({ host, token: rotated.token as string });
      await next.PersonalAccessTokens.remove();
      expect(await refusal(next.PersonalAccessTokens.show())).toBe(401);
      expect(await admin.PersonalAccessTokens.show({ tokenId: rotated.id })).toMatchObject({ revoked: true });
    });
  });

  describe("terraform's gitlab_personal_access_token", () => {
    it('creates, reads twice with identical answers, and deletes as the provider does', async () => {
      // Create: the provider first checks that its token is an administrator's.
      const me = await root().get('/user');
      expect(me.body.is_admin).toBe(true);
      const created = await root().post(`/users/${bob.id}/personal_access_tokens`, {
        name: 'terraform',
        scopes: ['api'],
        expires_at: day(90),
      });
      expect(created.status).toBe(201);
      const id = created.body.id as number;
      // Read after create, and again on the next plan/apply: the same answer both times.
      const reads = [];
      for (let apply = 0; apply < 2; apply += 1) {
        const read = await root().get(`/personal_access_tokens/${id}`);
        expect(read.status).toBe(200);
        reads.push(read.body);
      }
      expect(reads[1]).toEqual(reads[0]);
      const { token: _secret, ...withoutSecret } = created.body;
      void _secret;
      expect(reads[0]).toEqual(withoutSecret);
      // What the provider parses: an RFC 3339 created_at, a YYYY-MM-DD expires_at.
      expect(Number.isNaN(Date.parse(reads[0].created_at))).toBe(false);
      expect(reads[0].expires_at).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      // Destroy: 204; the token stays readable, revoked, as in GitLab.
      expect((await root().delete(`/personal_access_tokens/${id}`)).status).toBe(204);
      const after = await root().get(`/personal_access_tokens/${id}`);
      expect(after.body).toMatchObject({ revoked: true, active: false });
    });
  });

  it('keeps only the digest: no secret in the read model or the events', async () => {
    const made = await personal(alice.id);
    const [stored] = await t.db.query(`select * from access_tokens where id = $1`, [made.id]);
    expect(JSON.stringify(stored)).not.toContain(made.token);
    const events = await t.db.query(`select data from events where stream_id = $1`, [`token-${made.id}`]);
    expect(JSON.stringify(events)).not.toContain(made.token);
    const rotated = (await root().post(`/personal_access_tokens/${made.id}/rotate`)).body;
    const successor = await t.db.query(`select data from events where stream_id = $1`, [`token-${rotated.id}`]);
    expect(successor[0].data.rotatedFrom).toBe(made.id);
    expect(JSON.stringify(successor)).not.toContain(rotated.token);
  });
  describe('the later scopes: read_api, read_repository, write_repository', () => {
    const dirs = tempDirs();
    afterAll(() => dirs.removeAll());
    const gitUrl = (path: string, token: string) =>
      `${host.replace('://', `://${alice.username}:${token}@`)}/${path}.git`;

    it('read_api reads every route and writes none (403 insufficient_scope)', async () => {
      const { token } = await personal(alice.id, { scopes: ['read_api'] });
      expect((await as(token).get('/projects')).status).toBe(200);
      expect((await as(token).get('/user')).status).toBe(200);
      const write = await as(token).post('/projects', { name: 'not-allowed' });
      expect(write.status).toBe(403);
      expect(write.body.error).toBe('insufficient_scope');
    });

    it('read_repository fetches over git, write_repository pushes, read_api and read_user do neither', async () => {
      const owner = await personal(alice.id, { scopes: ['api'] });
      const project = (await as(owner.token).post('/projects', { name: `scoped-${Date.now()}` })).body;
      const path = project.path_with_namespace as string;
      const writer = (await personal(alice.id, { scopes: ['write_repository'] })).token;
      const reader = (await personal(alice.id, { scopes: ['read_repository'] })).token;
      const apiReader = (await personal(alice.id, { scopes: ['read_api'] })).token;

      const work = dirs.make();
      await gitOk(['init', '-q', work]);
      await gitOk(['commit', '-q', '--allow-empty', '-m', 'first'], work);
      await gitOk(['push', '-q', gitUrl(path, writer), 'HEAD:master'], work);

      expect((await git(['ls-remote', gitUrl(path, reader)])).out).toContain('refs/heads/master');
      const refused = await git(['push', '-q', gitUrl(path, reader), 'HEAD:other'], work);
      expect(refused.status).not.toBe(0);
      expect(refused.out).toMatch(/Authentication failed|401|could not read/i);
      expect((await git(['ls-remote', gitUrl(path, apiReader)])).status).not.toBe(0);
      const branches = (await as(owner.token).get(`/projects/${project.id}/repository/branches`)).body;
      expect(branches.map((b: { name: string }) => b.name)).toEqual(['master']);
    });
  });
});
