import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Response } from 'supertest';
import { createUser, type SeededUser } from '../support/seed';
import { eventually, startTestApp, type TestApp } from '../support/test-app';
import { bytes } from '../support/bytes';

/** A 1×1 PNG, the smallest valid avatar. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);
/** A 1×1 GIF, for a replacement of another type. */
const GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

let seq = 0;
const unique = (prefix: string) => `${prefix}-${(seq += 1)}-${Date.now().toString(36)}`;

/**
 * Project avatars (the security issue: a multipart `avatar` on POST/PUT /projects was dropped):
 * stored and served as users' avatars are, `avatar_url` under LODE_EXTERNAL_URL.
 */
describe('project avatars', () => {
  let t: TestApp;
  let alice: SeededUser;
  let stranger: SeededUser;

  const post = (path: string, token: string) => t.http().post(`/api/v4${path}`).set('PRIVATE-TOKEN', token);
  const put = (path: string, token: string) => t.http().put(`/api/v4${path}`).set('PRIVATE-TOKEN', token);
  const get = (path: string, token: string) => t.http().get(`/api/v4${path}`).set('PRIVATE-TOKEN', token);
  const eventCount = async () => Number((await t.db.query('select count(*)::int as n from events'))[0].n);
  const avatarDir = (id: number) => join(t.config.dataDir, 'uploads', '-', 'system', 'project', 'avatar', String(id));
  const tmpEmpty = () => eventually(async () => (await readdir(join(t.config.dataDir, 'tmp'))).length === 0);

  /** GET of a served file, its body as bytes. */
  const fetchFile = (path: string, token?: string) => {
    const req = t.http().get(path);
    if (token) req.set('PRIVATE-TOKEN', token);
    return req.buffer(true).parse(bytes);
  };

  const createWithAvatar = async (
    fields: Record<string, string>,
    file: Buffer,
    filename: string,
    token = alice.token,
  ): Promise<Response> => {
    const req = post('/projects', token);
    for (const [k, v] of Object.entries(fields)) req.field(k, v);
    return req.attach('avatar', file, { filename });
  };

  beforeAll(async () => {
    t = await startTestApp();
    alice = await createUser(t);
    stranger = await createUser(t);
  });
  afterAll(() => t.close());

  it('stores the avatar sent with POST /projects and serves the bytes where avatar_url points', async () => {
    const name = unique('with-avatar');
    const res = await createWithAvatar({ name, visibility: 'public' }, PNG, 'logo.png');
    expect(res.status).toBe(201);
    expect(res.body.name).toBe(name);
    expect(res.body.avatar_url).toBe(`http://lode.test/uploads/-/system/project/avatar/${res.body.id}/logo.png`);

    const file = await fetchFile(new URL(res.body.avatar_url as string).pathname);
    expect(file.status).toBe(200);
    expect(file.headers['content-type']).toBe('image/png');
    expect(file.headers['x-content-type-options']).toBe('nosniff');
    expect(Buffer.compare(file.body as Buffer, PNG)).toBe(0);

    // Single reads, lists (simple too) and anonymous callers all see the same URL.
    expect((await get(`/projects/${res.body.id}`, alice.token)).body.avatar_url).toBe(res.body.avatar_url);
    const listed = await get('/projects', alice.token).query({ search: name, simple: 'true' });
    expect(listed.body.map((p: { avatar_url: string }) => p.avatar_url)).toEqual([res.body.avatar_url]);
    expect((await t.http().get(`/api/v4/projects/${res.body.id}`)).body.avatar_url).toBe(res.body.avatar_url);
    // What is not there is a 404.
    expect((await t.http().get(`/uploads/-/system/project/avatar/${res.body.id}/other.png`)).status).toBe(404);
    await tmpEmpty();
  });

  it('takes an avatar on POST /projects/user/:user_id', async () => {
    const req = post(`/projects/user/${alice.id}`, t.rootToken).field('name', unique('for-alice'));
    const res = await req.attach('avatar', PNG, { filename: 'theirs.png' });
    expect(res.status).toBe(201);
    expect(res.body.avatar_url).toBe(`http://lode.test/uploads/-/system/project/avatar/${res.body.id}/theirs.png`);
    expect(existsSync(join(avatarDir(res.body.id as number), 'theirs.png'))).toBe(true);
  });

  it('replaces the avatar with PUT /projects/:id, an avatar alone counting as a parameter', async () => {
    const created = await createWithAvatar({ name: unique('replaced') }, PNG, 'old.png');
    expect(created.status).toBe(201);
    const id = created.body.id as number;
    const res = await put(`/projects/${id}`, alice.token).attach('avatar', GIF, { filename: 'new.gif' });
    expect(res.status).toBe(200);
    expect(res.body.avatar_url).toBe(`http://lode.test/uploads/-/system/project/avatar/${id}/new.gif`);
    const file = await fetchFile(`/uploads/-/system/project/avatar/${id}/new.gif`, alice.token);
    expect(file.status).toBe(200);
    expect(file.headers['content-type']).toBe('image/gif');
    expect(Buffer.compare(file.body as Buffer, GIF)).toBe(0);
    // The old file is gone, and the project reads the new URL.
    expect(existsSync(join(avatarDir(id), 'old.png'))).toBe(false);
    expect((await get(`/projects/${id}`, alice.token)).body.avatar_url).toBe(res.body.avatar_url);

    // With other fields too.
    const both = await put(`/projects/${id}`, alice.token)
      .field('description', 'has a logo')
      .attach('avatar', PNG, { filename: 'third.png' });
    expect(both.status).toBe(200);
    expect(both.body.description).toBe('has a logo');
    expect(both.body.avatar_url).toBe(`http://lode.test/uploads/-/system/project/avatar/${id}/third.png`);
  });

  it.each([
    ['an SVG', 'evil.svg', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>')],
    ['an HTML file', 'evil.html', Buffer.from('<html><script>alert(1)</script></html>')],
    ['a file over 200 KB', 'big.png', Buffer.concat([PNG, Buffer.alloc(201 * 1024)])],
  ])('refuses %s on POST: 400 on avatar, nothing recorded', async (_, filename, content) => {
    const before = await eventCount();
    const name = unique('refused');
    const res = await createWithAvatar({ name }, content, filename);
    expect(res.status).toBe(400);
    expect(Object.keys(res.body)).toEqual(['message']);
    expect(Object.keys(res.body.message)).toEqual(['avatar']);
    expect(res.body.message.avatar).toEqual([expect.any(String)]);
    expect(await eventCount()).toBe(before);
    expect((await get('/projects', alice.token).query({ search: name })).body).toEqual([]);
    await tmpEmpty();
  });

  it('keeps the old avatar and the settings when PUT sends one it refuses', async () => {
    const created = await createWithAvatar({ name: unique('kept') }, PNG, 'keep.png');
    const id = created.body.id as number;
    const before = await eventCount();
    const res = await put(`/projects/${id}`, alice.token)
      .field('description', 'not saved')
      .attach('avatar', Buffer.from('<svg/>'), { filename: 'x.svg' });
    expect(res.status).toBe(400);
    expect(res.body.message.avatar).toEqual([
      'You are not allowed to upload "svg" files, allowed types: png, jpg, jpeg, gif, bmp, tiff, ico',
    ]);
    expect(await eventCount()).toBe(before);
    const read = await get(`/projects/${id}`, alice.token);
    expect(read.body.avatar_url).toBe(`http://lode.test/uploads/-/system/project/avatar/${id}/keep.png`);
    expect(read.body.description).not.toBe('not saved');
    expect((await fetchFile(`/uploads/-/system/project/avatar/${id}/keep.png`, alice.token)).status).toBe(200);
  });

  it('refuses a PUT from someone who may not change the project, storing nothing', async () => {
    const created = await createWithAvatar({ name: unique('guarded'), visibility: 'public' }, PNG, 'mine.png');
    const id = created.body.id as number;
    const res = await put(`/projects/${id}`, stranger.token).attach('avatar', GIF, { filename: 'theirs.gif' });
    expect(res.status).toBe(403);
    expect(existsSync(join(avatarDir(id), 'theirs.gif'))).toBe(false);
    expect(existsSync(join(avatarDir(id), 'mine.png'))).toBe(true);
    await tmpEmpty();
  });

  it('serves a private project’s avatar only to those who see the project', async () => {
    const created = await createWithAvatar({ name: unique('private'), visibility: 'private' }, PNG, 'secret.png');
    const path = `/uploads/-/system/project/avatar/${created.body.id}/secret.png`;
    expect((await fetchFile(path, alice.token)).status).toBe(200);
    expect((await fetchFile(path, stranger.token)).status).toBe(404);
    expect((await fetchFile(path)).status).toBe(404);
  });

  it('removes the avatar directory after the project is deleted', async () => {
    const created = await createWithAvatar({ name: unique('deleted') }, PNG, 'gone.png');
    const id = created.body.id as number;
    expect(existsSync(join(avatarDir(id), 'gone.png'))).toBe(true);
    expect((await t.http().delete(`/api/v4/projects/${id}`).set('PRIVATE-TOKEN', alice.token)).status).toBe(202);
    await eventually(() => !existsSync(avatarDir(id)), 15_000);
    expect((await fetchFile(`/uploads/-/system/project/avatar/${id}/gone.png`, t.rootToken)).status).toBe(404);
  });

  it('leaves JSON-only requests as they were: avatar_url null', async () => {
    const res = await post('/projects', alice.token).send({ name: unique('plain'), description: 'json' });
    expect(res.status).toBe(201);
    expect(res.body.avatar_url).toBeNull();
    expect(res.body.description).toBe('json');
    const updated = await put(`/projects/${res.body.id}`, alice.token).send({ description: 'still json' });
    expect(updated.status).toBe(200);
    expect(updated.body.avatar_url).toBeNull();
    expect(updated.body.description).toBe('still json');
    // Nothing given at all is still GitLab's at_least_one_of 400.
    const nothing = await put(`/projects/${res.body.id}`, alice.token).send({});
    expect(nothing.status).toBe(400);
    expect(nothing.body.error).toMatch(/at least one parameter must be provided/);
    expect(existsSync(avatarDir(res.body.id as number))).toBe(false);
  });
});
