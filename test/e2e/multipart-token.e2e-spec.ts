import { watch, type FSWatcher } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createUser, type SeededUser } from '../support/seed';
import { eventually, startTestApp, type TestApp } from '../support/test-app';

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

let seq = 0;
const unique = (prefix: string) => `${prefix}${(seq += 1)}${Date.now().toString(36)}`;

/**
 * A token sent as the multipart field `private_token` on a route that takes files (AcceptsFiles)
 * authenticates as the header does, as in GitLab, while an anonymous or refused caller's file still
 * never reaches the disk.
 */
describe('private_token as a multipart field on file routes', () => {
  let t: TestApp;
  let alice: SeededUser;
  /** Names of the files created in the multipart temporary directory while a test runs. */
  let written: string[];
  let watcher: FSWatcher;

  const tmp = () => join(t.config.dataDir, 'tmp');
  /** File events come asynchronously: give a late one time to arrive. */
  const noFileWritten = async () => {
    await new Promise((r) => setTimeout(r, 150));
    expect(written).toEqual([]);
  };

  beforeAll(async () => {
    t = await startTestApp();
    alice = await createUser(t);
  });
  beforeEach(() => {
    written = [];
    watcher = watch(tmp(), (_, name) => {
      if (name) written.push(name);
    });
  });
  afterEach(() => watcher.close());
  afterAll(() => t.close());

  it('POST /users: the root token as a field before the avatar creates the user with it', async () => {
    const username = unique('field');
    const res = await t
      .http()
      .post('/api/v4/users')
      .field('private_token', t.rootToken)
      .field('email', `${username}@example.com`)
      .field('username', username)
      .field('name', 'Field Token')
      .field('password', 'secret-password')
      .attach('avatar', PNG, { filename: 'face.png' });
    expect(res.status).toBe(201);
    expect(res.body.avatar_url).toBe(`http://lode.test/uploads/-/system/user/avatar/${res.body.id}/face.png`);
    const dir = join(t.config.dataDir, 'uploads', '-', 'system', 'user', 'avatar', String(res.body.id));
    expect(await readFile(join(dir, 'face.png'))).toEqual(PNG);
    // The watcher sees a file that is written (so its silence in the refusals below means something).
    await eventually(() => written.length > 0);
  });

  it('PUT /projects/:id and POST /projects: the owner’s token as a field, with or without a file', async () => {
    const created = await t
      .http()
      .post('/api/v4/projects')
      .field('private_token', alice.token)
      .field('name', unique('fieldproject'));
    expect(created.status).toBe(201);
    expect(created.body.creator_id).toBe(alice.id);
    const res = await t
      .http()
      .put(`/api/v4/projects/${created.body.id}`)
      .field('private_token', alice.token)
      .field('description', 'by field')
      .attach('avatar', PNG, { filename: 'logo.png' });
    expect(res.status).toBe(200);
    expect(res.body.description).toBe('by field');
    expect(res.body.avatar_url).toMatch(/\/logo\.png$/);
  });

  it('refuses a wrong token field with 401, writing no file', async () => {
    const res = await t
      .http()
      .put('/api/v4/users/1')
      .field('private_token', 'not-a-token')
      .attach('avatar', PNG, { filename: 'face.png' });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ message: '401 Unauthorized' });
    await noFileWritten();
  });

  it('answers a non-administrator’s token field on an admin route with 403, writing no file', async () => {
    const res = await t
      .http()
      .put(`/api/v4/users/${alice.id}`)
      .field('private_token', alice.token)
      .attach('avatar', PNG, { filename: 'face.png' });
    expect(res.status).toBe(403);
    await noFileWritten();
  });

  it('treats a caller without any token as anonymous: 401, no file written', async () => {
    const res = await t
      .http()
      .post('/api/v4/projects')
      .field('name', unique('anon'))
      .attach('avatar', PNG, { filename: 'logo.png' });
    expect(res.status).toBe(401);
    await noFileWritten();
  });

  it('does not see a token sent after the file part: the file would be written before it (401)', async () => {
    const res = await t
      .http()
      .post('/api/v4/projects')
      .field('name', unique('late'))
      .attach('avatar', PNG, { filename: 'logo.png' })
      .field('private_token', alice.token);
    expect(res.status).toBe(401);
    await noFileWritten();
  });

  it('answers a token field with a control character with 400, before any lookup', async () => {
    const res = await t
      .http()
      .post('/api/v4/projects')
      .field('private_token', 'bad\u0001token')
      .attach('avatar', PNG, { filename: 'logo.png' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'private_token is invalid' });
    await noFileWritten();
  });

  it('still prefers the header, and still reads a field on routes without files', async () => {
    const header = await t
      .http()
      .post('/api/v4/projects')
      .set('PRIVATE-TOKEN', alice.token)
      .field('private_token', 'ignored-when-the-header-is-there')
      .attach('avatar', PNG, { filename: 'logo.png' })
      .field('name', unique('header'));
    expect(header.status).toBe(201);
    const group = await t
      .http()
      .post('/api/v4/groups')
      .field('private_token', t.rootToken)
      .field('name', 'g')
      .field('path', unique('g'));
    expect(group.status).toBe(201);
    await eventually(async () => (await readdir(tmp())).length === 0);
  });
});
