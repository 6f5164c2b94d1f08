import { createUser } from '../support/seed';
import { eventually, startTestApp, type TestApp } from '../support/test-app';

/** What deleting a user does to the groups and projects contexts. */
describe('deleting a user', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  const root = {
    get: (path: string) => t.http().get(`/api/v4${path}`).set('PRIVATE-TOKEN', t.rootToken),
    post: (path: string) => t.http().post(`/api/v4${path}`).set('PRIVATE-TOKEN', t.rootToken),
    delete: (path: string) => t.http().delete(`/api/v4${path}`).set('PRIVATE-TOKEN', t.rootToken),
  };

  it('soft delete: personal projects go, group projects pass to the ghost user, memberships end', async () => {
    const u = await createUser(t);
    const group = (await root.post('/groups').send({ name: 'Shared', path: `shared-${u.id}` })).body;
    expect((await root.post(`/groups/${group.id}/members`).send({ user_id: u.id, access_level: 40 })).status).toBe(201);
    const inGroup = await t
      .http()
      .post('/api/v4/projects')
      .set('PRIVATE-TOKEN', u.token)
      .send({ name: 'team work', namespace_id: group.id });
    expect(inGroup.status).toBe(201);
    const personal = await t.http().post('/api/v4/projects').set('PRIVATE-TOKEN', u.token).send({ name: 'mine' });
    expect(personal.status).toBe(201);

    expect((await root.delete(`/users/${u.id}`)).status).toBe(204);

    expect((await root.get(`/projects/${personal.body.id}`)).status).toBe(404);
    const ghosts = await root.get('/users?username=ghost');
    expect(ghosts.body).toHaveLength(1);
    expect(ghosts.body[0]).toMatchObject({ username: 'ghost', name: 'Ghost User', state: 'blocked' });
    expect((await root.get(`/projects/${inGroup.body.id}`)).body.creator_id).toBe(ghosts.body[0].id);
    // The membership ends in the group's own history too (a job), so owner counts stay right.
    await eventually(async () => {
      const [{ removed }] = await t.db.query(
        `select count(*)::int as removed from events where stream_id = $1 and type = 'GroupMemberRemoved' and (data->>'userId')::int = $2`,
        [`group-${group.id}`, u.id],
      );
      return removed === 1;
    });
    // A second deletion reuses the same ghost.
    const v = await createUser(t);
    expect((await root.delete(`/users/${v.id}`)).status).toBe(204);
    expect((await root.get('/users?username=ghost')).body).toHaveLength(1);
  });

  it('hard delete: removes the groups the user alone owned, keeps the ones with other owners', async () => {
    const u = await createUser(t);
    const other = await createUser(t);
    const alone = (
      await t
        .http()
        .post('/api/v4/groups')
        .set('PRIVATE-TOKEN', u.token)
        .send({ name: 'Alone', path: `alone-${u.id}` })
    ).body;
    const sharedOwnership = (
      await t
        .http()
        .post('/api/v4/groups')
        .set('PRIVATE-TOKEN', u.token)
        .send({ name: 'Both', path: `both-${u.id}` })
    ).body;
    expect(
      (
        await t
          .http()
          .post(`/api/v4/groups/${sharedOwnership.id}/members`)
          .set('PRIVATE-TOKEN', u.token)
          .send({ user_id: other.id, access_level: 50 })
      ).status,
    ).toBe(201);
    const project = (
      await t
        .http()
        .post('/api/v4/projects')
        .set('PRIVATE-TOKEN', u.token)
        .send({ name: 'inside', namespace_id: alone.id })
    ).body;

    expect((await root.delete(`/users/${u.id}`).query({ hard_delete: true })).status).toBe(204);

    await eventually(async () => (await root.get(`/groups/${alone.id}`)).status === 404);
    expect((await root.get(`/projects/${project.id}`)).status).toBe(404);
    const both = await root.get(`/groups/${sharedOwnership.id}/members`);
    expect(both.status).toBe(200);
    await eventually(async () => {
      const [{ removed }] = await t.db.query(
        `select count(*)::int as removed from events where stream_id = $1 and type = 'GroupMemberRemoved'`,
        [`group-${sharedOwnership.id}`],
      );
      return removed === 1;
    });
    // The remaining owner is now the last one: they may not leave.
    const leave = await t
      .http()
      .delete(`/api/v4/groups/${sharedOwnership.id}/members/${other.id}`)
      .set('PRIVATE-TOKEN', other.token);
    expect(leave.status).toBe(403);
  });

  it('the ghost user cannot be deleted', async () => {
    const ghost = (await root.get('/users?username=ghost')).body[0];
    const res = await root.delete(`/users/${ghost.id}`);
    expect(res.status).toBe(403);
  });
});
