import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as openpgp from 'openpgp';
import { expectShape } from '../contract/shape';
import { createUser, type SeededUser } from '../support/seed';
import { startTestApp, type TestApp } from '../support/test-app';

const api = (path: string) => `/api/v4${path}`;
const UNAUTHORIZED = { message: '401 Unauthorized' };
const FORBIDDEN = { message: '403 Forbidden' };
const USER_NOT_FOUND = { message: '404 User Not Found' };
const TAKEN = ['has already been taken'];

let keyDir: string;
let keyCount = 0;

/** A real OpenSSH public key line from `ssh-keygen`. */
function sshKey(type: 'rsa' | 'ed25519' | 'ecdsa' = 'ed25519', comment = `key${keyCount + 1}@lode.test`): string {
  keyCount += 1;
  const file = join(keyDir, `id_${keyCount}`);
  const size = type === 'rsa' ? ['-b', '2048'] : type === 'ecdsa' ? ['-b', '256'] : [];
  execFileSync('ssh-keygen', ['-q', '-t', type, ...size, '-N', '', '-C', comment, '-f', file], { stdio: 'ignore' });
  return readFileSync(`${file}.pub`, 'utf8').trim();
}

/** A fresh armored OpenPGP key pair. */
async function gpgKey(email = 'a@example.com'): Promise<{ publicKey: string; privateKey: string }> {
  const { publicKey, privateKey } = await openpgp.generateKey({
    type: 'ecc',
    curve: 'curve25519Legacy',
    userIDs: [{ name: 'A', email }],
    format: 'armored',
  });
  return { publicKey, privateKey };
}

