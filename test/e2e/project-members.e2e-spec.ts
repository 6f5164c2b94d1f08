import type { Response } from 'supertest';
import { expectShape } from '../contract/shape';
import { addGroupMember, client, createGroup, unique } from '../support/groups';
import { expectProject } from '../support/project-shape';
import { createUser, type SeededUser } from '../support/seed';
import { startTestApp, type TestApp } from '../support/test-app';

/** Who has access to a project and how: project members, sharing with groups, inherited group members, /projects/:id/users. */
describe('project members, sharing and inherited access', () => {
  let t: TestApp;
  const as = (token?: string) => client(t, token);
  const admin = () => as(t.rootToken);
  const anon = () => as();
  const users = async (n: number) => Promise.all(Array.from({ length: n }, () => createUser(t)));
  const makeProject = async (token: string, attrs: Record<string, unknown> = {}) => {
    const res = await as(token)
      .post('/projects')
      .send({ name: `Project ${unique()}`, ...attrs });
    if (res.status !== 201) throw new Error(`makeProject: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as { id: number; name: string; path_with_namespace: string };
  };
  const expectStatus = (res: Response, status: number, body?: unknown) => {
    expect({ status: res.status, body: body === undefined ? undefined : res.body }).toEqual({ status, body });
  };
  const notFound = (res: Response, resource = 'Project') =>
    expectStatus(res, 404, { message: `404 ${resource} Not Found` });
  const forbidden = (res: Response) => expectStatus(res, 403, { message: '403 Forbidden' });
  const yesterday = () => new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  describe('project members', () => {
    let owner: SeededUser;
    let maintainer: SeededUser;
    let developer: SeededUser;
    let guest: SeededUser;
    let stranger: SeededUser;
    let project: { id: number };

    beforeAll(async () => {
      [owner, maintainer, developer, guest, stranger] = await users(5);
      project = await makeProject(owner.token, { visibility: 'private' });
    });

    it('lets the owner add a maintainer: 201 with the member', async () => {
      const res = await as(owner.token)
        .post(`/projects/${project.id}/members`)
        .send({ user_id: maintainer.id, access_level: 40 });
      expect(res.status).toBe(201);
      expectShape(res.body, 'member');
      expect(res.body).toEqual({
        id: maintainer.id,
        name: expect.any(String),
        username: maintainer.username,
        state: 'active',
        avatar_url: expect.anything(),
        web_url: `http://lode.test/${maintainer.username}`,
        access_level: 40,
        expires_at: null,
      });
    });

    it('lets maintainers add members at guest to maintainer levels, with an expiry date (form fields too)', async () => {
      const res = await as(maintainer.token)
        .post(`/projects/${project.id}/members`)
        .type('form')
        .send({ user_id: String(developer.id), access_level: '30', expires_at: '2099-12-31' });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ id: developer.id, access_level: 30, expires_at: '2099-12-31' });
      expect(
        (
          await as(maintainer.token)
            .post(`/projects/${project.id}/members`)
            .send({ user_id: guest.id, access_level: 10 })
        ).status,
      ).toBe(201);
    });

    it('lists the direct members (the personal owner is a maintainer) and shows one', async () => {
      const list = await as(developer.token).get(`/projects/${project.id}/members`);
      expect(list.status).toBe(200);
      for (const m of list.body) expectShape(m, 'member');
      expect(list.body.map((m: { id: number; access_level: number }) => [m.id, m.access_level])).toEqual([
        [owner.id, 40],
        [maintainer.id, 40],
        [developer.id, 30],
        [guest.id, 10],
      ]);
      expect(list.headers['x-total']).toBe('4');
      const search = await as(guest.token).get(`/projects/${project.id}/members`).query({ query: developer.username });
      expect(search.body.map((m: { id: number }) => m.id)).toEqual([developer.id]);
      const one = await as(guest.token).get(`/projects/${project.id}/members/${developer.id}`);
      expect(one.status).toBe(200);
      expect(one.body).toMatchObject({ id: developer.id, access_level: 30, expires_at: '2099-12-31' });
      expectStatus(await as(guest.token).get(`/projects/${project.id}/members/${stranger.id}`), 404, {
        message: '404 Not found',
      });
      expectStatus(await as(guest.token).get(`/projects/${project.id}/members/abc`), 400, {
        error: 'user_id is invalid',
      });
    });

    it('refuses the owner level and unknown levels on the model (400 access_level), bad input on the params', async () => {
      const newcomer = await createUser(t);
      for (const level of [50, 5, 60]) {
        expectStatus(
          await as(owner.token)
            .post(`/projects/${project.id}/members`)
            .send({ user_id: newcomer.id, access_level: level }),
          400,
          {
            message: { access_level: ['is not included in the list'] },
          },
        );
      }
      expectStatus(await as(owner.token).post(`/projects/${project.id}/members`).send({}), 400, {
        error: 'user_id is missing, access_level is missing',
      });
      expectStatus(
        await as(owner.token)
          .post(`/projects/${project.id}/members`)
          .send({ user_id: newcomer.id, access_level: 'high' }),
        400,
        {
          error: 'access_level is invalid',
        },
      );
      expectStatus(
        await as(owner.token)
          .post(`/projects/${project.id}/members`)
          .send({ user_id: newcomer.id, access_level: 30, expires_at: '2099-02-30' }),
        400,
        {
          error: 'expires_at is invalid',
        },
      );
      expectStatus(
        await as(owner.token).put(`/projects/${project.id}/members/${developer.id}`).send({ access_level: 50 }),
        400,
        {
          message: { access_level: ['is not included in the list'] },
        },
      );
      expect((await as(owner.token).get(`/projects/${project.id}/members/${newcomer.id}`)).status).toBe(404);
    });

    it('409 Member already exists; 404 User Not Found for an unknown user', async () => {
      expectStatus(
        await as(owner.token).post(`/projects/${project.id}/members`).send({ user_id: developer.id, access_level: 20 }),
        409,
        {
          message: 'Member already exists',
        },
      );
      notFound(
        await as(owner.token).post(`/projects/${project.id}/members`).send({ user_id: 999999, access_level: 20 }),
        'User',
      );
    });

    it('lets maintainers change a level (200 with the member); 404 Not found for a non-member', async () => {
      const res = await as(maintainer.token)
        .put(`/projects/${project.id}/members/${developer.id}`)
        .send({ access_level: 20, expires_at: '' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: developer.id, access_level: 20, expires_at: null });
      expectStatus(
        await as(maintainer.token).put(`/projects/${project.id}/members/${stranger.id}`).send({ access_level: 20 }),
        404,
        { message: '404 Not found' },
      );
      expectStatus(await as(maintainer.token).put(`/projects/${project.id}/members/${developer.id}`).send({}), 400, {
        error: 'access_level is missing',
      });
      expect(
        (await as(maintainer.token).put(`/projects/${project.id}/members/${developer.id}`).send({ access_level: 30 }))
          .body.access_level,
      ).toBe(30);
    });

    it('refuses developers and guests (403), strangers (404) and anonymous writes (401)', async () => {
      const newcomer = await createUser(t);
      forbidden(
        await as(developer.token)
          .post(`/projects/${project.id}/members`)
          .send({ user_id: newcomer.id, access_level: 10 }),
      );
      forbidden(
        await as(developer.token).put(`/projects/${project.id}/members/${guest.id}`).send({ access_level: 20 }),
      );
      forbidden(await as(developer.token).delete(`/projects/${project.id}/members/${guest.id}`));
      forbidden(
        await as(guest.token).post(`/projects/${project.id}/members`).send({ user_id: newcomer.id, access_level: 10 }),
      );
      notFound(await as(stranger.token).get(`/projects/${project.id}/members`));
      notFound(
        await as(stranger.token)
          .post(`/projects/${project.id}/members`)
          .send({ user_id: newcomer.id, access_level: 10 }),
      );
      notFound(await anon().get(`/projects/${project.id}/members`));
      expectStatus(
        await anon().post(`/projects/${project.id}/members`).send({ user_id: newcomer.id, access_level: 10 }),
        401,
        { message: '401 Unauthorized' },
      );
      // GitLab finds the membership before checking the right to remove it.
      expectStatus(await as(developer.token).delete(`/projects/${project.id}/members/${newcomer.id}`), 404, {
        message: '404 Not found',
      });
    });

    it('keeps the personal owner’s own membership: 403 to change or remove it, even for administrators', async () => {
      forbidden(
        await as(maintainer.token).put(`/projects/${project.id}/members/${owner.id}`).send({ access_level: 10 }),
      );
      forbidden(await admin().put(`/projects/${project.id}/members/${owner.id}`).send({ access_level: 10 }));
      forbidden(await admin().delete(`/projects/${project.id}/members/${owner.id}`));
      forbidden(await as(owner.token).delete(`/projects/${project.id}/members/${owner.id}`));
    });

    it('lets a member leave (204), then they lose access', async () => {
      const res = await as(guest.token).delete(`/projects/${project.id}/members/${guest.id}`);
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      notFound(await as(guest.token).get(`/projects/${project.id}`));
    });

    it('lets maintainers remove members (204, then 404 Not found)', async () => {
      expect((await as(maintainer.token).delete(`/projects/${project.id}/members/${developer.id}`)).status).toBe(204);
      expectStatus(await as(maintainer.token).delete(`/projects/${project.id}/members/${developer.id}`), 404, {
        message: '404 Not found',
      });
      notFound(await as(developer.token).get(`/projects/${project.id}`));
      expect((await admin().delete(`/projects/${project.id}/members/${maintainer.id}`)).status).toBe(204);
      notFound(await as(maintainer.token).get(`/projects/${project.id}/members`));
    });

    it('gives an expired membership nothing', async () => {
      const p = await makeProject(owner.token, { visibility: 'private' });
      const late = await createUser(t);
      expect(
        (
          await as(owner.token)
            .post(`/projects/${p.id}/members`)
            .send({ user_id: late.id, access_level: 30, expires_at: yesterday() })
        ).status,
      ).toBe(201);
      notFound(await as(late.token).get(`/projects/${p.id}`));
      expect((await as(late.token).get('/projects').query({ membership: true })).body).toEqual([]);
    });
  });

  describe('sharing with groups', () => {
    let owner: SeededUser; // owns the project's group
    let groupDeveloper: SeededUser;
    let otherOwner: SeededUser;
    let sharedDeveloper: SeededUser; // developer of the group the project is shared with
    let sharedMaintainer: SeededUser;
    let stranger: SeededUser;
    let home: { id: number; name: string };
    let other: { id: number; name: string };
    let project: { id: number };

    beforeAll(async () => {
      [owner, groupDeveloper, otherOwner, sharedDeveloper, sharedMaintainer, stranger] = await users(6);
      home = await createGroup(t, { visibility: 'private' }, owner.token);
      await addGroupMember(t, home.id, groupDeveloper.id, 30);
      other = await createGroup(t, { visibility: 'internal' }, otherOwner.token);
      await addGroupMember(t, other.id, sharedDeveloper.id, 30);
      await addGroupMember(t, other.id, sharedMaintainer.id, 40);
      project = await makeProject(owner.token, { namespace_id: home.id, visibility: 'private' });
    });

    it('validates the parameters (400)', async () => {
      expectStatus(await as(owner.token).post(`/projects/${project.id}/share`).send({}), 400, {
        error: 'group_id is missing, group_access is missing',
      });
      expectStatus(
        await as(owner.token).post(`/projects/${project.id}/share`).send({ group_id: other.id, group_access: 50 }),
        400,
        {
          error: 'group_access does not have a valid value',
        },
      );
      expectStatus(
        await as(owner.token).post(`/projects/${project.id}/share`).send({ group_id: other.id, group_access: 'lots' }),
        400,
        {
          error: 'group_access is invalid',
        },
      );
      expectStatus(
        await as(owner.token).post(`/projects/${project.id}/share`).send({ group_id: 'x', group_access: 30 }),
        400,
        { error: 'group_id is invalid' },
      );
      expectStatus(
        await as(owner.token)
          .post(`/projects/${project.id}/share`)
          .send({ group_id: other.id, group_access: 30, expires_at: 'soon' }),
        400,
        {
          error: 'expires_at is invalid',
        },
      );
    });

    it('404 Group Not Found for an unknown group or one the caller cannot see', async () => {
      notFound(
        await as(owner.token).post(`/projects/${project.id}/share`).send({ group_id: 999999, group_access: 30 }),
        'Group',
      );
      const hidden = await createGroup(t, { visibility: 'private' }, otherOwner.token);
      notFound(
        await as(owner.token).post(`/projects/${project.id}/share`).send({ group_id: hidden.id, group_access: 30 }),
        'Group',
      );
    });

    it('shares at a level: 201 with the link; a member of that group gets the lesser level', async () => {
      notFound(await as(sharedDeveloper.token).get(`/projects/${project.id}`));
      const res = await as(owner.token)
        .post(`/projects/${project.id}/share`)
        .send({ group_id: other.id, group_access: 20, expires_at: null });
      expect(res.status).toBe(201);
      expectShape(res.body, 'project-share');
      expect(res.body).toEqual({
        id: expect.any(Number),
        project_id: project.id,
        group_id: other.id,
        group_access: 20,
        expires_at: null,
      });
      const seen = await as(sharedDeveloper.token).get(`/projects/${project.id}`);
      expect(seen.status).toBe(200);
      expectProject(seen.body, 'project', { owner: false, adminFields: false });
      expect(seen.body.permissions).toEqual({ project_access: null, group_access: null });
      expect(seen.body.shared_with_groups).toEqual([
        { group_id: other.id, group_name: other.name, group_access_level: 20 },
      ]);
      // Reporter share + developer member: a reporter, so no PUT, not even for the group's maintainer.
      forbidden(await as(sharedDeveloper.token).put(`/projects/${project.id}`).send({ description: 'no' }));
      forbidden(await as(sharedMaintainer.token).put(`/projects/${project.id}`).send({ description: 'no' }));
      expect(
        (await as(sharedDeveloper.token).get('/projects').query({ membership: true })).body.map(
          (p: { id: number }) => p.id,
        ),
      ).toEqual([project.id]);
      notFound(await as(stranger.token).get(`/projects/${project.id}`));
    });

    it('a maintainer share lets the group’s maintainers administer, its developers stay developers', async () => {
      const p = await makeProject(owner.token, { namespace_id: home.id, visibility: 'private' });
      const res = await as(owner.token)
        .post(`/projects/${p.id}/share`)
        .send({ group_id: other.id, group_access: 40, expires_at: '2099-06-30' });
      expect(res.body).toMatchObject({ group_access: 40, expires_at: '2099-06-30' });
      const put = await as(sharedMaintainer.token)
        .put(`/projects/${p.id}`)
        .send({ description: 'maintained through a share' });
      expect(put.status).toBe(200);
      expect(put.body.description).toBe('maintained through a share');
      forbidden(await as(sharedDeveloper.token).put(`/projects/${p.id}`).send({ description: 'no' }));
      // Owner rights never come through a share.
      forbidden(await as(otherOwner.token).post(`/projects/${p.id}/archive`));
    });

    it('409 when shared with that group already', async () => {
      expectStatus(
        await as(owner.token).post(`/projects/${project.id}/share`).send({ group_id: other.id, group_access: 30 }),
        409,
        {
          message: 'Group already shared with this group',
        },
      );
    });

    it('409 for the project’s own group or one of its ancestors', async () => {
      const own = { message: 'Project cannot be shared with the group it is in or one of its ancestors.' };
      expectStatus(
        await as(owner.token).post(`/projects/${project.id}/share`).send({ group_id: home.id, group_access: 30 }),
        409,
        own,
      );
      const sub = await as(owner.token)
        .post('/groups')
        .send({ name: `Sub ${unique()}`, path: `sub-${unique()}`, parent_id: home.id, visibility: 'private' });
      expect(sub.status).toBe(201);
      const deep = await makeProject(owner.token, { namespace_id: sub.body.id });
      expectStatus(
        await as(owner.token).post(`/projects/${deep.id}/share`).send({ group_id: home.id, group_access: 30 }),
        409,
        own,
      );
      expectStatus(
        await as(owner.token).post(`/projects/${deep.id}/share`).send({ group_id: sub.body.id, group_access: 30 }),
        409,
        own,
      );
    });

    it('is for maintainers: 403 developers, 404 strangers, 401 anonymous', async () => {
      forbidden(
        await as(groupDeveloper.token)
          .post(`/projects/${project.id}/share`)
          .send({ group_id: other.id, group_access: 30 }),
      );
      notFound(
        await as(stranger.token).post(`/projects/${project.id}/share`).send({ group_id: other.id, group_access: 30 }),
      );
      expectStatus(
        await anon().post(`/projects/${project.id}/share`).send({ group_id: other.id, group_access: 30 }),
        401,
        { message: '401 Unauthorized' },
      );
      forbidden(await as(groupDeveloper.token).delete(`/projects/${project.id}/share/${other.id}`));
    });

    it('gives an expired share nothing', async () => {
      const p = await makeProject(owner.token, { namespace_id: home.id, visibility: 'private' });
      expect(
        (
          await as(owner.token)
            .post(`/projects/${p.id}/share`)
            .send({ group_id: other.id, group_access: 30, expires_at: yesterday() })
        ).status,
      ).toBe(201);
      notFound(await as(sharedDeveloper.token).get(`/projects/${p.id}`));
    });

    it('unshares: 204, then access is gone; 404 Group Link Not Found after; 400 for a non-integer id', async () => {
      const res = await as(owner.token).delete(`/projects/${project.id}/share/${other.id}`);
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      notFound(await as(sharedDeveloper.token).get(`/projects/${project.id}`));
      expect((await as(owner.token).get(`/projects/${project.id}`)).body.shared_with_groups).toEqual([]);
      notFound(await as(owner.token).delete(`/projects/${project.id}/share/${other.id}`), 'Group Link');
      expectStatus(await as(owner.token).delete(`/projects/${project.id}/share/abc`), 400, {
        error: 'group_id is invalid',
      });
      // Sharing again is allowed.
      expect(
        (await as(owner.token).post(`/projects/${project.id}/share`).send({ group_id: other.id, group_access: 10 }))
          .status,
      ).toBe(201);
    });
  });

  describe('inherited group membership', () => {
    let parentOwner: SeededUser;
    let parentMaintainer: SeededUser;
    let parentDeveloper: SeededUser;
    let expired: SeededUser;
    let sub: { id: number };
    let project: { id: number };

    beforeAll(async () => {
      [parentOwner, parentMaintainer, parentDeveloper, expired] = await users(4);
      const parent = await createGroup(t, { visibility: 'private' }, parentOwner.token);
      await addGroupMember(t, parent.id, parentMaintainer.id, 40);
      await addGroupMember(t, parent.id, parentDeveloper.id, 30);
      await addGroupMember(t, parent.id, expired.id, 40, yesterday());
      // Made by root, so the parent's owner is an owner of the subgroup by inheritance only.
      sub = (
        await admin()
          .post('/groups')
          .send({ name: `Sub ${unique()}`, path: `sub-${unique()}`, parent_id: parent.id, visibility: 'private' })
      ).body;
      project = await makeProject(t.rootToken, { namespace_id: sub.id, visibility: 'private' });
    });

    it('a parent-group developer sees the subgroup’s private project (group_access is only a direct membership) but may not change it', async () => {
      const res = await as(parentDeveloper.token).get(`/projects/${project.id}`);
      expect(res.status).toBe(200);
      expectProject(res.body, 'project', { owner: false, adminFields: false });
      expect(res.body.permissions).toEqual({ project_access: null, group_access: null });
      expect(
        (await as(parentDeveloper.token).get('/projects').query({ membership: true })).body.map(
          (p: { id: number }) => p.id,
        ),
      ).toContain(project.id);
      forbidden(await as(parentDeveloper.token).put(`/projects/${project.id}`).send({ description: 'no' }));
    });

    it('a parent-group maintainer administers it but does not own it', async () => {
      const res = await as(parentMaintainer.token).put(`/projects/${project.id}`).send({ description: 'from above' });
      expect(res.status).toBe(200);
      expectProject((await as(parentMaintainer.token).get(`/projects/${project.id}`)).body, 'project', {
        owner: false,
        adminFields: true,
      });
      forbidden(await as(parentMaintainer.token).post(`/projects/${project.id}/archive`));
      forbidden(await as(parentMaintainer.token).delete(`/projects/${project.id}`));
      const created = await as(parentMaintainer.token)
        .post('/projects')
        .send({ name: `By inheritance ${unique()}`, namespace_id: sub.id });
      expect(created.status).toBe(201);
    });

    it('a parent-group owner owns it: archive and delete', async () => {
      expect((await as(parentOwner.token).post(`/projects/${project.id}/archive`)).status).toBe(201);
      expect((await as(parentOwner.token).post(`/projects/${project.id}/unarchive`)).status).toBe(201);
      const doomed = await makeProject(t.rootToken, { namespace_id: sub.id });
      expect((await as(parentOwner.token).delete(`/projects/${doomed.id}`)).status).toBe(202);
    });

    it('an expired membership grants nothing', async () => {
      notFound(await as(expired.token).get(`/projects/${project.id}`));
      expect((await as(expired.token).get('/projects')).body).toEqual([]);
      notFound(await as(expired.token).put(`/projects/${project.id}`).send({ description: 'no' }));
    });
  });

  describe('GET /projects/:id/users', () => {
    let groupOwner: SeededUser;
    let groupDeveloper: SeededUser;
    let projectMember: SeededUser;
    let sharedMember: SeededUser;
    let expiredMember: SeededUser;
    let stranger: SeededUser;
    let project: { id: number };
    let sharedGroupOwner: SeededUser;

    beforeAll(async () => {
      [groupOwner, groupDeveloper, projectMember, sharedMember, expiredMember, stranger, sharedGroupOwner] =
        await users(7);
      const g = await createGroup(t, { visibility: 'public' }, groupOwner.token);
      await addGroupMember(t, g.id, groupDeveloper.id, 30);
      await addGroupMember(t, g.id, expiredMember.id, 30, yesterday());
      const shared = await createGroup(t, { visibility: 'public' }, sharedGroupOwner.token);
      await addGroupMember(t, shared.id, sharedMember.id, 20);
      project = await makeProject(groupOwner.token, { namespace_id: g.id, visibility: 'public' });
      await as(groupOwner.token)
        .post(`/projects/${project.id}/members`)
        .send({ user_id: projectMember.id, access_level: 10 });
      await as(groupOwner.token).post(`/projects/${project.id}/share`).send({ group_id: shared.id, group_access: 30 });
    });

    it('lists everyone with access (members, group members, shared groups’ members) as UserBasic', async () => {
      const res = await as(stranger.token).get(`/projects/${project.id}/users`);
      expect(res.status).toBe(200);
      for (const u of res.body) {
        expectShape(u, 'user-basic');
        expect(Object.keys(u).sort()).toEqual(['avatar_url', 'id', 'name', 'state', 'username', 'web_url']);
      }
      const got = (res.body as { id: number }[]).map((u) => u.id).sort((a, b) => a - b);
      expect(got).toEqual(
        [groupOwner, groupDeveloper, projectMember, sharedMember, sharedGroupOwner]
          .map((u) => u.id)
          .sort((a, b) => a - b),
      );
      expect(res.headers['x-total']).toBe('5');
      expect((await anon().get(`/projects/${project.id}/users`)).status).toBe(200);
    });

    it('searches by name or username', async () => {
      const res = await as(stranger.token)
        .get(`/projects/${project.id}/users`)
        .query({ search: sharedMember.username.toUpperCase() });
      expect(res.body.map((u: { id: number }) => u.id)).toEqual([sharedMember.id]);
      expect(
        (await as(stranger.token).get(`/projects/${project.id}/users`).query({ search: 'nobody-matches-this' })).body,
      ).toEqual([]);
    });

    it('includes the owner of a personal project; 404 for a private project of others', async () => {
      const p = await makeProject(stranger.token, { visibility: 'private' });
      expect((await as(stranger.token).get(`/projects/${p.id}/users`)).body.map((u: { id: number }) => u.id)).toEqual([
        stranger.id,
      ]);
      notFound(await as(groupOwner.token).get(`/projects/${p.id}/users`));
    });
  });
});
