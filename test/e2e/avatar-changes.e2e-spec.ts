import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createUser, type SeededUser } from '../support/seed';
import { eventually, startTestApp, type TestApp } from '../support/test-app';

/** A 1×1 PNG and a 1×1 GIF: two different valid avatars. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);
const GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
/** A text that a deferred trigger (installed below) refuses when the transaction commits. */
const FAIL_AT_COMMIT = 'refused at commit';

let seq = 0;
const unique = (prefix: string) => `${prefix}-${(seq += 1)}-${Date.now().toString(36)}`;

/**
 * Avatars after a fork, on removal, and when a command's commit fails (issue 11's leftovers): a fork
 * gets its source's avatar (GitLab's ForkService), a blank `avatar` removes one (GitLab 15.4+), and a
 * command that does not commit leaves no file behind and the old avatar in place.
 */
describe('avatar changes', () => {
  let t: TestApp;
  let alice: SeededUser;
  let bob: SeededUser;

  const api = (method: 'post' | 'put' | 'get', path: string, token: string) =>
    t.http()[method](`/api/v4${path}`).set('PRIVATE-TOKEN', token);
  const dir = (kind: 'user' | 'project', id: number) =>
    join(t.config.dataDir, 'uploads', '-', 'system', kind, 'avatar', String(id));
  const files = async (kind: 'user' | 'project', id: number) => (await readdir(dir(kind, id)).catch(() => [])).sort();
  const tmpEmpty = () => eventually(async () => (await readdir(join(t.config.dataDir, 'tmp'))).length === 0);
  const eventCount = async () => Number((await t.db.query('select count(*)::int as n from events'))[0].n);

  beforeAll(async () => {
    t = await startTestApp();
    alice = await createUser(t);
    bob = await createUser(t);
    // Fails the transaction at COMMIT, after every statement of the command succeeded: the one moment
    // the old code had already moved the file into place.
    for (const [table, column] of [
      ['projects', 'description'],
      ['users', 'bio'],
    ]) {
      await t.db.query(`
        create function lode_test_refuse_${table}() returns trigger language plpgsql as $$
        begin
          if new.${column} = '${FAIL_AT_COMMIT}' then raise exception 'refused by the test at commit'; end if;
          return new;
        end $$`);
      await t.db.query(
        `create constraint trigger refuse_commit after insert or update on ${table}
           deferrable initially deferred for each row execute function lode_test_refuse_${table}()`,
      );
    }
  });
  afterAll(() => t.close());

  describe('forks', () => {
    it('copy the source project’s avatar, as a file of their own', async () => {
      const source = await api('post', '/projects', alice.token)
        .field('name', unique('logo-source'))
        .field('visibility', 'public')
        .attach('avatar', PNG, { filename: 'logo.png' });
      expect(source.status).toBe(201);
      const fork = await api('post', `/projects/${source.body.id}/fork`, bob.token);
      expect(fork.status).toBe(201);
      const forkId = fork.body.id as number;
      expect(fork.body.avatar_url).toBe(`http://lode.test/uploads/-/system/project/avatar/${forkId}/logo.png`);
      expect(await readFile(join(dir('project', forkId), 'logo.png'))).toEqual(PNG);
      const served = await t.http().get(`/uploads/-/system/project/avatar/${forkId}/logo.png`);
      expect(served.status).toBe(200);

      // The source's later change is its own.
      const changed = await api('put', `/projects/${source.body.id}`, alice.token).attach('avatar', GIF, {
        filename: 'logo.png',
      });
      expect(changed.status).toBe(200);
      expect(await readFile(join(dir('project', forkId), 'logo.png'))).toEqual(PNG);
      expect(await readFile(join(dir('project', source.body.id as number), 'logo.png'))).toEqual(GIF);
    });

    it('of a project without an avatar have none', async () => {
      const source = await api('post', '/projects', alice.token).send({ name: unique('plain'), visibility: 'public' });
      const fork = await api('post', `/projects/${source.body.id}/fork`, bob.token);
      expect(fork.status).toBe(201);
      expect(fork.body.avatar_url).toBeNull();
      expect(existsSync(dir('project', fork.body.id as number))).toBe(false);
    });
  });

  describe('removal', () => {
    it.each([
      ['a blank multipart field', (r: ReturnType<typeof api>) => r.field('avatar', '')],
      ['a blank form field', (r: ReturnType<typeof api>) => r.type('form').send('avatar=')],
      ['a JSON null', (r: ReturnType<typeof api>) => r.send({ avatar: null })],
    ])('PUT /projects/:id with %s removes the project’s avatar', async (_, send) => {
      const created = await api('post', '/projects', alice.token)
        .field('name', unique('removed'))
        .attach('avatar', PNG, { filename: 'gone.png' });
      const id = created.body.id as number;
      const res = await send(api('put', `/projects/${id}`, alice.token));
      expect(res.status).toBe(200);
      expect(res.body.avatar_url).toBeNull();
      expect((await api('get', `/projects/${id}`, alice.token)).body.avatar_url).toBeNull();
      expect(await files('project', id)).toEqual([]);
      expect((await t.http().get(`/uploads/-/system/project/avatar/${id}/gone.png`)).status).toBe(404);
    });

    it('records nothing when the project has no avatar to remove', async () => {
      const created = await api('post', '/projects', alice.token).send({ name: unique('bare') });
      const before = await eventCount();
      const res = await api('put', `/projects/${created.body.id}`, alice.token).send({ avatar: '' });
      expect(res.status).toBe(200);
      expect(res.body.avatar_url).toBeNull();
      expect(await eventCount()).toBe(before);
    });

    it('leaves the avatar alone for an empty file part, as GitLab does', async () => {
      const created = await api('post', '/projects', alice.token)
        .field('name', unique('kept'))
        .attach('avatar', PNG, { filename: 'kept.png' });
      const res = await api('put', `/projects/${created.body.id}`, alice.token)
        .field('description', 'still has a logo')
        .attach('avatar', Buffer.alloc(0), { filename: 'empty.png' });
      expect(res.status).toBe(200);
      expect(res.body.avatar_url).toMatch(/\/kept\.png$/);
    });

    it('PUT /users/:id with a blank avatar removes the user’s avatar (Gravatar again)', async () => {
      const user = await createUser(t);
      const set = await api('put', `/users/${user.id}`, t.rootToken).attach('avatar', PNG, { filename: 'me.png' });
      expect(set.body.avatar_url).toBe(`http://lode.test/uploads/-/system/user/avatar/${user.id}/me.png`);
      const res = await api('put', `/users/${user.id}`, t.rootToken).field('avatar', '');
      expect(res.status).toBe(200);
      expect(res.body.avatar_url).toMatch(/^https:\/\/www\.gravatar\.com\/avatar\//);
      expect(await files('user', user.id)).toEqual([]);
      expect((await t.http().get(`/uploads/-/system/user/avatar/${user.id}/me.png`)).status).toBe(404);
    });
  });

  describe('a command whose commit fails', () => {
    it('leaves the project’s old avatar and no new file (PUT)', async () => {
      const created = await api('post', '/projects', alice.token)
        .field('name', unique('kept-on-failure'))
        .attach('avatar', PNG, { filename: 'old.png' });
      const id = created.body.id as number;
      const res = await api('put', `/projects/${id}`, alice.token)
        .field('description', FAIL_AT_COMMIT)
        .attach('avatar', GIF, { filename: 'new.gif' });
      expect(res.status).toBe(500);
      expect(await files('project', id)).toEqual(['old.png']);
      expect(await readFile(join(dir('project', id), 'old.png'))).toEqual(PNG);
      expect((await api('get', `/projects/${id}`, alice.token)).body.avatar_url).toMatch(/\/old\.png$/);
      await tmpEmpty();
    });

    it('leaves no file for a project that was not created (POST)', async () => {
      const all = join(t.config.dataDir, 'uploads', '-', 'system', 'project', 'avatar');
      const before = await readdir(all).catch(() => []);
      const res = await api('post', '/projects', alice.token)
        .field('name', unique('never'))
        .field('description', FAIL_AT_COMMIT)
        .attach('avatar', PNG, { filename: 'never.png' });
      expect(res.status).toBe(500);
      expect(await readdir(all).catch(() => [])).toEqual(before);
      await tmpEmpty();
    });

    it('leaves the user’s old avatar and no new file (PUT /users/:id)', async () => {
      const user = await createUser(t);
      await api('put', `/users/${user.id}`, t.rootToken).attach('avatar', PNG, { filename: 'old.png' });
      const res = await api('put', `/users/${user.id}`, t.rootToken)
        .field('bio', FAIL_AT_COMMIT)
        .attach('avatar', GIF, { filename: 'new.gif' });
      expect(res.status).toBe(500);
      expect(await files('user', user.id)).toEqual(['old.png']);
      expect(await readFile(join(dir('user', user.id), 'old.png'))).toEqual(PNG);
      await tmpEmpty();
    });
  });
});