describe('credentials', () => {
  let t: TestApp;
  let alice: SeededUser;
  let bob: SeededUser;
  const as = (token: string) => ({
    get: (path: string) => t.http().get(api(path)).set('PRIVATE-TOKEN', token),
    post: (path: string, body: object = {}) => t.http().post(api(path)).set('PRIVATE-TOKEN', token).send(body),
    delete: (path: string) => t.http().delete(api(path)).set('PRIVATE-TOKEN', token),
  });
  const root = () => as(t.rootToken);

  async function count(table: string): Promise<number> {
    const [{ n }] = await t.db.query(`select count(*)::int as n from ${table}`);
    return n;
  }

  beforeAll(async () => {
    keyDir = mkdtempSync(join(tmpdir(), 'lode-keys-'));
    t = await startTestApp();
    alice = await createUser(t);
    bob = await createUser(t);
  });
  afterAll(async () => {
    await t.close();
    rmSync(keyDir, { recursive: true, force: true });
  });

  describe('SSH keys of the caller', () => {
    it.each(['rsa', 'ed25519', 'ecdsa'] as const)('adds a real %s key, stored trimmed', async (type) => {
      const key = sshKey(type);
      const res = await as(alice.token).post('/user/keys', { title: `my ${type}`, key: `\n  ${key}  \n` });
      expect(res.status).toBe(201);
      expectShape(res.body, 'ssh-key');
      expect(res.body).toMatchObject({ title: `my ${type}`, key });
      expect(new Date(res.body.created_at).toISOString()).toBe(res.body.created_at);
      expect((await as(alice.token).get(`/user/keys/${res.body.id}`)).body).toEqual(res.body);
    });

    // GitLab deletes line breaks from a key before it parses it.
    it('joins a key that was wrapped inside its base64', async () => {
      const key = sshKey('ed25519', 'wrapped');
      const [type, base64, comment] = key.split(' ');
      const wrapped = `${type} ${base64.slice(0, 30)}\r\n${base64.slice(30)} ${comment}\n`;
      const res = await as(alice.token).post('/user/keys', { title: 'wrapped', key: wrapped });
      expect(res.status).toBe(201);
      expect(res.body.key).toBe(key);
    });

    it('takes form-encoded parameters', async () => {
      const key = sshKey();
      const res = await t
        .http()
        .post(api('/user/keys'))
        .set('PRIVATE-TOKEN', alice.token)
        .type('form')
        .send({ title: 'form', key });
      expect(res.status).toBe(201);
      expect(res.body.key).toBe(key);
    });

    it('requires key and title', async () => {
      const before = await count('ssh_keys');
      for (const [body, error] of [
        [{ title: 'no key' }, 'key is missing'],
        [{ key: sshKey() }, 'title is missing'],
        [{}, 'key is missing, title is missing'],
      ] as const) {
        const res = await as(alice.token).post('/user/keys', body);
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ error });
      }
      const blank = await as(alice.token).post('/user/keys', { title: '  ', key: sshKey() });
      expect(blank.status).toBe(400);
      expect(blank.body).toEqual({ message: { title: ["can't be blank"] } });
      expect(await count('ssh_keys')).toBe(before);
    });

    it('refuses a key that is not a public key', async () => {
      const before = await count('ssh_keys');
      for (const key of ['garbage', 'not a key at all', '-----BEGIN OPENSSH PRIVATE KEY-----']) {
        const res = await as(alice.token).post('/user/keys', { title: 'bad', key });
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ message: { key: ['is invalid'], fingerprint: ['cannot be generated'] } });
      }
      expect(await count('ssh_keys')).toBe(before);
    });

    it('refuses a key already in use, by the same or another user, whatever its comment', async () => {
      const key = sshKey();
      expect((await as(alice.token).post('/user/keys', { title: 'first', key })).status).toBe(201);
      const before = await count('ssh_keys');
      const [type, base64] = key.split(' ');
      for (const [token, k] of [
        [alice.token, key],
        [bob.token, key],
        [bob.token, `${type} ${base64} other-comment`],
      ]) {
        const res = await as(token).post('/user/keys', { title: 'again', key: k });
        expect(res.status).toBe(400);
        expect(res.body.message.fingerprint).toEqual(TAKEN);
      }
      const admin = await root().post(`/users/${bob.id}/keys`, { title: 'again', key });
      expect(admin.status).toBe(400);
      expect(admin.body.message.fingerprint).toEqual(TAKEN);
      expect(await count('ssh_keys')).toBe(before);
    });

    it('lists the own keys only, paginated', async () => {
      const user = await createUser(t);
      const ids: number[] = [];
      for (let i = 0; i < 3; i++)
        ids.push((await as(user.token).post('/user/keys', { title: `k${i}`, key: sshKey() })).body.id);
      await as(bob.token).post('/user/keys', { title: 'other', key: sshKey() });

      const list = await as(user.token).get('/user/keys');
      expect(list.status).toBe(200);
      for (const k of list.body) expectShape(k, 'ssh-key');
      expect(list.body.map((k: { id: number }) => k.id)).toEqual(ids);
      expect(list.headers['x-total']).toBe('3');

      const page = await as(user.token).get('/user/keys?per_page=2&page=2');
      expect(page.body.map((k: { id: number }) => k.id)).toEqual([ids[2]]);
      expect(page.headers['x-total-pages']).toBe('2');
      expect(page.headers['x-prev-page']).toBe('1');
      expect(page.headers['x-next-page']).toBe('');
    });

    it("answers 404 for another user's key, and leaves it alone", async () => {
      const theirs = (await as(bob.token).post('/user/keys', { title: 'bobs', key: sshKey() })).body;
      for (const res of [
        await as(alice.token).get(`/user/keys/${theirs.id}`),
        await as(alice.token).delete(`/user/keys/${theirs.id}`),
      ]) {
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ message: '404 Key Not Found' });
      }
      expect((await as(bob.token).get(`/user/keys/${theirs.id}`)).body).toEqual(theirs);
      // 99999999999 is past Postgres' int: no such key, never a 500.
      for (const id of [987654, 99999999999]) {
        const res = await as(alice.token).get(`/user/keys/${id}`);
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ message: '404 Key Not Found' });
      }
    });

    it('refuses a key id that is not an integer', async () => {
      for (const res of [await as(alice.token).get('/user/keys/abc'), await as(alice.token).delete('/user/keys/1x')]) {
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ error: 'key_id is invalid' });
      }
    });

    it('deletes a key: 204, then 404, and the key can be added again', async () => {
      const key = sshKey();
      const created = (await as(alice.token).post('/user/keys', { title: 'temp', key })).body;
      const del = await as(alice.token).delete(`/user/keys/${created.id}`);
      expect(del.status).toBe(204);
      expect(del.text).toBe('');
      const again = await as(alice.token).delete(`/user/keys/${created.id}`);
      expect(again.status).toBe(404);
      expect(again.body).toEqual({ message: '404 Key Not Found' });
      expect((await as(alice.token).get(`/user/keys/${created.id}`)).status).toBe(404);
      expect((await as(bob.token).post('/user/keys', { title: 'reused', key })).status).toBe(201);
    });

    it('answers 401 to anonymous callers', async () => {
      for (const res of [
        await t.http().get(api('/user/keys')),
        await t.http().get(api('/user/keys/1')),
        await t.http().post(api('/user/keys')).send({ title: 'x', key: sshKey() }),
        await t.http().delete(api('/user/keys/1')),
      ]) {
        expect(res.status).toBe(401);
        expect(res.body).toEqual(UNAUTHORIZED);
      }
    });
  });

  describe('SSH keys of a user, for administrators', () => {
    it('lists, adds and deletes keys of a user', async () => {
      const user = await createUser(t);
      const created = await root().post(`/users/${user.id}/keys`, { title: 'by admin', key: ` ${sshKey('rsa')}\n` });
      expect(created.status).toBe(201);
      expectShape(created.body, 'ssh-key');
      expect(created.body.key).not.toMatch(/^\s|\s$/);

      const list = await root().get(`/users/${user.id}/keys`);
      expect(list.status).toBe(200);
      expect(list.body).toEqual([created.body]);
      expect(list.headers['x-total']).toBe('1');
      expect((await as(user.token).get('/user/keys')).body).toEqual([created.body]);

      const wrongUser = await root().delete(`/users/${bob.id}/keys/${created.body.id}`);
      expect(wrongUser.status).toBe(404);
      expect(wrongUser.body).toEqual({ message: '404 Key Not Found' });

      const del = await root().delete(`/users/${user.id}/keys/${created.body.id}`);
      expect(del.status).toBe(204);
      expect((await root().get(`/users/${user.id}/keys`)).body).toEqual([]);
      expect((await root().delete(`/users/${user.id}/keys/${created.body.id}`)).status).toBe(404);
    });

    it('validates like the own-key endpoint', async () => {
      const res = await root().post(`/users/${bob.id}/keys`, { key: sshKey() });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'title is missing' });
      const bad = await root().post(`/users/${bob.id}/keys`, { title: 'x', key: 'garbage' });
      expect(bad.status).toBe(400);
      expect(bad.body).toEqual({ message: { key: ['is invalid'], fingerprint: ['cannot be generated'] } });
      expect((await root().delete(`/users/${bob.id}/keys/abc`)).body).toEqual({ error: 'key_id is invalid' });
    });

    it('answers 404 for an unknown user', async () => {
      for (const res of [
        await root().get('/users/987654/keys'),
        await root().post('/users/987654/keys', { title: 'x', key: sshKey() }),
        await root().delete('/users/987654/keys/1'),
      ]) {
        expect(res.status).toBe(404);
        expect(res.body).toEqual(USER_NOT_FOUND);
      }
      expect((await root().get('/users/abc/keys')).status).toBe(404);
    });

    it('is refused to other users (403) and anonymous callers (401)', async () => {
      const key = sshKey();
      for (const [token, status, body] of [
        [alice.token, 403, FORBIDDEN],
        [undefined, 401, UNAUTHORIZED],
      ] as const) {
        for (const req of [
          () => t.http().get(api(`/users/${bob.id}/keys`)),
          () =>
            t
              .http()
              .post(api(`/users/${bob.id}/keys`))
              .send({ title: 'x', key }),
          () => t.http().delete(api(`/users/${bob.id}/keys/1`)),
        ]) {
          const r = req();
          const res = token ? await r.set('PRIVATE-TOKEN', token) : await r;
          expect(res.status).toBe(status);
          expect(res.body).toEqual(body);
        }
      }
      // A user acting on their own id through the admin route is refused as well.
      expect((await as(bob.token).get(`/users/${bob.id}/keys`)).status).toBe(403);
    });
  });

  describe('GPG keys', () => {
    it("adds a key, answering an array that holds it (GitLab's API documentation)", async () => {
      const { publicKey } = await gpgKey('alice@example.com');
      const res = await as(alice.token).post('/user/gpg_keys', { key: `\n${publicKey}\n\n` });
      expect(res.status).toBe(201);
      expect(Array.isArray(res.body)).toBe(true);
      expect(res.body).toHaveLength(1);
      expectShape(res.body[0], 'gpg-key');
      expect(res.body[0].key).toBe(publicKey.trim());

      const one = await as(alice.token).get(`/user/gpg_keys/${res.body[0].id}`);
      expect(one.status).toBe(200);
      expectShape(one.body, 'gpg-key');
      expect(one.body).toEqual(res.body[0]);
      const list = await as(alice.token).get('/user/gpg_keys');
      expect(list.body).toContainEqual(res.body[0]);
      expect(list.headers['x-total']).toBe(String(list.body.length));
    });

    it('requires key', async () => {
      const res = await as(alice.token).post('/user/gpg_keys', {});
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'key is missing' });
    });

    it('refuses what is not one armored public key, a private key included', async () => {
      const { publicKey, privateKey } = await gpgKey();
      const other = (await gpgKey()).publicKey;
      const before = await count('gpg_keys');
      for (const key of [
        'garbage',
        privateKey,
        publicKey.replace(/\n[A-Za-z0-9+/]{20}/, '\n'),
        `${publicKey}\n${other}`,
      ]) {
        const res = await as(alice.token).post('/user/gpg_keys', { key });
        expect(res.status).toBe(400);
        expect(Object.keys(res.body)).toEqual(['message']);
        expect(Object.keys(res.body.message)).toEqual(['key']);
        expect(res.body.message.key.length).toBeGreaterThan(0);
      }
      expect(await count('gpg_keys')).toBe(before);
    });

    // GitLab's GpgKey model: `key` is unique; the fingerprint is not checked once `key` has an error.
    it('refuses a key already added, by the same or another user', async () => {
      const { publicKey } = await gpgKey();
      expect((await as(alice.token).post('/user/gpg_keys', { key: publicKey })).status).toBe(201);
      const before = await count('gpg_keys');
      for (const res of [
        await as(alice.token).post('/user/gpg_keys', { key: publicKey }),
        await as(bob.token).post('/user/gpg_keys', { key: publicKey }),
        await root().post(`/users/${bob.id}/gpg_keys`, { key: publicKey }),
      ]) {
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ message: { key: TAKEN } });
      }
      expect(await count('gpg_keys')).toBe(before);
    });

    it("answers 404 for another user's key and refuses non-integer ids", async () => {
      const theirs = (await as(bob.token).post('/user/gpg_keys', { key: (await gpgKey()).publicKey })).body[0];
      for (const res of [
        await as(alice.token).get(`/user/gpg_keys/${theirs.id}`),
        await as(alice.token).delete(`/user/gpg_keys/${theirs.id}`),
      ]) {
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ message: '404 GPG Key Not Found' });
      }
      expect((await as(bob.token).get(`/user/gpg_keys/${theirs.id}`)).status).toBe(200);
      for (const res of [
        await as(alice.token).get('/user/gpg_keys/99999999999'),
        await root().get(`/users/${bob.id}/gpg_keys/99999999999`),
      ]) {
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ message: '404 GPG Key Not Found' });
      }
      for (const res of [
        await as(alice.token).get('/user/gpg_keys/abc'),
        await as(alice.token).delete('/user/gpg_keys/abc'),
      ]) {
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ error: 'key_id is invalid' });
      }
    });

    it('deletes a key: 204, then 404', async () => {
      const created = (await as(alice.token).post('/user/gpg_keys', { key: (await gpgKey()).publicKey })).body[0];
      const del = await as(alice.token).delete(`/user/gpg_keys/${created.id}`);
      expect(del.status).toBe(204);
      expect(del.text).toBe('');
      const again = await as(alice.token).delete(`/user/gpg_keys/${created.id}`);
      expect(again.status).toBe(404);
      expect(again.body).toEqual({ message: '404 GPG Key Not Found' });
      expect((await as(alice.token).get(`/user/gpg_keys/${created.id}`)).status).toBe(404);
    });

    it('answers 401 to anonymous callers', async () => {
      for (const res of [
        await t.http().get(api('/user/gpg_keys')),
        await t.http().post(api('/user/gpg_keys')).send({ key: 'x' }),
      ]) {
        expect(res.status).toBe(401);
        expect(res.body).toEqual(UNAUTHORIZED);
      }
    });

    it("lets administrators list, read, add and delete a user's keys", async () => {
      const user = await createUser(t);
      const created = await root().post(`/users/${user.id}/gpg_keys`, { key: (await gpgKey()).publicKey });
      expect(created.status).toBe(201);
      expect(created.body).toHaveLength(1);
      const key = created.body[0];
      expectShape(key, 'gpg-key');

      const list = await root().get(`/users/${user.id}/gpg_keys`);
      expect(list.status).toBe(200);
      expect(list.body).toEqual([key]);
      expect(list.headers['x-total']).toBe('1');
      const one = await root().get(`/users/${user.id}/gpg_keys/${key.id}`);
      expect(one.status).toBe(200);
      expect(one.body).toEqual(key);
      expect((await as(user.token).get('/user/gpg_keys')).body).toEqual([key]);

      for (const res of [
        await root().get(`/users/${bob.id}/gpg_keys/${key.id}`),
        await root().delete(`/users/${bob.id}/gpg_keys/${key.id}`),
      ]) {
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ message: '404 GPG Key Not Found' });
      }
      expect((await root().get(`/users/${user.id}/gpg_keys/abc`)).body).toEqual({ error: 'key_id is invalid' });

      expect((await root().delete(`/users/${user.id}/gpg_keys/${key.id}`)).status).toBe(204);
      expect((await root().get(`/users/${user.id}/gpg_keys`)).body).toEqual([]);
      expect((await root().delete(`/users/${user.id}/gpg_keys/${key.id}`)).status).toBe(404);
    });

    it('answers 404 for an unknown user, 403 to other users and 401 to anonymous callers', async () => {
      const { publicKey } = await gpgKey();
      for (const res of [
        await root().get('/users/987654/gpg_keys'),
        await root().get('/users/987654/gpg_keys/1'),
        await root().post('/users/987654/gpg_keys', { key: publicKey }),
        await root().delete('/users/987654/gpg_keys/1'),
      ]) {
        expect(res.status).toBe(404);
        expect(res.body).toEqual(USER_NOT_FOUND);
      }
      for (const [token, status, body] of [
        [alice.token, 403, FORBIDDEN],
        [undefined, 401, UNAUTHORIZED],
      ] as const) {
        for (const req of [
          () => t.http().get(api(`/users/${bob.id}/gpg_keys`)),
          () => t.http().get(api(`/users/${bob.id}/gpg_keys/1`)),
          () =>
            t
              .http()
              .post(api(`/users/${bob.id}/gpg_keys`))
              .send({ key: publicKey }),
          () => t.http().delete(api(`/users/${bob.id}/gpg_keys/1`)),
        ]) {
          const r = req();
          const res = token ? await r.set('PRIVATE-TOKEN', token) : await r;
          expect(res.status).toBe(status);
          expect(res.body).toEqual(body);
        }
      }
    });
  });

  describe('e-mails', () => {
    it('adds a secondary address, stored stripped and lower-cased as GitLab does', async () => {
      const res = await as(alice.token).post('/user/emails', { email: `  Work.${alice.username}@Example.COM ` });
      expect(res.status).toBe(201);
      expectShape(res.body, 'email');
      expect(res.body.email).toBe(`work.${alice.username}@example.com`);
      const one = await as(alice.token).get(`/user/emails/${res.body.id}`);
      expect(one.status).toBe(200);
      expectShape(one.body, 'email');
      expect(one.body).toEqual(res.body);
      const list = await as(alice.token).get('/user/emails');
      expect(list.body).toContainEqual(res.body);
      // The primary address is not a secondary one.
      expect(list.body.map((e: { email: string }) => e.email)).not.toContain(alice.email);
    });

    it('requires a valid email', async () => {
      const before = await count('emails');
      const missing = await as(alice.token).post('/user/emails', {});
      expect(missing.status).toBe(400);
      expect(missing.body).toEqual({ error: 'email is missing' });
      for (const email of ['not-an-email', 'two@@example.com', 'spaces in@example.com']) {
        const res = await as(alice.token).post('/user/emails', { email });
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ message: { email: ['is invalid'] } });
      }
      expect(await count('emails')).toBe(before);
    });

    it('refuses an address taken by anyone, primary or secondary, whatever its case', async () => {
      const carol = await createUser(t);
      const secondary = `second.${carol.username}@example.com`;
      expect((await as(carol.token).post('/user/emails', { email: secondary })).status).toBe(201);
      const before = await count('emails');
      for (const [token, email] of [
        [carol.token, carol.email.toUpperCase()], // own primary
        [carol.token, secondary.toUpperCase()], // own secondary
        [alice.token, carol.email], // another user's primary
        [alice.token, carol.email.toUpperCase()],
        [alice.token, secondary], // another user's secondary
        [alice.token, `Second.${carol.username}@EXAMPLE.com`],
      ]) {
        const res = await as(token).post('/user/emails', { email });
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ message: { email: TAKEN } });
      }
      const admin = await root().post(`/users/${alice.id}/emails`, { email: secondary });
      expect(admin.status).toBe(400);
      expect(admin.body).toEqual({ message: { email: TAKEN } });
      expect(await count('emails')).toBe(before);
    });

    it('frees a removed secondary address for others', async () => {
      const dave = await createUser(t);
      const address = `shared.${dave.username}@example.com`;
      const created = (await as(dave.token).post('/user/emails', { email: address })).body;
      expect((await as(alice.token).post('/user/emails', { email: address })).status).toBe(400);
      const del = await as(dave.token).delete(`/user/emails/${created.id}`);
      expect(del.status).toBe(204);
      expect(del.text).toBe('');
      const res = await as(alice.token).post('/user/emails', { email: address });
      expect(res.status).toBe(201);
      expect(res.body.email).toBe(address);
    });

    it("answers 404 for another user's address, and refuses non-integer ids", async () => {
      const theirs = (await as(bob.token).post('/user/emails', { email: `bobs.${bob.username}@example.com` })).body;
      for (const res of [
        await as(alice.token).get(`/user/emails/${theirs.id}`),
        await as(alice.token).delete(`/user/emails/${theirs.id}`),
      ]) {
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ message: '404 Email Not Found' });
      }
      expect((await as(bob.token).get(`/user/emails/${theirs.id}`)).body).toEqual(theirs);
      const huge = await as(alice.token).get('/user/emails/99999999999');
      expect(huge.status).toBe(404);
      expect(huge.body).toEqual({ message: '404 Email Not Found' });
      for (const res of [
        await as(alice.token).get('/user/emails/abc'),
        await as(alice.token).delete('/user/emails/abc'),
      ]) {
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ error: 'email_id is invalid' });
      }
    });

    it('deletes an address: 204, then 404', async () => {
      const created = (await as(alice.token).post('/user/emails', { email: `temp.${alice.username}@example.com` }))
        .body;
      expect((await as(alice.token).delete(`/user/emails/${created.id}`)).status).toBe(204);
      const again = await as(alice.token).delete(`/user/emails/${created.id}`);
      expect(again.status).toBe(404);
      expect(again.body).toEqual({ message: '404 Email Not Found' });
      expect((await as(alice.token).get(`/user/emails/${created.id}`)).status).toBe(404);
    });

    it('lists the own addresses only, paginated', async () => {
      const erin = await createUser(t);
      const ids: number[] = [];
      for (let i = 0; i < 3; i++)
        ids.push((await as(erin.token).post('/user/emails', { email: `e${i}.${erin.username}@example.com` })).body.id);
      const list = await as(erin.token).get('/user/emails');
      expect(list.body.map((e: { id: number }) => e.id)).toEqual(ids);
      for (const e of list.body) expectShape(e, 'email');
      const page = await as(erin.token).get('/user/emails?per_page=1');
      expect(page.body.map((e: { id: number }) => e.id)).toEqual([ids[0]]);
      expect(page.headers['x-total']).toBe('3');
      expect(page.headers['x-next-page']).toBe('2');
    });

    it('answers 401 to anonymous callers', async () => {
      for (const res of [
        await t.http().get(api('/user/emails')),
        await t.http().post(api('/user/emails')).send({ email: 'x@example.com' }),
      ]) {
        expect(res.status).toBe(401);
        expect(res.body).toEqual(UNAUTHORIZED);
      }
    });

    it("lets administrators list, add and delete a user's addresses", async () => {
      const user = await createUser(t);
      const created = await root().post(`/users/${user.id}/emails`, { email: `Admin.${user.username}@example.com` });
      expect(created.status).toBe(201);
      expectShape(created.body, 'email');
      expect(created.body.email).toBe(`admin.${user.username}@example.com`);

      const list = await root().get(`/users/${user.id}/emails`);
      expect(list.status).toBe(200);
      expect(list.body).toEqual([created.body]);
      expect(list.headers['x-total']).toBe('1');
      expect((await as(user.token).get('/user/emails')).body).toEqual([created.body]);

      const missing = await root().post(`/users/${user.id}/emails`, {});
      expect(missing.body).toEqual({ error: 'email is missing' });
      const invalid = await root().post(`/users/${user.id}/emails`, { email: 'nope' });
      expect(invalid.body).toEqual({ message: { email: ['is invalid'] } });

      const wrongUser = await root().delete(`/users/${bob.id}/emails/${created.body.id}`);
      expect(wrongUser.status).toBe(404);
      expect(wrongUser.body).toEqual({ message: '404 Email Not Found' });
      expect((await root().delete(`/users/${user.id}/emails/abc`)).body).toEqual({ error: 'email_id is invalid' });

      expect((await root().delete(`/users/${user.id}/emails/${created.body.id}`)).status).toBe(204);
      expect((await root().get(`/users/${user.id}/emails`)).body).toEqual([]);
      expect((await root().delete(`/users/${user.id}/emails/${created.body.id}`)).status).toBe(404);
    });

    it('answers 404 for an unknown user, 403 to other users and 401 to anonymous callers', async () => {
      for (const res of [
        await root().get('/users/987654/emails'),
        await root().post('/users/987654/emails', { email: 'ghost@example.com' }),
        await root().delete('/users/987654/emails/1'),
      ]) {
        expect(res.status).toBe(404);
        expect(res.body).toEqual(USER_NOT_FOUND);
      }
      for (const [token, status, body] of [
        [alice.token, 403, FORBIDDEN],
        [undefined, 401, UNAUTHORIZED],
      ] as const) {
        for (const req of [
          () => t.http().get(api(`/users/${bob.id}/emails`)),
          () =>
            t
              .http()
              .post(api(`/users/${bob.id}/emails`))
              .send({ email: 'someone@example.com' }),
          () => t.http().delete(api(`/users/${bob.id}/emails/1`)),
        ]) {
          const r = req();
          const res = token ? await r.set('PRIVATE-TOKEN', token) : await r;
          expect(res.status).toBe(status);
          expect(res.body).toEqual(body);
        }
      }
    });
  });
});
