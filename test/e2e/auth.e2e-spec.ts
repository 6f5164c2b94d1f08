import { EventStore } from '@app/platform';
import { CreateAccessToken } from '@app/users';
import { CommandBus } from '@nestjs/cqrs';
import { createHash, generateKeyPairSync, randomUUID } from 'node:crypto';
import { expectShape } from '../contract/shape';
import { createToken, createUser, type SeededUser } from '../support/seed';
import { eventually, startTestApp, type TestApp } from '../support/test-app';

const api = (path: string) => `/api/v4${path}`;
const UNAUTHORIZED = { message: '401 Unauthorized' };
const FORBIDDEN = { message: '403 Forbidden' };
const INSUFFICIENT = (scope: string) => ({
  error: 'insufficient_scope',
  error_description: 'The request requires higher privileges than provided by the access token.',
  scope,
});

/** `YYYY-MM-DD` (UTC) `days` from today, as the server's clock sees it. */
function day(days = 0): string {
  const d = new Date();
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

/** A personal (non-impersonation) token, made the way the CLI makes one. */
async function personalToken(
  t: TestApp,
  userId: number,
  scopes: string[],
): Promise<{ tokenId: number; secret: string }> {
  return t.app
    .get(CommandBus)
    .execute(new CreateAccessToken({ userId, name: 'personal', scopes, impersonation: false, expiresAt: null }));
}

/** A fresh OpenSSH ed25519 public key line. */
function sshKey(comment = 'test'): string {
  const x = Buffer.from(generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }).x!, 'base64url');
  const str = (b: Buffer) => Buffer.concat([Buffer.from([0, 0, 0, b.length]), b]);
  return `ssh-ed25519 ${Buffer.concat([str(Buffer.from('ssh-ed25519')), str(x)]).toString('base64')} ${comment}`;
}

async function lastPosition(t: TestApp): Promise<string> {
  const [{ p }] = await t.db.query(`select coalesce(max(global_position), 0)::text as p from events`);
  return p;
}

async function eventsAfter(
  t: TestApp,
  position: string,
): Promise<{ type: string; metadata: Record<string, unknown> }[]> {
  return t.db.query(`select type, metadata from events where global_position > $1 order by global_position`, [
    position,
  ]);
}

