import { startTestApp, type TestApp } from '../support/test-app';

/**
 * A username is also a top-level namespace path, which the groups context owns: the users context
 * learns of a clash only through it (the namespace projection's answer, the TopLevelPaths port).
 */
describe('usernames and top-level group paths', () => {
  let t: TestApp;
  const admin = () => ({
    get: (path: string) => t.http().get(`/api/v4${path}`).set('PRIVATE-TOKEN', t.rootToken),
    post: (path: string) => t.http().post(`/api/v4${path}`).set('PRIVATE-TOKEN', t.rootToken),
    put: (path: string) => t.http().put(`/api/v4${path}`).set('PRIVATE-TOKEN', t.rootToken),
    delete: (path: string) => t.http().delete(`/api/v4${path}`).set('PRIVATE-TOKEN', t.rootToken),
  });
  const eventCount = async () => Number((await t.db.query('select count(*)::int as n from events'))[0].n);
  const newUser = (username: string) => ({
    username,
    email: `${username}@example.com`,
    name: `User ${username}`,
    password: 'secret-password',
  });

  beforeAll(async () => {
    t = await startTestApp();
    for (const path of ['held-by-group', 'ghost'])
      expect((await admin().post('/groups').send({ name: path, path, visibility: 'public' })).status).toBe(201);
  });

  afterAll(async () => {
    await t?.close();
  });

  it('POST /users: a username a top-level group holds is 400 on username (GitLab User#namespace_uniq)', async () => {
    const before = await eventCount();
    const res = await admin().post('/users').send(newUser('Held-By-Group'));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: { username: ['has already been taken'] } });
    expect(await eventCount()).toBe(before);
  });

  it('PUT /users/:id: renaming to a top-level group path is 400 on username', async () => {
    const created = await admin().post('/users').send(newUser('renamed-later'));
    expect(created.status).toBe(201);
    const res = await admin().put(`/users/${created.body.id}`).send({ username: 'held-by-group' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: { username: ['has already been taken'] } });
    expect((await admin().get(`/users/${created.body.id}`)).body.username).toBe('renamed-later');
  });

  it('the ghost user takes the first free numbered name when a group holds "ghost"', async () => {
    const doomed = await admin().post('/users').send(newUser('doomed'));
    expect(doomed.status).toBe(201);
    expect((await admin().delete(`/users/${doomed.body.id}`)).status).toBe(204);
    const ghosts = await admin().get('/users?username=ghost1');
    expect(ghosts.body).toHaveLength(1);
    expect(ghosts.body[0]).toMatchObject({ username: 'ghost1', name: 'Ghost User', state: 'blocked' });
  });
});
