import type { Response } from 'supertest';
import { expectShape } from '../contract/shape';
import { addGroupMember, client, createGroup, createProject, unique, type CreatedGroup } from '../support/groups';
import { createUser, type SeededUser } from '../support/seed';
import { startTestApp, type TestApp } from '../support/test-app';

const NOT_FOUND = { message: '404 Not found' };
const GROUP_NOT_FOUND = { message: '404 Group Not Found' };
const FORBIDDEN = { message: '403 Forbidden' };
const UNAUTHORIZED = { message: '401 Unauthorized' };

describe('group members and custom attributes API', () => {
  let t: TestApp;
  let owner: SeededUser;
  let outsider: SeededUser;

  const admin = () => client(t, t.rootToken);
  const as = (u: SeededUser) => client(t, u.token);
  const anon = () => client(t);
  const ids = (res: Response) => (res.body as { id: number }[]).map((m) => m.id);
  const eventCount = async () => Number((await t.db.query('select count(*)::int as n from events'))[0].n);
  /** Creates users and uses their tokens once, so that today's activity event is recorded outside the tests. */
  const users = async (n: number, attrs: Record<string, unknown> = {}) => {
    const list = await Promise.all(Array.from({ length: n }, () => createUser(t, attrs)));
    await Promise.all(list.map((u) => as(u).get('/user')));
    return list;
  };

  beforeAll(async () => {
    t = await startTestApp();
    [owner, outsider] = await users(2);
  });
  afterAll(async () => {
    await t?.close();
  });

  describe('GET /groups/:id/members', () => {
    let group: CreatedGroup;
    let zed: SeededUser;
    let yan: SeededUser;

    beforeAll(async () => {
      const s = unique();
      [zed, yan] = await Promise.all([
        createUser(t, { name: `Zed Quarry${s}` }),
        createUser(t, { username: `yan-quarry${s}` }),
      ]);
      group = await createGroup(t, { visibility: 'public' }, owner.token);
      await addGroupMember(t, group.id, zed.id, 30);
      await addGroupMember(t, group.id, yan.id, 10, '2099-12-31');
    });

    it('lists the direct members in the order they joined, with their levels and expiry', async () => {
      const res = await as(outsider).get(`/groups/${group.id}/members`);
      expect(res.status).toBe(200);
      for (const m of res.body) expectShape(m, 'member');
      expect(ids(res)).toEqual([owner.id, zed.id, yan.id]);
      expect(
        res.body.map((m: { access_level: number; expires_at: string | null }) => [m.access_level, m.expires_at]),
      ).toEqual([
        [50, null],
        [30, null],
        [10, '2099-12-31'],
      ]);
      expect(res.body[1]).toMatchObject({
        username: zed.username,
        state: 'active',
        web_url: `http://lode.test/${zed.username}`,
      });
      expect(res.headers['x-total']).toBe('3');
    });

    it('filters with query on name or username, case-insensitively', async () => {
      const byName = await as(outsider).get(`/groups/${group.id}/members`).query({ query: 'zed quarry' });
      expect(ids(byName)).toEqual([zed.id]);
      const byUsername = await as(outsider).get(`/groups/${group.id}/members`).query({ query: 'YAN-QUARRY' });
      expect(ids(byUsername)).toEqual([yan.id]);
      const both = await as(outsider).get(`/groups/${group.id}/members`).query({ query: 'quarry' });
      expect(ids(both)).toEqual([zed.id, yan.id]);
      const none = await as(outsider).get(`/groups/${group.id}/members`).query({ query: 'nobody-at-all' });
      expect(none.body).toEqual([]);
    });

    it('paginates', async () => {
      const res = await as(outsider).get(`/groups/${group.id}/members`).query({ per_page: 2, page: 2 });
      expect(ids(res)).toEqual([yan.id]);
      expect(res.headers).toMatchObject({ 'x-total': '3', 'x-total-pages': '2', 'x-page': '2', 'x-per-page': '2' });
    });

    it('wants a signed-in caller, even for a public group: 401', async () => {
      const res = await anon().get(`/groups/${group.id}/members`);
      expect(res.status).toBe(401);
      expect(res.body).toEqual(UNAUTHORIZED);
      expect((await anon().get(`/groups/${group.id}/members/${owner.id}`)).status).toBe(401);
    });

    it('hides private groups from non-members: 404', async () => {
      const priv = await createGroup(t, { visibility: 'private' }, owner.token);
      const res = await as(outsider).get(`/groups/${priv.id}/members`);
      expect(res.status).toBe(404);
      expect(res.body).toEqual(GROUP_NOT_FOUND);
      expect((await as(outsider).get(`/groups/${priv.id}/members/${owner.id}`)).status).toBe(404);
    });

    it('answers one member, and 404 for a user who is not a member', async () => {
      const one = await as(outsider).get(`/groups/${encodeURIComponent(group.full_path)}/members/${zed.id}`);
      expect(one.status).toBe(200);
      expectShape(one.body, 'member');
      expect(one.body).toMatchObject({ id: zed.id, access_level: 30, expires_at: null });
      const notMember = await as(owner).get(`/groups/${group.id}/members/${outsider.id}`);
      expect(notMember.status).toBe(404);
      expect(notMember.body).toEqual(NOT_FOUND);
      const unknown = await as(owner).get(`/groups/${group.id}/members/99999999`);
      expect(unknown.status).toBe(404);
    });
  });

  describe('POST /groups/:id/members', () => {
    let group: CreatedGroup;
    let developer: SeededUser;

    beforeAll(async () => {
      group = await createGroup(t, { visibility: 'internal' }, owner.token);
      [developer] = await users(1);
      await addGroupMember(t, group.id, developer.id, 30);
    });

    it.each([10, 20, 30, 40, 50])('adds a member at level %i: 201 with the member', async (level) => {
      const [u] = await users(1);
      const res = await as(owner).post(`/groups/${group.id}/members`).send({ user_id: u.id, access_level: level });
      expect(res.status).toBe(201);
      expectShape(res.body, 'member');
      expect(res.body).toMatchObject({ id: u.id, username: u.username, access_level: level, expires_at: null });
      const listed = await as(owner).get(`/groups/${group.id}/members/${u.id}`);
      expect(listed.body.access_level).toBe(level);
    });

    it('takes form fields and an expiry date', async () => {
      const [u] = await users(1);
      const res = await as(owner)
        .post(`/groups/${group.id}/members`)
        .type('form')
        .send({ user_id: String(u.id), access_level: '20', expires_at: '2031-02-28' });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ id: u.id, access_level: 20, expires_at: '2031-02-28' });
    });

    it.each([
      [{ access_level: 30 }, 'user_id is missing'],
      [{ user_id: 1 }, 'access_level is missing'],
      [{ user_id: 1, access_level: 0 }, 'access_level does not have a valid value'],
      [{ user_id: 1, access_level: 15 }, 'access_level does not have a valid value'],
      [{ user_id: 1, access_level: 60 }, 'access_level does not have a valid value'],
      [{ user_id: 1, access_level: 'owner' }, 'access_level does not have a valid value'],
      [{ user_id: 'one', access_level: 30 }, 'user_id is invalid'],
      [{ user_id: 1, access_level: 30, expires_at: '2031-13-01' }, 'expires_at is invalid'],
      [{ user_id: 1, access_level: 30, expires_at: 'tomorrow' }, 'expires_at is invalid'],
    ])('refuses %j: 400', async (body, error) => {
      const before = await eventCount();
      const res = await as(owner).post(`/groups/${group.id}/members`).send(body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error });
      expect(await eventCount()).toBe(before);
    });

    it('refuses an existing member: 409', async () => {
      const res = await as(owner).post(`/groups/${group.id}/members`).send({ user_id: developer.id, access_level: 40 });
      expect(res.status).toBe(409);
      expect(res.body).toEqual({ message: 'Member already exists' });
      const still = await as(owner).get(`/groups/${group.id}/members/${developer.id}`);
      expect(still.body.access_level).toBe(30);
    });

    it('answers 404 for an unknown user', async () => {
      const res = await as(owner).post(`/groups/${group.id}/members`).send({ user_id: 99999999, access_level: 30 });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ message: '404 User Not Found' });
    });

    it('is for owners and administrators: members below owner and outsiders get 403, anonymous callers 401', async () => {
      const [u] = await users(1);
      for (const who of [developer, outsider]) {
        const res = await as(who).post(`/groups/${group.id}/members`).send({ user_id: u.id, access_level: 10 });
        expect(res.status).toBe(403);
        expect(res.body).toEqual(FORBIDDEN);
      }
      const anonymous = await anon().post(`/groups/${group.id}/members`).send({ user_id: u.id, access_level: 10 });
      expect(anonymous.status).toBe(401);
      const root = await admin().post(`/groups/${group.id}/members`).send({ user_id: u.id, access_level: 10 });
      expect(root.status).toBe(201);
    });

    it('hides a private group from outsiders: 404', async () => {
      const priv = await createGroup(t, { visibility: 'private' }, owner.token);
      const res = await as(outsider)
        .post(`/groups/${priv.id}/members`)
        .send({ user_id: outsider.id, access_level: 50 });
      expect(res.status).toBe(404);
      expect(res.body).toEqual(GROUP_NOT_FOUND);
    });
  });

  describe('PUT /groups/:id/members/:user_id', () => {
    let group: CreatedGroup;
    let developer: SeededUser;
    let guest: SeededUser;

    beforeAll(async () => {
      group = await createGroup(t, { visibility: 'public' }, owner.token);
      [developer, guest] = await users(2);
      await addGroupMember(t, group.id, developer.id, 30);
      await addGroupMember(t, group.id, guest.id, 10);
    });

    it('changes the level and the expiry: 200 with the member', async () => {
      const res = await as(owner)
        .put(`/groups/${group.id}/members/${guest.id}`)
        .send({ access_level: 20, expires_at: '2040-01-01' });
      expect(res.status).toBe(200);
      expectShape(res.body, 'member');
      expect(res.body).toMatchObject({ id: guest.id, access_level: 20, expires_at: '2040-01-01' });
      const cleared = await as(owner)
        .put(`/groups/${group.id}/members/${guest.id}`)
        .send({ access_level: 20, expires_at: '' });
      expect(cleared.status).toBe(200);
      expect(cleared.body.expires_at).toBeNull();
    });

    it('refuses bad levels and dates: 400', async () => {
      for (const [body, error] of [
        [{}, 'access_level is missing'],
        [{ access_level: 45 }, 'access_level does not have a valid value'],
        [{ access_level: 30, expires_at: '2040-02-30' }, 'expires_at is invalid'],
      ] as const) {
        const res = await as(owner).put(`/groups/${group.id}/members/${guest.id}`).send(body);
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ error });
      }
    });

    it('answers 404 for a user who is not a member', async () => {
      const res = await as(owner).put(`/groups/${group.id}/members/${outsider.id}`).send({ access_level: 30 });
      expect(res.status).toBe(404);
      expect(res.body).toEqual(NOT_FOUND);
    });

    it('is for owners: a developer gets 403 (before any lookup), an anonymous caller 401', async () => {
      const res = await as(developer).put(`/groups/${group.id}/members/${guest.id}`).send({ access_level: 40 });
      expect(res.status).toBe(403);
      expect(res.body).toEqual(FORBIDDEN);
      const self = await as(developer).put(`/groups/${group.id}/members/${developer.id}`).send({ access_level: 50 });
      expect(self.status).toBe(403);
      const missing = await as(developer).put(`/groups/${group.id}/members/${outsider.id}`).send({ access_level: 40 });
      expect(missing.status).toBe(403);
      const anonymous = await anon().put(`/groups/${group.id}/members/${guest.id}`).send({ access_level: 40 });
      expect(anonymous.status).toBe(401);
    });

    it('never demotes the last owner (403, administrators included), but does once there is another', async () => {
      const g = await createGroup(t, {}, owner.token);
      for (const who of [owner.token, t.rootToken]) {
        const res = await client(t, who).put(`/groups/${g.id}/members/${owner.id}`).send({ access_level: 40 });
        expect(res.status).toBe(403);
        expect(res.body.message).toMatch(/^403 Forbidden/);
      }
      await addGroupMember(t, g.id, developer.id, 50);
      const res = await as(developer).put(`/groups/${g.id}/members/${owner.id}`).send({ access_level: 40 });
      expect(res.status).toBe(200);
      expect(res.body.access_level).toBe(40);
      // The demoted owner no longer manages members.
      const after = await as(owner).put(`/groups/${g.id}/members/${owner.id}`).send({ access_level: 50 });
      expect(after.status).toBe(403);
    });
  });

  describe('DELETE /groups/:id/members/:user_id', () => {
    let group: CreatedGroup;
    let developer: SeededUser;
    let guest: SeededUser;
    let leaver: SeededUser;

    beforeAll(async () => {
      group = await createGroup(t, { visibility: 'public' }, owner.token);
      [developer, guest, leaver] = await users(3);
      for (const [u, level] of [
        [developer, 30],
        [guest, 10],
        [leaver, 20],
      ] as const)
        await addGroupMember(t, group.id, u.id, level);
    });

    it('lets an owner remove a member: 204, and the membership is gone', async () => {
      const res = await as(owner).delete(`/groups/${group.id}/members/${guest.id}`);
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expect((await as(owner).get(`/groups/${group.id}/members/${guest.id}`)).status).toBe(404);
      const list = await as(owner).get(`/groups/${group.id}/members`);
      expect(ids(list)).not.toContain(guest.id);
      const again = await as(owner).delete(`/groups/${group.id}/members/${guest.id}`);
      expect(again.status).toBe(404);
      expect(again.body).toEqual(NOT_FOUND);
    });

    it('lets a member leave on their own', async () => {
      const res = await as(leaver).delete(`/groups/${group.id}/members/${leaver.id}`);
      expect(res.status).toBe(204);
      expect(ids(await as(owner).get(`/groups/${group.id}/members`))).not.toContain(leaver.id);
    });

    it('refuses a developer removing someone else (403), after finding the member (404 first)', async () => {
      const res = await as(developer).delete(`/groups/${group.id}/members/${owner.id}`);
      expect(res.status).toBe(403);
      expect(res.body).toEqual(FORBIDDEN);
      const missing = await as(developer).delete(`/groups/${group.id}/members/${outsider.id}`);
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual(NOT_FOUND);
      const stranger = await as(outsider).delete(`/groups/${group.id}/members/${developer.id}`);
      expect(stranger.status).toBe(403);
      const anonymous = await anon().delete(`/groups/${group.id}/members/${developer.id}`);
      expect(anonymous.status).toBe(401);
    });

    it("never removes the last owner, not even at their own request or an administrator's", async () => {
      for (const who of [owner.token, t.rootToken]) {
        const res = await client(t, who).delete(`/groups/${group.id}/members/${owner.id}`);
        expect(res.status).toBe(403);
        expect(res.body.message).toMatch(/^403 Forbidden/);
      }
      await addGroupMember(t, group.id, guest.id, 50);
      expect((await as(owner).delete(`/groups/${group.id}/members/${owner.id}`)).status).toBe(204);
      // No longer a member of the public group: it stays visible, without rights.
      expect((await as(owner).put(`/groups/${group.id}`).send({ description: 'x' })).status).toBe(403);
    });
  });

  describe('inherited access', () => {
    let parent: CreatedGroup; // private
    let child: CreatedGroup; // private subgroup, created by root
    let project: { id: number };
    let parentOwner: SeededUser;
    let parentDev: SeededUser;
    let direct: SeededUser; // direct member of the child only

    beforeAll(async () => {
      [parentOwner, parentDev, direct] = await users(3);
      parent = await createGroup(t, { visibility: 'private' }, parentOwner.token);
      child = await createGroup(t, { visibility: 'private', parent_id: parent.id });
      await addGroupMember(t, parent.id, parentDev.id, 30);
      await addGroupMember(t, child.id, direct.id, 20);
      project = await createProject(t, { namespace_id: child.id, visibility: 'private' });
    });

    it('shows the subgroup and its private projects to members of the parent', async () => {
      for (const u of [parentOwner, parentDev]) {
        const res = await as(u).get(`/groups/${child.id}`);
        expect(res.status).toBe(200);
        expect(res.body.projects.map((p: { id: number }) => p.id)).toEqual([project.id]);
        expect((await as(u).get(`/projects/${project.id}`)).status).toBe(200);
        expect(ids(await as(u).get(`/groups/${child.id}/projects`))).toEqual([project.id]);
        expect(ids(await as(u).get('/groups'))).toEqual(expect.arrayContaining([parent.id, child.id]));
      }
      expect((await as(outsider).get(`/groups/${child.id}`)).status).toBe(404);
      expect((await as(outsider).get(`/projects/${project.id}`)).status).toBe(404);
    });

    it('lists only direct members of the subgroup', async () => {
      const res = await as(parentDev).get(`/groups/${child.id}/members`);
      expect(res.status).toBe(200);
      expect(ids(res)).toEqual([1, direct.id]);
    });

    it('lets an owner of the parent administer the subgroup and its members; a developer of the parent may not', async () => {
      const put = await as(parentOwner).put(`/groups/${child.id}`).send({ description: 'by the parent owner' });
      expect(put.status).toBe(200);
      expect(put.body.description).toBe('by the parent owner');
      const add = await as(parentOwner)
        .post(`/groups/${child.id}/members`)
        .send({ user_id: outsider.id, access_level: 10 });
      expect(add.status).toBe(201);
      const change = await as(parentOwner).put(`/groups/${child.id}/members/${outsider.id}`).send({ access_level: 20 });
      expect(change.status).toBe(200);
      expect((await as(parentOwner).delete(`/groups/${child.id}/members/${outsider.id}`)).status).toBe(204);
      const devPut = await as(parentDev).put(`/groups/${child.id}`).send({ description: 'dev' });
      expect(devPut.status).toBe(403);
      const devAdd = await as(parentDev)
        .post(`/groups/${child.id}/members`)
        .send({ user_id: outsider.id, access_level: 10 });
      expect(devAdd.status).toBe(403);
    });

    it('shows the parent to a member of the subgroup only, without rights there or on its projects', async () => {
      const res = await as(direct).get(`/groups/${parent.id}`);
      expect(res.status).toBe(200);
      expect(res.body.projects).toEqual([]);
      expect((await as(direct).put(`/groups/${parent.id}`).send({ description: 'x' })).status).toBe(403);
      const parentProject = await createProject(t, { namespace_id: parent.id, visibility: 'private' });
      expect((await as(direct).get(`/projects/${parentProject.id}`)).status).toBe(404);
      expect((await as(direct).get(`/projects/${project.id}`)).status).toBe(200);
    });

    it('lets an owner of the parent create subgroups below the subgroup', async () => {
      const res = await as(parentOwner)
        .post('/groups')
        .send({ name: 'Deeper', path: `deeper-${unique()}`, parent_id: child.id });
      expect(res.status).toBe(201);
      expect(res.body.full_path).toMatch(new RegExp(`^${parent.path}/${child.path}/deeper-`));
    });
  });

  describe('expired memberships', () => {
    let group: CreatedGroup;
    let sub: CreatedGroup;
    let project: { id: number };
    let expired: SeededUser;
    let current: SeededUser;

    beforeAll(async () => {
      [expired, current] = await users(2);
      group = await createGroup(t, { visibility: 'private' }, owner.token);
      sub = await createGroup(t, { visibility: 'private', parent_id: group.id }, owner.token);
      project = await createProject(t, { namespace_id: sub.id, visibility: 'private' }, owner.token);
      await addGroupMember(t, group.id, expired.id, 50, '2001-01-01');
      await addGroupMember(t, group.id, current.id, 30, '2099-01-01');
    });

    it('grant nothing: the group, its subgroups and projects stay hidden, nothing may be changed', async () => {
      expect((await as(expired).get(`/groups/${group.id}`)).status).toBe(404);
      expect((await as(expired).get(`/groups/${sub.id}`)).status).toBe(404);
      expect((await as(expired).get(`/projects/${project.id}`)).status).toBe(404);
      expect(ids(await as(expired).get('/groups'))).not.toContain(group.id);
      expect((await as(expired).get('/groups').query({ owned: true })).body).toEqual([]);
      expect((await as(expired).put(`/groups/${group.id}`).send({ description: 'x' })).status).toBe(404);
      expect(
        (await as(expired).post(`/groups/${group.id}/members`).send({ user_id: outsider.id, access_level: 10 })).status,
      ).toBe(404);
    });

    it('while a membership that has not expired yet does', async () => {
      expect((await as(current).get(`/groups/${sub.id}`)).status).toBe(200);
      expect((await as(current).get(`/projects/${project.id}`)).status).toBe(200);
    });

    it('are still listed, with their date, until removed', async () => {
      const one = await as(owner).get(`/groups/${group.id}/members/${expired.id}`);
      expect(one.status).toBe(200);
      expect(one.body).toMatchObject({ access_level: 50, expires_at: '2001-01-01' });
      const renewed = await as(owner)
        .put(`/groups/${group.id}/members/${expired.id}`)
        .send({ access_level: 30, expires_at: '' });
      expect(renewed.status).toBe(200);
      expect((await as(expired).get(`/groups/${group.id}`)).status).toBe(200);
    });
  });

  describe('custom attributes', () => {
    let group: CreatedGroup;

    beforeAll(async () => {
      group = await createGroup(t, { visibility: 'public' }, owner.token);
    });

    it('lets administrators set, read, list and delete them', async () => {
      const set = await admin().put(`/groups/${group.id}/custom_attributes/zone`).send({ value: 'eu' });
      expect(set.status).toBe(200);
      expectShape(set.body, 'custom-attribute');
      expect(set.body).toEqual({ key: 'zone', value: 'eu' });
      await admin().put(`/groups/${group.id}/custom_attributes/alpha`).type('form').send({ value: 'first' });
      const changed = await admin()
        .put(`/groups/${encodeURIComponent(group.full_path)}/custom_attributes/zone`)
        .send({ value: 'us' });
      expect(changed.body).toEqual({ key: 'zone', value: 'us' });

      const list = await admin().get(`/groups/${group.id}/custom_attributes`);
      expect(list.status).toBe(200);
      expect(list.body).toEqual([
        { key: 'alpha', value: 'first' },
        { key: 'zone', value: 'us' },
      ]);
      const one = await admin().get(`/groups/${group.id}/custom_attributes/zone`);
      expect(one.status).toBe(200);
      expect(one.body).toEqual({ key: 'zone', value: 'us' });

      const del = await admin().delete(`/groups/${group.id}/custom_attributes/zone`);
      expect(del.status).toBe(204);
      expect(del.text).toBe('');
      const gone = await admin().get(`/groups/${group.id}/custom_attributes/zone`);
      expect(gone.status).toBe(404);
      expect(gone.body).toEqual(NOT_FOUND);
      expect((await admin().delete(`/groups/${group.id}/custom_attributes/zone`)).status).toBe(404);
      expect((await admin().get(`/groups/${group.id}/custom_attributes`)).body).toEqual([
        { key: 'alpha', value: 'first' },
      ]);
    });

    it('filters GET /groups', async () => {
      const s = unique();
      await admin().put(`/groups/${group.id}/custom_attributes/marker`).send({ value: s });
      const res = await admin().get(`/groups?custom_attributes[marker]=${s}`);
      expect(res.body.map((g: { id: number }) => g.id)).toEqual([group.id]);
    });

    it('wants a value (400) and a known group (404)', async () => {
      const res = await admin().put(`/groups/${group.id}/custom_attributes/zone`).send({});
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'value is missing' });
      const unknown = await admin().get('/groups/99999999/custom_attributes');
      expect(unknown.status).toBe(404);
      expect(unknown.body).toEqual(GROUP_NOT_FOUND);
    });

    it('is for administrators only: owners get 403; anonymous readers 403 and writers 401', async () => {
      for (const [method, path] of [
        ['get', `/groups/${group.id}/custom_attributes`],
        ['get', `/groups/${group.id}/custom_attributes/alpha`],
        ['put', `/groups/${group.id}/custom_attributes/alpha`],
        ['delete', `/groups/${group.id}/custom_attributes/alpha`],
      ] as const) {
        const res = await as(owner)[method](path).send({ value: 'owner' });
        expect(res.status).toBe(403);
        expect(res.body).toEqual(FORBIDDEN);
        const anonymous = await anon()[method](path).send({ value: 'anon' });
        expect(anonymous.status).toBe(method === 'get' ? 403 : 401);
      }
      expect((await admin().get(`/groups/${group.id}/custom_attributes/alpha`)).body).toEqual({
        key: 'alpha',
        value: 'first',
      });
    });

    it('go with the group', async () => {
      const g = await createGroup(t, {}, owner.token);
      await admin().put(`/groups/${g.id}/custom_attributes/doomed`).send({ value: 'yes' });
      expect((await as(owner).delete(`/groups/${g.id}`)).status).toBe(204);
      expect((await admin().get('/groups?custom_attributes[doomed]=yes')).body).toEqual([]);
    });
  });
});