describe('authentication and authorisation', () => {
  let t: TestApp;
  let alice: SeededUser;
  beforeAll(async () => {
    t = await startTestApp();
    alice = await createUser(t);
  });
  afterAll(async () => {
    await t.close();
  });

  describe('token sources', () => {
    it('accepts the PRIVATE-TOKEN header', async () => {
      const res = await t.http().get(api('/user')).set('PRIVATE-TOKEN', alice.token);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: alice.id, username: alice.username });
    });

    it('accepts the private_token query parameter', async () => {
      const res = await t.http().get(api('/user')).query({ private_token: alice.token });
      expect(res.status).toBe(200);
      expect(res.body.id).toBe(alice.id);
    });

    it('accepts private_token as a body field of a write', async () => {
      const res = await t
        .http()
        .post(api('/user/emails'))
        .send({ private_token: alice.token, email: `body-${alice.username}@example.com` });
      expect(res.status).toBe(201);
      expect((await t.http().get(api('/user/emails')).set('PRIVATE-TOKEN', alice.token)).body).toContainEqual(res.body);
    });

    // Lode departs from GitLab 10.x here on purpose: Bearer takes personal and impersonation tokens too.
    it('accepts an impersonation token as Authorization: Bearer', async () => {
      const res = await t.http().get(api('/user')).set('Authorization', `Bearer ${alice.token}`);
      expect(res.status).toBe(200);
      expect(res.body.id).toBe(alice.id);
    });

    it('accepts a personal token as Authorization: Bearer', async () => {
      const { secret } = await personalToken(t, alice.id, ['api']);
      const res = await t.http().get(api('/user')).set('Authorization', `Bearer ${secret}`);
      expect(res.status).toBe(200);
      expect(res.body.id).toBe(alice.id);
    });
  });

  describe('unknown, revoked and expired tokens', () => {
    it('answers 401 to an unknown token, however it is sent', async () => {
      for (const req of [
        t.http().get(api('/user')).set('PRIVATE-TOKEN', 'not-a-token'),
        t.http().get(api('/user')).query({ private_token: 'not-a-token' }),
        t.http().get(api('/user')).set('Authorization', 'Bearer not-a-token'),
      ]) {
        const res = await req;
        expect(res.status).toBe(401);
        expect(res.body).toEqual(UNAUTHORIZED);
      }
    });

    it('answers 401 to an unknown token even where anonymous callers are allowed', async () => {
      expect((await t.http().get(api('/users/1'))).status).toBe(200);
      const res = await t.http().get(api('/users/1')).set('PRIVATE-TOKEN', 'not-a-token');
      expect(res.status).toBe(401);
      expect(res.body).toEqual(UNAUTHORIZED);
      expect(res.headers['content-type']).toBe('application/json');
    });

    it('stops accepting a revoked impersonation token at once', async () => {
      const bob = await createUser(t);
      const [{ id }] = await t.db.query(`select id from access_tokens where user_id = $1`, [bob.id]);
      expect((await t.http().get(api('/user')).set('PRIVATE-TOKEN', bob.token)).status).toBe(200);
      const del = await t
        .http()
        .delete(api(`/users/${bob.id}/impersonation_tokens/${id}`))
        .set('PRIVATE-TOKEN', t.rootToken);
      expect(del.status).toBe(204);
      const res = await t.http().get(api('/user')).set('PRIVATE-TOKEN', bob.token);
      expect(res.status).toBe(401);
      expect((await t.http().get(api('/users/1')).set('PRIVATE-TOKEN', bob.token)).status).toBe(401);
    });

    it('refuses an expired token, and lists it as inactive', async () => {
      const res = await t
        .http()
        .post(api(`/users/${alice.id}/impersonation_tokens`))
        .set('PRIVATE-TOKEN', t.rootToken)
        .send({ name: 'old', scopes: ['api'], expires_at: day(-1) });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ active: false, revoked: false, expires_at: day(-1) });
      expect((await t.http().get(api('/user')).set('PRIVATE-TOKEN', res.body.token)).status).toBe(401);
      const get = await t
        .http()
        .get(api(`/users/${alice.id}/impersonation_tokens/${res.body.id}`))
        .set('PRIVATE-TOKEN', t.rootToken);
      expect(get.body).toMatchObject({ active: false, revoked: false });
    });

    it('accepts a token that expires in the future', async () => {
      const token = await createToken(t, alice.id, ['api'], day(1));
      expect((await t.http().get(api('/user')).set('PRIVATE-TOKEN', token)).status).toBe(200);
    });
  });

  describe('with a token cache (tokenCacheMs 1000)', () => {
    let cached: TestApp;
    beforeAll(async () => {
      cached = await startTestApp({ tokenCacheMs: 1000 });
    });
    afterAll(async () => {
      await cached.close();
    });

    it('stops accepting a revoked token within about a second', async () => {
      const carol = await createUser(cached);
      const [{ id }] = await cached.db.query(`select id from access_tokens where user_id = $1`, [carol.id]);
      expect((await cached.http().get(api('/user')).set('PRIVATE-TOKEN', carol.token)).status).toBe(200);
      const del = await cached
        .http()
        .delete(api(`/users/${carol.id}/impersonation_tokens/${id}`))
        .set('PRIVATE-TOKEN', cached.rootToken);
      expect(del.status).toBe(204);
      await eventually(
        async () => (await cached.http().get(api('/user')).set('PRIVATE-TOKEN', carol.token)).status === 401,
        3000,
      );
    });

    it('stops serving a blocked user within about a second', async () => {
      const dave = await createUser(cached);
      expect((await cached.http().get(api('/user')).set('PRIVATE-TOKEN', dave.token)).status).toBe(200);
      expect(
        (
          await cached
            .http()
            .post(api(`/users/${dave.id}/block`))
            .set('PRIVATE-TOKEN', cached.rootToken)
        ).status,
      ).toBe(201);
      await eventually(
        async () => (await cached.http().get(api('/user')).set('PRIVATE-TOKEN', dave.token)).status === 403,
        3000,
      );
    });
  });

  describe('blocked users', () => {
    it("refuses a blocked user's token with 403 User is blocked, until unblocked", async () => {
      const eve = await createUser(t);
      expect(
        (
          await t
            .http()
            .post(api(`/users/${eve.id}/block`))
            .set('PRIVATE-TOKEN', t.rootToken)
        ).status,
      ).toBe(201);
      for (const path of ['/user', '/users/1', '/version']) {
        const res = await t.http().get(api(path)).set('PRIVATE-TOKEN', eve.token);
        expect(res.status).toBe(403);
        expect(res.body).toEqual({ message: '403 Forbidden - User is blocked' });
      }
      expect(
        (
          await t
            .http()
            .post(api(`/users/${eve.id}/unblock`))
            .set('PRIVATE-TOKEN', t.rootToken)
        ).status,
      ).toBe(201);
      expect((await t.http().get(api('/user')).set('PRIVATE-TOKEN', eve.token)).status).toBe(200);
    });
  });

  describe('read_user scope', () => {
    let reader: SeededUser;
    beforeAll(async () => {
      reader = await createUser(t, {}, ['read_user']);
    });

    it.each(['/user', '/users', `/users/1`, '/user/keys', '/user/emails', '/user/gpg_keys'])(
      'allows GET %s',
      async (path) => {
        const res = await t.http().get(api(path)).set('PRIVATE-TOKEN', reader.token);
        expect(res.status).toBe(200);
      },
    );

    it('refuses writes to the users API with insufficient_scope', async () => {
      const post = await t
        .http()
        .post(api('/user/keys'))
        .set('PRIVATE-TOKEN', reader.token)
        .send({ title: 'x', key: 'ssh-ed25519 AAAA' });
      expect(post.status).toBe(403);
      expect(post.body).toEqual(INSUFFICIENT('api'));
      const del = await t.http().delete(api('/user/emails/1')).set('PRIVATE-TOKEN', reader.token);
      expect(del.status).toBe(403);
      expect(del.body.error).toBe('insufficient_scope');
    });

    it('refuses GET outside the users API', async () => {
      const res = await t.http().get(api('/version')).set('PRIVATE-TOKEN', reader.token);
      expect(res.status).toBe(403);
      expect(res.body).toEqual(INSUFFICIENT('api'));
    });

    // GitLab's Users API declares `allow_access_with_scope :read_user` for every GET it serves,
    // impersonation tokens and activities included.
    it("lets an administrator's read_user token read impersonation tokens and activities, not create them", async () => {
      const { secret } = await personalToken(t, 1, ['read_user']);
      expect(
        (
          await t
            .http()
            .get(api(`/users/${alice.id}/impersonation_tokens`))
            .set('PRIVATE-TOKEN', secret)
        ).status,
      ).toBe(200);
      expect((await t.http().get(api('/user/activities')).set('PRIVATE-TOKEN', secret)).status).toBe(200);
      const post = await t
        .http()
        .post(api(`/users/${alice.id}/impersonation_tokens`))
        .set('PRIVATE-TOKEN', secret)
        .send({ name: 'n', scopes: ['api'] });
      expect(post.status).toBe(403);
      expect(post.body).toEqual(INSUFFICIENT('api'));
    });
  });

  describe('sudo', () => {
    it('lets root act as a user given by id in the sudo parameter', async () => {
      const res = await t.http().get(api('/user')).query({ sudo: alice.id }).set('PRIVATE-TOKEN', t.rootToken);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: alice.id, username: alice.username });
      expectShape(res.body, 'user-public');
    });

    it('lets root act as a user given by username in the Sudo header', async () => {
      const res = await t.http().get(api('/user')).set('PRIVATE-TOKEN', t.rootToken).set('Sudo', alice.username);
      expect(res.status).toBe(200);
      expect(res.body.id).toBe(alice.id);
    });

    it('refuses sudo to a non-administrator', async () => {
      const res = await t.http().get(api('/user')).set('PRIVATE-TOKEN', alice.token).set('Sudo', '1');
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ message: '403 Forbidden - Must be admin to use sudo' });
    });

    it('refuses sudo to an anonymous caller', async () => {
      const res = await t.http().get(api('/user')).query({ sudo: alice.id });
      expect(res.status).toBe(401);
      expect(res.body).toEqual(UNAUTHORIZED);
    });

    it("refuses sudo with an administrator's token that lacks the sudo scope", async () => {
      const { secret } = await personalToken(t, 1, ['api']);
      expect((await t.http().get(api('/user')).set('PRIVATE-TOKEN', secret)).body.id).toBe(1);
      const res = await t.http().get(api('/user')).set('PRIVATE-TOKEN', secret).set('Sudo', alice.username);
      expect(res.status).toBe(403);
      expect(res.body).toEqual(INSUFFICIENT('sudo'));
    });

    // GitLab checks the route's scopes only when no sudo took place: with sudo, the sudo scope is enough.
    it("lets an administrator's sudo-only token act through sudo, and nothing else", async () => {
      const { secret } = await personalToken(t, 1, ['sudo']);
      const plain = await t.http().get(api('/user')).set('PRIVATE-TOKEN', secret);
      expect(plain.status).toBe(403);
      expect(plain.body).toEqual(INSUFFICIENT('api'));
      const res = await t.http().get(api('/user')).set('PRIVATE-TOKEN', secret).set('Sudo', String(alice.id));
      expect(res.status).toBe(200);
      expect(res.body.id).toBe(alice.id);
    });

    it('answers 404 for an unknown sudo user', async () => {
      const res = await t.http().get(api('/user')).set('PRIVATE-TOKEN', t.rootToken).set('Sudo', 'nobody');
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ message: "404 User with ID or username 'nobody' Not Found" });
      const byId = await t.http().get(api('/user')).query({ sudo: 987654 }).set('PRIVATE-TOKEN', t.rootToken);
      expect(byId.status).toBe(404);
      expect(byId.body).toEqual({ message: "404 User with ID or username '987654' Not Found" });
    });

    it('records the user and the administrator behind a change made under sudo, with the request id', async () => {
      const frank = await createUser(t);
      const requestId = `sudo-${randomUUID()}`;
      const before = await lastPosition(t);
      const res = await t
        .http()
        .post(api('/user/keys'))
        .set('PRIVATE-TOKEN', t.rootToken)
        .set('Sudo', frank.username)
        .set('X-Request-Id', requestId)
        .send({ title: 'sudo key', key: sshKey('sudo') });
      expect(res.status).toBe(201);
      expect(res.headers['x-request-id']).toBe(requestId);
      const events = await eventsAfter(t, before);
      expect(events.map((e) => e.type)).toContain('SshKeyAdded');
      for (const e of events) expect(e.metadata.requestId).toBe(requestId);
      const [added] = await t.db.query(`select metadata from events where type = 'SshKeyAdded' and stream_id = $1`, [
        `user-${frank.id}`,
      ]);
      expect(added.metadata).toMatchObject({ actorId: frank.id, sudoBy: 1, requestId });
      expect(added.metadata.impersonatedBy).toBeUndefined();

      const keys = await t.http().get(api('/user/keys')).set('PRIVATE-TOKEN', frank.token);
      expect(keys.body.map((k: { id: number }) => k.id)).toEqual([res.body.id]);
    });
  });

  describe('impersonation token use', () => {
    it('records the administrator who created the token', async () => {
      const grace = await createUser(t);
      const [{ id: tokenId }] = await t.db.query(`select id from access_tokens where user_id = $1`, [grace.id]);
      const res = await t
        .http()
        .post(api('/user/emails'))
        .set('PRIVATE-TOKEN', grace.token)
        .send({ email: `imp-${grace.username}@example.com` });
      expect(res.status).toBe(201);
      const [added] = await t.db.query(`select metadata from events where type = 'EmailAdded' and stream_id = $1`, [
        `user-${grace.id}`,
      ]);
      expect(added.metadata).toMatchObject({ actorId: grace.id, impersonatedBy: 1, tokenId });
      expect(added.metadata.sudoBy).toBeUndefined();
    });

    it('records no impersonator for a personal token', async () => {
      const { secret, tokenId } = await personalToken(t, alice.id, ['api']);
      const res = await t
        .http()
        .post(api('/user/emails'))
        .set('PRIVATE-TOKEN', secret)
        .send({ email: `personal-${alice.username}@example.com` });
      expect(res.status).toBe(201);
      const [added] = await t.db.query(
        `select metadata from events where type = 'EmailAdded' and data->>'emailId' = $1`,
        [String(res.body.id)],
      );
      expect(added.metadata).toMatchObject({ actorId: alice.id, tokenId });
      expect(added.metadata.impersonatedBy).toBeUndefined();
    });
  });

  describe('GET /version', () => {
    it('answers 401 to anonymous callers', async () => {
      const res = await t.http().get(api('/version'));
      expect(res.status).toBe(401);
      expect(res.body).toEqual(UNAUTHORIZED);
    });

    it('answers the version and revision to a signed-in caller', async () => {
      const res = await t.http().get(api('/version')).set('PRIVATE-TOKEN', alice.token);
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['revision', 'version']);
      expect(res.body.version).toMatch(/^10\.\d+\.\d+/);
      expect(typeof res.body.revision).toBe('string');
    });
  });

  describe('GET /user', () => {
    it('answers 401 to anonymous callers', async () => {
      const res = await t.http().get(api('/user'));
      expect(res.status).toBe(401);
      expect(res.body).toEqual(UNAUTHORIZED);
    });

    it('shows a user the public view of themselves, without is_admin', async () => {
      const res = await t.http().get(api('/user')).set('PRIVATE-TOKEN', alice.token);
      expect(res.status).toBe(200);
      expectShape(res.body, 'user-public');
      expect(res.body).toMatchObject({ id: alice.id, username: alice.username, email: alice.email });
      expect(res.body).not.toHaveProperty('is_admin');
    });

    it('shows an administrator the admin view', async () => {
      const res = await t.http().get(api('/user')).set('PRIVATE-TOKEN', t.rootToken);
      expect(res.status).toBe(200);
      expectShape(res.body, 'user-admin');
      expect(res.body).toMatchObject({ id: 1, is_admin: true });
    });
  });

  describe('user activity', () => {
    /** Appends an activity of an earlier day for a user, as the activity recorder would. */
    async function activeOn(userId: number, on: string): Promise<void> {
      await t.app
        .get(EventStore)
        .decide(
          `user-activity-${userId}-${on}`,
          { initial: () => null, evolve: (s: null) => s },
          () => [{ type: 'UserActivityRecorded', data: { userId, on, at: `${on}T12:00:00.000Z` } }],
          { origin: 'test' },
        );
    }

    it("sets last_activity_on on a user's first request of the day, once a day", async () => {
      const henry = await createUser(t);
      const seen = await t
        .http()
        .get(api(`/users/${henry.id}`))
        .set('PRIVATE-TOKEN', t.rootToken);
      expect(seen.body.last_activity_on).toBeNull();

      const burst = await Promise.all(
        [...Array(5)].map(() => t.http().get(api('/user/keys')).set('PRIVATE-TOKEN', henry.token)),
      );
      expect(burst.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
      for (let i = 0; i < 3; i++)
        expect((await t.http().get(api('/user/emails')).set('PRIVATE-TOKEN', henry.token)).status).toBe(200);

      const me = await t.http().get(api('/user')).set('PRIVATE-TOKEN', henry.token);
      expect(me.body.last_activity_on).toBe(day());
      const [{ n }] = await t.db.query(
        `select count(*)::int as n from events where type = 'UserActivityRecorded' and stream_id like $1`,
        [`user-activity-${henry.id}-%`],
      );
      expect(n).toBe(1);

      const list = await t
        .http()
        .get(api('/user/activities'))
        .query({ per_page: 100 })
        .set('PRIVATE-TOKEN', t.rootToken);
      expect(list.body).toContainEqual({ username: henry.username, last_activity_on: day(), last_activity_at: day() });
    });

    it('lists activities oldest first, from a given day, with pagination headers', async () => {
      const early = await createUser(t);
      const later = await createUser(t);
      await activeOn(early.id, day(-10));
      await activeOn(later.id, day(-5));

      const res = await t
        .http()
        .get(api('/user/activities'))
        .query({ per_page: 100 })
        .set('PRIVATE-TOKEN', t.rootToken);
      expect(res.status).toBe(200);
      for (const a of res.body) expectShape(a, 'user-activity');
      const dates = res.body.map((a: { last_activity_on: string }) => a.last_activity_on);
      expect(dates).toEqual([...dates].sort());
      const names = res.body.map((a: { username: string }) => a.username);
      expect(names.indexOf(early.username)).toBeLessThan(names.indexOf(later.username));
      expect(res.body[0]).toEqual({ username: early.username, last_activity_on: day(-10), last_activity_at: day(-10) });

      const since = await t
        .http()
        .get(api('/user/activities'))
        .query({ from: day(-7), per_page: 100 })
        .set('PRIVATE-TOKEN', t.rootToken);
      const sinceNames = since.body.map((a: { username: string }) => a.username);
      expect(sinceNames).toContain(later.username);
      expect(sinceNames).not.toContain(early.username);
      expect(since.body.every((a: { last_activity_on: string }) => a.last_activity_on >= day(-7))).toBe(true);

      const future = await t
        .http()
        .get(api('/user/activities'))
        .query({ from: day(30) })
        .set('PRIVATE-TOKEN', t.rootToken);
      expect(future.status).toBe(200);
      expect(future.body).toEqual([]);
      expect(future.headers['x-total']).toBe('0');

      const page = await t.http().get(api('/user/activities')).query({ per_page: 1 }).set('PRIVATE-TOKEN', t.rootToken);
      expect(page.body).toHaveLength(1);
      expect(page.body[0].username).toBe(early.username);
      expect(Number(page.headers['x-total'])).toBe(res.body.length);
      expect(page.headers['x-per-page']).toBe('1');
      expect(page.headers['x-page']).toBe('1');
      expect(page.headers['x-next-page']).toBe('2');
      expect(page.headers['x-prev-page']).toBe('');
      expect(page.headers['x-total-pages']).toBe(String(res.body.length));
      expect(page.headers.link).toContain('rel="next"');
    });

    it('refuses an invalid from', async () => {
      const res = await t
        .http()
        .get(api('/user/activities'))
        .query({ from: 'yesterday' })
        .set('PRIVATE-TOKEN', t.rootToken);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'from is invalid' });
    });

    it('is for administrators only', async () => {
      const anon = await t.http().get(api('/user/activities'));
      expect(anon.status).toBe(401);
      expect(anon.body).toEqual(UNAUTHORIZED);
      const user = await t.http().get(api('/user/activities')).set('PRIVATE-TOKEN', alice.token);
      expect(user.status).toBe(403);
      expect(user.body).toEqual(FORBIDDEN);
    });
  });

  describe('impersonation tokens', () => {
    const tokens = (userId: number) => api(`/users/${userId}/impersonation_tokens`);
    let ivan: SeededUser;
    beforeAll(async () => {
      ivan = await createUser(t);
    });

    async function counts(): Promise<{ tokens: number; events: number }> {
      const [{ tokens: n, events: e }] = await t.db.query(
        `select (select count(*)::int from access_tokens) as tokens, (select count(*)::int from events) as events`,
      );
      return { tokens: n, events: e };
    }

    it('is for administrators only', async () => {
      const [{ id }] = await t.db.query(`select id from access_tokens where user_id = $1`, [ivan.id]);
      for (const req of [
        () => t.http().get(tokens(ivan.id)),
        () => t.http().get(`${tokens(ivan.id)}/${id}`),
        () =>
          t
            .http()
            .post(tokens(ivan.id))
            .send({ name: 'x', scopes: ['api'] }),
        () => t.http().delete(`${tokens(ivan.id)}/${id}`),
      ]) {
        const anon = await req();
        expect(anon.status).toBe(401);
        expect(anon.body).toEqual(UNAUTHORIZED);
        const user = await req().set('PRIVATE-TOKEN', alice.token);
        expect(user.status).toBe(403);
        expect(user.body).toEqual(FORBIDDEN);
        const self = await req().set('PRIVATE-TOKEN', ivan.token);
        expect(self.status).toBe(403);
        expect(self.body).toEqual(FORBIDDEN);
      }
    });

    it('creates a token, shows its secret once, and the token works', async () => {
      const res = await t
        .http()
        .post(tokens(ivan.id))
        .set('PRIVATE-TOKEN', t.rootToken)
        .send({ name: 'ci', scopes: ['api', 'read_user'] });
      expect(res.status).toBe(201);
      expectShape(res.body, 'impersonation-token-created');
      expect(res.body).toMatchObject({
        name: 'ci',
        scopes: ['api', 'read_user'],
        user_id: ivan.id,
        impersonation: true,
        active: true,
        revoked: false,
        expires_at: null,
      });
      expect(res.body.token).toMatch(/^\S{20,}$/);
      expect(new Date(res.body.created_at).toISOString()).toBe(res.body.created_at);

      const me = await t.http().get(api('/user')).set('PRIVATE-TOKEN', res.body.token);
      expect(me.status).toBe(200);
      expect(me.body.id).toBe(ivan.id);

      const one = await t
        .http()
        .get(`${tokens(ivan.id)}/${res.body.id}`)
        .set('PRIVATE-TOKEN', t.rootToken);
      expect(one.status).toBe(200);
      expectShape(one.body, 'impersonation-token');
      const { token: _secret, ...rest } = res.body;
      expect(one.body).toEqual(rest);
    });

    it('takes an expiry date and form-encoded scopes', async () => {
      const res = await t
        .http()
        .post(tokens(ivan.id))
        .set('PRIVATE-TOKEN', t.rootToken)
        .type('form')
        .send(`name=dated&expires_at=2099-12-31&scopes[]=read_user`);
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ name: 'dated', expires_at: '2099-12-31', scopes: ['read_user'], active: true });
    });

    it('lists tokens without their secrets, filtered by state', async () => {
      const user = await createUser(t);
      const [{ id: seeded }] = await t.db.query(`select id from access_tokens where user_id = $1`, [user.id]);
      const make = async (body: object) =>
        (
          await t
            .http()
            .post(tokens(user.id))
            .set('PRIVATE-TOKEN', t.rootToken)
            .send({ scopes: ['api'], ...body })
        ).body.id as number;
      const active = await make({ name: 'active' });
      const expired = await make({ name: 'expired', expires_at: day(-3) });
      const revoked = await make({ name: 'revoked' });
      expect(
        (
          await t
            .http()
            .delete(`${tokens(user.id)}/${revoked}`)
            .set('PRIVATE-TOKEN', t.rootToken)
        ).status,
      ).toBe(204);
      // A personal token of the same user is not an impersonation token: never listed.
      await personalToken(t, user.id, ['api']);

      const ids = async (state?: string) => {
        const res = await t
          .http()
          .get(tokens(user.id))
          .query(state ? { state } : {})
          .set('PRIVATE-TOKEN', t.rootToken);
        expect(res.status).toBe(200);
        for (const tok of res.body) {
          expectShape(tok, 'impersonation-token');
          expect(tok).not.toHaveProperty('token');
        }
        return res.body.map((x: { id: number }) => x.id);
      };
      expect(await ids()).toEqual([seeded, active, expired, revoked]);
      expect(await ids('all')).toEqual([seeded, active, expired, revoked]);
      expect(await ids('active')).toEqual([seeded, active]);
      expect(await ids('inactive')).toEqual([expired, revoked]);

      const page = await t
        .http()
        .get(tokens(user.id))
        .query({ per_page: 2, page: 2 })
        .set('PRIVATE-TOKEN', t.rootToken);
      expect(page.body.map((x: { id: number }) => x.id)).toEqual([expired, revoked]);
      expect(page.headers['x-total']).toBe('4');
      expect(page.headers['x-total-pages']).toBe('2');
      expect(page.headers['x-page']).toBe('2');
      expect(page.headers['x-prev-page']).toBe('1');
      expect(page.headers['x-next-page']).toBe('');
    });

    it('refuses an unknown state', async () => {
      const res = await t.http().get(tokens(ivan.id)).query({ state: 'bogus' }).set('PRIVATE-TOKEN', t.rootToken);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'state does not have a valid value' });
    });

    it('validates the create parameters and stores nothing when they fail', async () => {
      const before = await counts();
      const post = (body: object) => t.http().post(tokens(ivan.id)).set('PRIVATE-TOKEN', t.rootToken).send(body);

      let res = await post({ scopes: ['api'] });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'name is missing' });

      // GitLab's API documentation marks scopes required, so a missing one is a parameter error.
      res = await post({ name: 'x' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'scopes is missing' });

      res = await post({ name: 'x', scopes: [] });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ message: { scopes: ["can't be blank"] } });

      for (const scopes of [['sudo'], ['foo'], ['api', 'sudo']]) {
        res = await post({ name: 'x', scopes });
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ message: { scopes: ['can only contain available scopes'] } });
      }

      res = await post({ name: '', scopes: ['api'] });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ message: { name: ["can't be blank"] } });

      for (const expires_at of ['tomorrow', '2024-02-30', '31-12-2099']) {
        res = await post({ name: 'x', scopes: ['api'], expires_at });
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ error: 'expires_at is invalid' });
      }

      res = await t
        .http()
        .post(tokens(987654))
        .set('PRIVATE-TOKEN', t.rootToken)
        .send({ name: 'x', scopes: ['api'] });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ message: '404 User Not Found' });

      expect(await counts()).toEqual(before);
    });

    it('answers 404 for unknown users and tokens', async () => {
      const [{ id: ivanToken }] = await t.db.query(
        `select id from access_tokens where user_id = $1 order by id limit 1`,
        [ivan.id],
      );
      const [{ id: rootPersonal }] = await t.db.query(
        `select id from access_tokens where user_id = 1 and not impersonation order by id limit 1`,
      );
      const userNotFound = { message: '404 User Not Found' };
      const tokenNotFound = { message: '404 Impersonation Token Not Found' };

      for (const res of [
        await t.http().get(tokens(987654)).set('PRIVATE-TOKEN', t.rootToken),
        await t
          .http()
          .get(`${tokens(987654)}/${ivanToken}`)
          .set('PRIVATE-TOKEN', t.rootToken),
        await t
          .http()
          .delete(`${tokens(987654)}/${ivanToken}`)
          .set('PRIVATE-TOKEN', t.rootToken),
      ]) {
        expect(res.status).toBe(404);
        expect(res.body).toEqual(userNotFound);
      }
      // 99999999999 is past Postgres' int: no such row, never a 500.
      for (const [userId, tokenId] of [
        [ivan.id, 987654],
        [ivan.id, 99999999999],
        [alice.id, ivanToken],
        [1, rootPersonal],
      ]) {
        for (const res of [
          await t
            .http()
            .get(`${tokens(userId)}/${tokenId}`)
            .set('PRIVATE-TOKEN', t.rootToken),
          await t
            .http()
            .delete(`${tokens(userId)}/${tokenId}`)
            .set('PRIVATE-TOKEN', t.rootToken),
        ]) {
          expect(res.status).toBe(404);
          expect(res.body).toEqual(tokenNotFound);
        }
      }
      // The root token survived the attempt to revoke it through another route.
      expect((await t.http().get(api('/user')).set('PRIVATE-TOKEN', t.rootToken)).status).toBe(200);

      const bad = await t
        .http()
        .get(`${tokens(ivan.id)}/abc`)
        .set('PRIVATE-TOKEN', t.rootToken);
      expect(bad.status).toBe(400);
      expect(bad.body).toEqual({ error: 'impersonation_token_id is invalid' });
      expect(
        (await t.http().get(api('/users/abc/impersonation_tokens')).set('PRIVATE-TOKEN', t.rootToken)).status,
      ).toBe(404);
    });

    it('revokes a token: 204, then revoked and inactive, and refused', async () => {
      const created = await t
        .http()
        .post(tokens(ivan.id))
        .set('PRIVATE-TOKEN', t.rootToken)
        .send({ name: 'short-lived', scopes: ['api'] });
      const url = `${tokens(ivan.id)}/${created.body.id}`;
      const del = await t.http().delete(url).set('PRIVATE-TOKEN', t.rootToken);
      expect(del.status).toBe(204);
      expect(del.text).toBe('');
      const get = await t.http().get(url).set('PRIVATE-TOKEN', t.rootToken);
      expect(get.status).toBe(200);
      expect(get.body).toMatchObject({ id: created.body.id, revoked: true, active: false });
      expect((await t.http().get(api('/user')).set('PRIVATE-TOKEN', created.body.token)).status).toBe(401);
      // Revoking again changes nothing and is not an error.
      expect((await t.http().delete(url).set('PRIVATE-TOKEN', t.rootToken)).status).toBe(204);
    });
  });

  describe('token storage', () => {
    it('keeps only SHA-256 digests of secrets, in the read model and in the event log', async () => {
      const res = await t
        .http()
        .post(api(`/users/${alice.id}/impersonation_tokens`))
        .set('PRIVATE-TOKEN', t.rootToken)
        .send({ name: 'secret', scopes: ['api'] });
      const { secret: personal } = await personalToken(t, alice.id, ['api']);
      const secrets = [t.rootToken, alice.token, res.body.token, personal];
      const rows: Record<string, unknown>[] = await t.db.query(`select * from access_tokens`);
      expect(rows.length).toBeGreaterThanOrEqual(4);
      const digests = new Set(rows.map((r) => r.digest));
      for (const s of secrets) {
        expect(digests).toContain(createHash('sha256').update(s).digest('hex'));
        for (const row of rows) for (const value of Object.values(row)) expect(String(value)).not.toContain(s);
        const [{ n }] = await t.db.query(
          `select count(*)::int as n from events where data::text like $1 or metadata::text like $1`,
          [`%${s}%`],
        );
        expect(n).toBe(0);
      }
    });
  });
});
