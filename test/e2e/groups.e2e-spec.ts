import type { Response } from 'supertest';
import { expectShape } from '../contract/shape';
import { addGroupMember, client, createGroup, createProject, unique, type CreatedGroup } from '../support/groups';
import { expectProject } from '../support/project-shape';
import { createToken, createUser, type SeededUser } from '../support/seed';
import { countStatements, startTestApp, type TestApp } from '../support/test-app';

const TAKEN = 'Failed to save group {:path=>["has already been taken"]}';
const NOT_FOUND = { message: '404 Group Not Found' };
const FORBIDDEN = { message: '403 Forbidden' };
const UNAUTHORIZED = { message: '401 Unauthorized' };

describe('groups API', () => {
  let t: TestApp;
  let alice: SeededUser; // creates and owns groups
  let bob: SeededUser; // signed in, member of nothing unless a test says so

  const admin = () => client(t, t.rootToken);
  const as = (u: SeededUser) => client(t, u.token);
  const anon = () => client(t);
  const ids = (res: Response) => (res.body as { id: number }[]).map((g) => g.id);
  const sortedIds = (res: Response) => ids(res).sort((a, b) => a - b);
  const idsOf = (...groups: { id: number }[]) => groups.map((g) => g.id).sort((a, b) => a - b);
  const eventCount = async () => Number((await t.db.query('select count(*)::int as n from events'))[0].n);
  const expectEachShape = (res: Response, shape: string) => {
    expect(Array.isArray(res.body)).toBe(true);
    for (const g of res.body) expectShape(g, shape);
  };

  beforeAll(async () => {
    t = await startTestApp();
    [alice, bob] = await Promise.all([createUser(t, { name: 'Alice Owner' }), createUser(t, { name: 'Bob Outsider' })]);
    // A token's first use records today's activity (an event); do it here, not inside a counted write.
    await Promise.all([as(alice).get('/user'), as(bob).get('/user')]);
  });
  afterAll(async () => {
    await t?.close();
  });

  describe('POST /groups', () => {
    it('creates a group: 201 with the GroupDetail, the creator as its owner', async () => {
      const s = unique();
      const res = await as(alice)
        .post('/groups')
        .send({
          name: `Alpha ${s}`,
          path: `alpha-${s}`,
          description: 'the first',
          visibility: 'internal',
          lfs_enabled: false,
          request_access_enabled: true,
        });
      expect(res.status).toBe(201);
      expect(res.headers['content-type']).toBe('application/json');
      expectShape(res.body, 'group-detail');
      expect(res.body).toEqual({
        id: expect.any(Number),
        name: `Alpha ${s}`,
        path: `alpha-${s}`,
        description: 'the first',
        visibility: 'internal',
        lfs_enabled: false,
        avatar_url: null,
        web_url: `http://lode.test/groups/alpha-${s}`,
        request_access_enabled: true,
        full_name: `Alpha ${s}`,
        full_path: `alpha-${s}`,
        parent_id: null,
        share_with_group_lock: false,
        require_two_factor_authentication: false,
        two_factor_grace_period: 48,
        project_creation_level: 'maintainer',
        auto_devops_enabled: false,
        subgroup_creation_level: 'owner',
        emails_disabled: false,
        mentions_disabled: false,
        default_branch_protection: 2,
        prevent_forking_outside_group: false,
        shared_with_groups: [],
        projects: [],
        shared_projects: [],
      });
      const members = await as(alice).get(`/groups/${res.body.id}/members`);
      expect(members.status).toBe(200);
      expect(members.body).toHaveLength(1);
      expectShape(members.body[0], 'member');
      expect(members.body[0]).toEqual({
        id: alice.id,
        name: 'Alice Owner',
        username: alice.username,
        state: 'active',
        avatar_url: expect.any(String),
        web_url: `http://lode.test/${alice.username}`,
        access_level: 50,
        expires_at: null,
      });
    });

    it('takes form fields and applies the defaults: private, LFS on, no access requests, empty description', async () => {
      const s = unique();
      const res = await as(alice)
        .post('/groups')
        .type('form')
        .send({ name: `Beta ${s}`, path: `beta-${s}` });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        visibility: 'private',
        lfs_enabled: true,
        request_access_enabled: false,
        description: '',
        parent_id: null,
      });
    });

    it.each([
      [{ path: 'no-name-x' }, 'name is missing'],
      [{ name: 'No path' }, 'path is missing'],
      [{}, 'name is missing, path is missing'],
      [{ name: 'Bad vis', path: 'bad-vis-x', visibility: 'secret' }, 'visibility does not have a valid value'],
      [{ name: 'Bad parent', path: 'bad-parent-x', parent_id: 'abc' }, 'parent_id is invalid'],
      [{ name: 'Bad lfs', path: 'bad-lfs-x', lfs_enabled: 'maybe' }, 'lfs_enabled is invalid'],
    ])('refuses bad parameters %j: 400 {"error": "%s"}', async (body, error) => {
      const before = await eventCount();
      const res = await as(alice).post('/groups').send(body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error });
      expect(await eventCount()).toBe(before);
    });

    it("refuses a taken path, whatever its case, with GitLab 10.x's sentence", async () => {
      const g = await createGroup(t, {}, alice.token);
      const before = await eventCount();
      const res = await as(bob)
        .post('/groups')
        .send({ name: `Other ${unique()}`, path: g.path.toUpperCase() });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ message: TAKEN });
      expect(await eventCount()).toBe(before);
    });

    it('refuses a path taken by a username: users and groups share the top level', async () => {
      const res = await as(alice)
        .post('/groups')
        .send({ name: `User clash ${unique()}`, path: bob.username });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ message: TAKEN });
      const root = await as(alice).post('/groups').send({ name: 'Root clash', path: 'ROOT' });
      expect(root.status).toBe(400);
      expect(root.body).toEqual({ message: TAKEN });
    });

    it.each([
      ['api', 'api is a reserved name'],
      ['groups', 'groups is a reserved name'],
      ['-bad', "can contain only letters, digits, '_', '-' and '.'"],
      ['x.git', "can contain only letters, digits, '_', '-' and '.'"],
      ['bad/slash', "can contain only letters, digits, '_', '-' and '.'"],
    ])('refuses the path %s: 400', async (path, text) => {
      const before = await eventCount();
      const res = await as(alice)
        .post('/groups')
        .send({ name: `Rules ${unique()}`, path });
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/^Failed to save group \{:path=>\[".*"\]\}$/);
      expect(res.body.message).toContain(text);
      expect(await eventCount()).toBe(before);
    });

    it('refuses an empty name', async () => {
      const res = await as(alice)
        .post('/groups')
        .send({ name: ' ', path: `blank-${unique()}` });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ message: `Failed to save group {:name=>["can't be blank"]}` });
    });

    it('wants the api scope: a read_user token gets 403 insufficient_scope, on reads as well', async () => {
      const token = await createToken(t, alice.id, ['read_user']);
      const res = await client(t, token)
        .post('/groups')
        .send({ name: `Scoped ${unique()}`, path: `scoped-${unique()}` });
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ error: 'insufficient_scope' });
      const read = await client(t, token).get('/groups');
      expect(read.status).toBe(403);
      expect(read.body).toMatchObject({ error: 'insufficient_scope' });
    });

    it('refuses users who may not create groups: 403; anonymous callers: 401', async () => {
      const limited = await createUser(t, { can_create_group: false });
      const res = await as(limited)
        .post('/groups')
        .send({ name: `Nope ${unique()}`, path: `nope-${unique()}` });
      expect(res.status).toBe(403);
      expect(res.body).toEqual(FORBIDDEN);
      const anonymous = await anon()
        .post('/groups')
        .send({ name: `Anon ${unique()}`, path: `anon-${unique()}` });
      expect(anonymous.status).toBe(401);
      expect(anonymous.body).toEqual(UNAUTHORIZED);
    });

    describe('nested with parent_id', () => {
      let parent: CreatedGroup;
      beforeAll(async () => {
        parent = await createGroup(t, { name: `Parent ${unique()}`, visibility: 'public' }, alice.token);
      });

      it('creates a subgroup for the owner of the parent: full_path, full_name, web_url', async () => {
        const s = unique();
        const res = await as(alice)
          .post('/groups')
          .send({ name: `Child ${s}`, path: `child-${s}`, parent_id: parent.id, visibility: 'internal' });
        expect(res.status).toBe(201);
        expectShape(res.body, 'group-detail');
        expect(res.body).toMatchObject({
          parent_id: parent.id,
          path: `child-${s}`,
          full_path: `${parent.path}/child-${s}`,
          full_name: `${parent.name} / Child ${s}`,
          web_url: `http://lode.test/groups/${parent.path}/child-${s}`,
          visibility: 'internal',
        });
        const grand = await as(alice)
          .post('/groups')
          .send({ name: 'Grand', path: 'grand', parent_id: res.body.id, visibility: 'private' });
        expect(grand.status).toBe(201);
        expect(grand.body).toMatchObject({
          full_path: `${parent.path}/child-${s}/grand`,
          full_name: `${parent.name} / Child ${s} / Grand`,
        });
      });

      it('allows top-level reserved names below the top level, and the same path under different parents', async () => {
        const res = await as(alice).post('/groups').send({ name: 'Api', path: 'api', parent_id: parent.id });
        expect(res.status).toBe(201);
        expect(res.body.full_path).toBe(`${parent.path}/api`);
        const other = await createGroup(t, {}, alice.token);
        const again = await as(alice).post('/groups').send({ name: 'Api', path: 'api', parent_id: other.id });
        expect(again.status).toBe(201);
        const twice = await as(alice).post('/groups').send({ name: 'Api 2', path: 'API', parent_id: parent.id });
        expect(twice.status).toBe(400);
        expect(twice.body).toEqual({ message: TAKEN });
      });

      it('refuses anyone but an owner of the parent: 403', async () => {
        const dev = await createUser(t);
        await addGroupMember(t, parent.id, dev.id, 40);
        for (const u of [bob, dev]) {
          const res = await as(u)
            .post('/groups')
            .send({ name: `Sneaky ${unique()}`, path: `sneaky-${unique()}`, parent_id: parent.id });
          expect(res.status).toBe(403);
          expect(res.body).toEqual(FORBIDDEN);
        }
      });

      it('answers 404 for an unknown parent or one the caller cannot see', async () => {
        const unknown = await as(alice)
          .post('/groups')
          .send({ name: 'Orphan', path: `orphan-${unique()}`, parent_id: 99999999 });
        expect(unknown.status).toBe(404);
        expect(unknown.body).toEqual(NOT_FOUND);
        const hidden = await createGroup(t, { visibility: 'private' }, alice.token);
        const res = await as(bob)
          .post('/groups')
          .send({ name: 'Orphan', path: `orphan-${unique()}`, parent_id: hidden.id });
        expect(res.status).toBe(404);
        expect(res.body).toEqual(NOT_FOUND);
      });

      it('refuses a subgroup more open than its parent: 400', async () => {
        const priv = await createGroup(t, { visibility: 'private' }, alice.token);
        const res = await as(alice)
          .post('/groups')
          .send({ name: 'Open', path: `open-${unique()}`, parent_id: priv.id, visibility: 'public' });
        expect(res.status).toBe(400);
        expect(res.body).toEqual({
          message:
            'Failed to save group {:visibility_level=>["public is not allowed since the parent group has a private visibility."]}',
        });
        const sub = await as(alice).get(`/groups/${priv.id}/subgroups`);
        expect(sub.body).toEqual([]);
      });

      it('lets administrators create subgroups anywhere', async () => {
        const res = await admin()
          .post('/groups')
          .send({ name: `By root ${unique()}`, path: `by-root-${unique()}`, parent_id: parent.id });
        expect(res.status).toBe(201);
        expect(res.body.parent_id).toBe(parent.id);
      });
    });
  });

  describe('GET /groups', () => {
    let s: string;
    let pub: CreatedGroup;
    let int: CreatedGroup;
    let priv: CreatedGroup;
    let mine: CreatedGroup; // private, created (owned) by carol
    let mineSub: CreatedGroup; // private subgroup of mine, created by root: carol is an inherited member
    let top: CreatedGroup; // private, carol is only a member of its child
    let topChild: CreatedGroup;
    let carol: SeededUser;

    beforeAll(async () => {
      s = unique();
      carol = await createUser(t);
      pub = await createGroup(t, { name: `Lst ${s} Delta`, path: `lst-${s}-a`, visibility: 'public' });
      int = await createGroup(t, { name: `Lst ${s} Charlie`, path: `lst-${s}-b`, visibility: 'internal' });
      priv = await createGroup(t, { name: `Lst ${s} Bravo`, path: `lst-${s}-c`, visibility: 'private' });
      mine = await createGroup(t, { name: `Lst ${s} Alpha`, path: `lst-${s}-d`, visibility: 'private' }, carol.token);
      mineSub = await createGroup(t, {
        name: `Lst ${s} Echo`,
        path: `lst-${s}-e`,
        visibility: 'private',
        parent_id: mine.id,
      });
      top = await createGroup(t, { name: `Lst ${s} Foxtrot`, path: `lst-${s}-f`, visibility: 'private' });
      topChild = await createGroup(t, {
        name: `Lst ${s} Golf`,
        path: `lst-${s}-g`,
        visibility: 'private',
        parent_id: top.id,
      });
      await addGroupMember(t, topChild.id, carol.id, 30);
    });

    it('shows anonymous callers the public groups only', async () => {
      const res = await anon()
        .get('/groups')
        .query({ search: `lst ${s}` });
      expect(res.status).toBe(200);
      expectEachShape(res, 'group');
      expect(ids(res)).toEqual([pub.id]);
      expect(res.headers['x-total']).toBe('1');
    });

    it('shows administrators every group', async () => {
      const res = await admin()
        .get('/groups')
        .query({ search: `lst ${s}` });
      expect(res.status).toBe(200);
      expectEachShape(res, 'group');
      expect(sortedIds(res)).toEqual(idsOf(pub, int, priv, mine, mineSub, top, topChild));
    });

    it('shows a user the groups they belong to, with their ancestors and descendants', async () => {
      const res = await as(carol)
        .get('/groups')
        .query({ search: `lst ${s}` });
      expect(res.status).toBe(200);
      expectEachShape(res, 'group');
      expect(sortedIds(res)).toEqual(idsOf(mine, mineSub, top, topChild));
      const none = await as(bob)
        .get('/groups')
        .query({ search: `lst ${s}` });
      expect(none.status).toBe(200);
      expect(none.body).toEqual([]);
      expect(none.headers['x-total']).toBe('0');
    });

    it('adds every public and internal group with all_available=true', async () => {
      const res = await as(carol)
        .get('/groups')
        .query({ search: `lst ${s}`, all_available: true });
      expect(sortedIds(res)).toEqual(idsOf(pub, int, mine, mineSub, top, topChild));
      const bobs = await as(bob)
        .get('/groups')
        .query({ search: `lst ${s}`, all_available: 'true' });
      expect(sortedIds(bobs)).toEqual(idsOf(pub, int));
      const anonymous = await anon()
        .get('/groups')
        .query({ search: `lst ${s}`, all_available: true });
      expect(ids(anonymous)).toEqual([pub.id]);
    });

    it('hides internal groups from external users', async () => {
      const ext = await createUser(t, { external: true });
      const res = await as(ext)
        .get('/groups')
        .query({ search: `lst ${s}`, all_available: true });
      expect(res.status).toBe(200);
      expect(ids(res)).toEqual([pub.id]);
      const single = await as(ext).get(`/groups/${int.id}`);
      expect(single.status).toBe(404);
      expect(single.body).toEqual(NOT_FOUND);
    });

    it('keeps the groups the caller owns directly with owned=true', async () => {
      const res = await as(carol)
        .get('/groups')
        .query({ search: `lst ${s}`, owned: true });
      expect(res.status).toBe(200);
      expect(ids(res)).toEqual([mine.id]);
      const rootOwned = await admin()
        .get('/groups')
        .query({ search: `lst ${s}`, owned: true });
      expect(sortedIds(rootOwned)).toEqual(idsOf(pub, int, priv, mineSub, top, topChild));
    });

    it('searches name or path, case-insensitively, with LIKE wildcards taken literally', async () => {
      const byName = await admin()
        .get('/groups')
        .query({ search: `LST ${s} bravo` });
      expect(ids(byName)).toEqual([priv.id]);
      const byPath = await admin()
        .get('/groups')
        .query({ search: `lst-${s}-c` });
      expect(ids(byPath)).toEqual([priv.id]);
      const wildcard = await admin()
        .get('/groups')
        .query({ search: `lst_${s}%` });
      expect(wildcard.body).toEqual([]);
    });

    it('orders by name (default) or path, ascending (default) or descending', async () => {
      const byName = await admin()
        .get('/groups')
        .query({ search: `lst ${s}` });
      expect(ids(byName)).toEqual([mine, priv, int, pub, mineSub, top, topChild].map((g) => g.id));
      const byNameDesc = await admin()
        .get('/groups')
        .query({ search: `lst ${s}`, sort: 'desc' });
      expect(ids(byNameDesc)).toEqual([mine, priv, int, pub, mineSub, top, topChild].map((g) => g.id).reverse());
      const byPath = await admin()
        .get('/groups')
        .query({ search: `lst ${s}`, order_by: 'path' });
      expect(ids(byPath)).toEqual([pub, int, priv, mine, mineSub, top, topChild].map((g) => g.id));
      const byPathDesc = await admin()
        .get('/groups')
        .query({ search: `lst ${s}`, order_by: 'path', sort: 'desc' });
      expect(ids(byPathDesc)).toEqual([topChild, top, mineSub, mine, priv, int, pub].map((g) => g.id));
    });

    it.each([
      [{ order_by: 'id' }, 'order_by does not have a valid value'],
      [{ order_by: 'created_at' }, 'order_by does not have a valid value'],
      [{ sort: 'up' }, 'sort does not have a valid value'],
      [{ owned: 'perhaps' }, 'owned is invalid'],
      [{ all_available: 'perhaps' }, 'all_available is invalid'],
      [{ 'skip_groups[]': 'x' }, 'skip_groups is invalid'],
      [{ per_page: 'many' }, 'per_page is invalid'],
    ])('refuses %j: 400', async (query, error) => {
      const res = await admin().get('/groups').query(query);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error });
    });

    it('skips the groups given in skip_groups[]', async () => {
      const res = await admin().get(`/groups?search=lst%20${s}&skip_groups[]=${priv.id}&skip_groups[]=${mine.id}`);
      expect(res.status).toBe(200);
      expect(sortedIds(res)).toEqual(idsOf(pub, int, mineSub, top, topChild));
      const one = await admin().get(`/groups?search=lst%20${s}&skip_groups[]=${pub.id}`);
      expect(ids(one)).not.toContain(pub.id);
    });

    it('adds statistics for administrators only', async () => {
      const res = await admin()
        .get('/groups')
        .query({ search: `lst ${s}`, statistics: true });
      expect(res.status).toBe(200);
      expect(res.body).toHaveLength(7);
      for (const g of res.body) {
        expect(g.statistics).toEqual({
          storage_size: 0,
          repository_size: 0,
          lfs_objects_size: 0,
          job_artifacts_size: 0,
        });
        const { statistics: _, ...rest } = g;
        expectShape(rest, 'group');
      }
      const user = await as(carol)
        .get('/groups')
        .query({ search: `lst ${s}`, statistics: true });
      expect(user.status).toBe(200);
      expect(user.body.length).toBeGreaterThan(0);
      expectEachShape(user, 'group');
    });

    it('filters by custom attributes for administrators, and ignores the filter for others', async () => {
      const set = await admin()
        .put(`/groups/${top.id}/custom_attributes/tier`)
        .send({ value: `gold-${s}` });
      expect(set.status).toBe(200);
      await admin()
        .put(`/groups/${mine.id}/custom_attributes/tier`)
        .send({ value: `silver-${s}` });
      const res = await admin().get(`/groups?custom_attributes[tier]=gold-${s}`);
      expect(res.status).toBe(200);
      expect(ids(res)).toEqual([top.id]);
      const two = await admin().get(`/groups?custom_attributes[tier]=gold-${s}&custom_attributes[other]=x`);
      expect(two.body).toEqual([]);
      const user = await as(carol).get(`/groups?search=lst%20${s}&custom_attributes[tier]=gold-${s}`);
      expect(sortedIds(user)).toEqual(idsOf(mine, mineSub, top, topChild));
    });

    it('paginates with GitLab headers and clamps per_page to 100', async () => {
      const res = await admin()
        .get('/groups')
        .query({ search: `lst ${s}`, per_page: 3, page: 2 });
      expect(res.status).toBe(200);
      expect(ids(res)).toEqual([pub, mineSub, top].map((g) => g.id));
      expect(res.headers).toMatchObject({
        'x-total': '7',
        'x-total-pages': '3',
        'x-per-page': '3',
        'x-page': '2',
        'x-next-page': '3',
        'x-prev-page': '1',
      });
      const link = res.headers.link as string;
      expect(link).toContain('rel="prev"');
      expect(link).toContain('rel="next"');
      expect(link).toContain('rel="first"');
      expect(link).toContain('rel="last"');
      expect(link).toContain(`search=lst+${s}`);
      const last = await admin()
        .get('/groups')
        .query({ search: `lst ${s}`, per_page: 3, page: 3 });
      expect(ids(last)).toEqual([topChild.id]);
      expect(last.headers['x-next-page']).toBe('');
      const clamped = await admin().get('/groups').query({ per_page: 1000 });
      expect(clamped.status).toBe(200);
      expect(clamped.headers['x-per-page']).toBe('100');
      const fallback = await admin().get('/groups');
      expect(fallback.headers['x-per-page']).toBe('20');
    });
  });

  describe('GET /groups statement count', () => {
    let counter: ReturnType<typeof countStatements>;
    let member: SeededUser;
    let parent: CreatedGroup;

    beforeAll(async () => {
      member = await createUser(t);
      parent = await createGroup(t, { visibility: 'internal' });
      await addGroupMember(t, parent.id, member.id, 30);
      for (let i = 0; i < 32; i += 8) {
        await Promise.all(
          Array.from({ length: 8 }, (_, j) =>
            createGroup(t, {
              visibility: j % 3 === 0 ? 'private' : 'internal',
              ...(j % 2 ? { parent_id: parent.id } : {}),
            }),
          ),
        );
      }
      await Promise.all(
        Array.from({ length: 3 }, (_, i) =>
          createProject(t, { namespace_id: parent.id, visibility: i ? 'private' : 'internal' }),
        ),
      );
      // A token's first use records today's activity; keep that out of the measured requests.
      await as(member).get('/user');
      await admin().get('/user');
      counter = countStatements();
    });
    afterAll(() => counter.restore());

    it.each<[string, () => string | undefined, () => string, number]>([
      ['an administrator with statistics', () => t.rootToken, () => '/groups?per_page=100&statistics=true', 30],
      ['a member', () => member.token, () => '/groups?per_page=100', 17],
      ['a member with all_available', () => member.token, () => '/groups?per_page=100&all_available=true', 30],
      ['anonymous', () => undefined, () => '/groups?per_page=100', 0],
      ['a member, subgroups', () => member.token, () => `/groups/${parent.id}/subgroups?per_page=100`, 16],
    ])('stays within 5 statements for a page of 100 as %s', async (_, token, path, atLeast) => {
      const id = `stmt-${unique()}`;
      const res = await client(t, token()).get(path()).set('X-Request-Id', id);
      expect(res.status).toBe(200);
      expect(res.body.length).toBeGreaterThanOrEqual(atLeast);
      const n = counter.forRequest(id);
      expect(n).toBeGreaterThan(0);
      expect(n).toBeLessThanOrEqual(5);
    });

    // Token, group, the groups it is shared with (12.2+), its projects (no count: all are shown), shared
    // projects, their share links: six.
    it('stays within 6 statements for GET /groups/:id with its projects', async () => {
      const id = `stmt-${unique()}`;
      const res = await client(t, member.token).get(`/groups/${parent.id}`).set('X-Request-Id', id);
      expect(res.status).toBe(200);
      expect(res.body.projects).toHaveLength(3);
      const n = counter.forRequest(id);
      expect(n).toBeGreaterThan(0);
      expect(n).toBeLessThanOrEqual(6);
    });
  });

  describe('GET /groups/:id', () => {
    let group: CreatedGroup; // public, owned by alice
    let child: CreatedGroup; // internal subgroup
    let projects: Record<'pub' | 'int' | 'priv' | 'archived', { id: number }>;
    let elsewhere: CreatedGroup; // private, alice owns: its project is shared with `group`
    let sharedPriv: { id: number };
    let sharedPub: { id: number };
    let dev: SeededUser;

    beforeAll(async () => {
      dev = await createUser(t);
      group = await createGroup(t, { name: `Detail ${unique()}`, visibility: 'public' }, alice.token);
      child = await createGroup(
        t,
        { name: 'Kid', path: 'kid', visibility: 'internal', parent_id: group.id },
        alice.token,
      );
      await addGroupMember(t, group.id, dev.id, 30);
      projects = {
        pub: await createProject(t, { namespace_id: group.id, visibility: 'public' }, alice.token),
        int: await createProject(t, { namespace_id: group.id, visibility: 'internal' }, alice.token),
        priv: await createProject(t, { namespace_id: group.id, visibility: 'private' }, alice.token),
        archived: await createProject(t, { namespace_id: group.id, visibility: 'public' }, alice.token),
      };
      expect((await as(alice).post(`/projects/${projects.archived.id}/archive`)).status).toBe(201);
      elsewhere = await createGroup(t, { visibility: 'public' }, alice.token);
      sharedPriv = await createProject(t, { namespace_id: elsewhere.id, visibility: 'private' }, alice.token);
      sharedPub = await createProject(t, { namespace_id: elsewhere.id, visibility: 'public' }, alice.token);
      for (const p of [sharedPriv, sharedPub]) {
        const share = await as(alice).post(`/projects/${p.id}/share`).send({ group_id: group.id, group_access: 20 });
        expect(share.status).toBe(201);
      }
    });

    const projectIds = (list: { id: number }[]) => list.map((p) => p.id).sort((a, b) => a - b);

    it('answers by id and by URL-encoded full path, case-insensitively', async () => {
      const byId = await as(alice).get(`/groups/${child.id}`);
      expect(byId.status).toBe(200);
      expectShape(byId.body, 'group-detail');
      expect(byId.body).toMatchObject({
        id: child.id,
        full_path: `${group.path}/kid`,
        full_name: `${group.name} / Kid`,
        parent_id: group.id,
      });
      const byPath = await as(alice).get(`/groups/${encodeURIComponent(`${group.path}/kid`)}`);
      expect(byPath.status).toBe(200);
      expect(byPath.body).toEqual(byId.body);
      const upper = await as(alice).get(`/groups/${encodeURIComponent(`${group.path}/KID`.toUpperCase())}`);
      expect(upper.status).toBe(200);
      expect(upper.body.id).toBe(child.id);
      const top = await anon().get(`/groups/${group.path}`);
      expect(top.status).toBe(200);
      expect(top.body.id).toBe(group.id);
    });

    it('answers 404 for unknown groups and for personal namespaces', async () => {
      for (const id of [
        '99999999',
        '99999999999999999999',
        'no-such-group',
        encodeURIComponent(`${group.path}/nope`),
        alice.username,
      ]) {
        const res = await as(alice).get(`/groups/${id}`);
        expect(res.status).toBe(404);
        expect(res.body).toEqual(NOT_FOUND);
      }
    });

    it('hides private groups from non-members and internal ones from anonymous callers: 404', async () => {
      const priv = await createGroup(t, { visibility: 'private' }, alice.token);
      for (const [who, id] of [
        [bob, priv.id],
        [undefined, priv.id],
        [undefined, child.id],
      ] as const) {
        const res = await client(t, who?.token).get(`/groups/${id}`);
        expect(res.status).toBe(404);
        expect(res.body).toEqual(NOT_FOUND);
      }
    });

    it('embeds only the projects the caller may see, archived ones included', async () => {
      const anonymous = await anon().get(`/groups/${group.id}`);
      expect(anonymous.status).toBe(200);
      expect(projectIds(anonymous.body.projects)).toEqual(projectIds([projects.pub, projects.archived]));
      const outsider = await as(bob).get(`/groups/${group.id}`);
      expect(projectIds(outsider.body.projects)).toEqual(projectIds([projects.pub, projects.int, projects.archived]));
      const member = await as(dev).get(`/groups/${group.id}`);
      expect(projectIds(member.body.projects)).toEqual(projectIds(Object.values(projects)));
      const root = await admin().get(`/groups/${group.id}`);
      expect(projectIds(root.body.projects)).toEqual(projectIds(Object.values(projects)));
    });

    it('embeds the projects shared with the group that the caller may see', async () => {
      const anonymous = await anon().get(`/groups/${group.id}`);
      expect(projectIds(anonymous.body.shared_projects)).toEqual([sharedPub.id]);
      // The share gives the group's members access to the private project.
      const member = await as(dev).get(`/groups/${group.id}`);
      expect(projectIds(member.body.shared_projects)).toEqual(projectIds([sharedPriv, sharedPub]));
      const shared = member.body.shared_projects.find((p: { id: number }) => p.id === sharedPriv.id);
      expect(shared.shared_with_groups).toEqual([
        { group_id: group.id, group_name: group.name, group_access_level: 20 },
      ]);
    });

    // A share gives the lesser of the share's level and the caller's level in the group; with no level in
    // the group that must be nothing (PostgreSQL's LEAST ignores NULL, which once leaked every shared project).
    it('keeps private shared projects from signed-in non-members', async () => {
      const outsider = await as(bob).get(`/groups/${group.id}`);
      expect(projectIds(outsider.body.shared_projects)).toEqual([sharedPub.id]);
      expect((await as(bob).get(`/projects/${sharedPriv.id}`)).status).toBe(404);
    });

    it("embeds GitLab's plain Project entity: no permissions, no runners token, for anyone", async () => {
      for (const token of [undefined, alice.token, t.rootToken]) {
        const res = await client(t, token).get(`/groups/${group.id}`);
        const p = res.body.projects.find((x: { id: number }) => x.id === projects.pub.id);
        expect(p).toMatchObject({
          id: projects.pub.id,
          visibility: 'public',
          archived: false,
          namespace: expect.objectContaining({ id: group.id, kind: 'group', full_path: group.path }),
        });
        expect(p.path_with_namespace).toMatch(new RegExp(`^${group.path}/`));
        expect(p).not.toHaveProperty('permissions');
        expect(p).not.toHaveProperty('runners_token');
        expect(p).not.toHaveProperty('import_error');
        for (const x of [...res.body.projects, ...res.body.shared_projects])
          expectProject(x, 'project-in-group', { owner: false, adminFields: false });
      }
    });
  });

  describe('PUT /groups/:id', () => {
    let group: CreatedGroup;
    let dev: SeededUser;

    beforeAll(async () => {
      dev = await createUser(t);
      group = await createGroup(t, { visibility: 'internal' }, alice.token);
      await addGroupMember(t, group.id, dev.id, 40);
    });

    it('lets the owner change the settings: 200 with projects, without shared_projects', async () => {
      const project = await createProject(t, { namespace_id: group.id, visibility: 'internal' }, alice.token);
      const res = await as(alice).put(`/groups/${group.id}`).send({
        name: 'Renamed Group',
        description: 'changed',
        lfs_enabled: false,
        request_access_enabled: 'true',
        visibility: 'public',
      });
      expect(res.status).toBe(200);
      expectShape({ ...res.body, shared_projects: [] }, 'group-detail');
      // GitLab's API documentation: shared_projects appears in the single-group answer only (GitLab's code
      // sends the whole GroupDetail).
      expect(res.body).not.toHaveProperty('shared_projects');
      expect(res.body).toMatchObject({
        id: group.id,
        name: 'Renamed Group',
        full_name: 'Renamed Group',
        description: 'changed',
        lfs_enabled: false,
        request_access_enabled: true,
        visibility: 'public',
        path: group.path,
      });
      expect(res.body.projects.map((p: { id: number }) => p.id)).toEqual([project.id]);
      const again = await as(bob).get(`/groups/${group.id}`);
      expect(again.body).toMatchObject({ name: 'Renamed Group', visibility: 'public' });
    });

    it('lets administrators change any group', async () => {
      const res = await admin().put(`/groups/${group.id}`).send({ description: 'by root' });
      expect(res.status).toBe(200);
      expect(res.body.description).toBe('by root');
    });

    it('refuses members below owner (403), hides private groups from others (404), and wants a token (401)', async () => {
      const dev403 = await as(dev).put(`/groups/${group.id}`).send({ description: 'dev' });
      expect(dev403.status).toBe(403);
      expect(dev403.body).toEqual(FORBIDDEN);
      const bob403 = await as(bob).put(`/groups/${group.id}`).send({ description: 'bob' });
      expect(bob403.status).toBe(403);
      const priv = await createGroup(t, { visibility: 'private' }, alice.token);
      const hidden = await as(bob).put(`/groups/${priv.id}`).send({ description: 'bob' });
      expect(hidden.status).toBe(404);
      expect(hidden.body).toEqual(NOT_FOUND);
      const anonymous = await anon().put(`/groups/${group.id}`).send({ description: 'anon' });
      expect(anonymous.status).toBe(401);
      expect(anonymous.body).toEqual(UNAUTHORIZED);
      const unknown = await admin().put('/groups/99999999').send({ description: 'x' });
      expect(unknown.status).toBe(404);
      expect(unknown.body).toEqual(NOT_FOUND);
    });

    it('has no at_least_one_of (GitLab 13.x+): nothing Lode keeps is 200 with the group unchanged; a bad value is 400', async () => {
      const before = await eventCount();
      const res = await as(alice).put(`/groups/${group.id}`).send({});
      expect(res.status).toBe(200);
      expect(res.body.id).toBe(group.id);
      const unknownOnly = await as(alice).put(`/groups/${group.id}`).send({ membership_lock: true });
      expect(unknownOnly.status).toBe(200);
      expect(await eventCount()).toBe(before);
      const bad = await as(alice).put(`/groups/${group.id}`).send({ visibility: 'everyone' });
      expect(bad.status).toBe(400);
      expect(bad.body).toEqual({ error: 'visibility does not have a valid value' });
    });

    it('answers 200 with the unchanged group when nothing changes, without recording an event', async () => {
      const current = (await as(alice).get(`/groups/${group.id}`)).body;
      const before = await eventCount();
      const res = await as(alice).put(`/groups/${group.id}`).send({ name: current.name });
      expect(res.status).toBe(200);
      expect(res.body.name).toBe(current.name);
      expect(await eventCount()).toBe(before);
    });

    it('refuses a taken path (400 with the field) and a bad one', async () => {
      const other = await createGroup(t, {}, alice.token);
      const res = await as(alice).put(`/groups/${group.id}`).send({ path: other.path.toUpperCase() });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ message: { path: ['has already been taken'] } });
      const user = await as(alice).put(`/groups/${group.id}`).send({ path: bob.username });
      expect(user.body).toEqual({ message: { path: ['has already been taken'] } });
      const reserved = await as(alice).put(`/groups/${group.id}`).send({ path: 'users' });
      expect(reserved.status).toBe(400);
      expect(reserved.body).toEqual({ message: { path: ['users is a reserved name'] } });
      const blank = await as(alice).put(`/groups/${group.id}`).send({ name: '' });
      expect(blank.status).toBe(400);
      expect(blank.body).toEqual({ message: { name: ["can't be blank"] } });
    });

    it('renames the path of a whole tree: subgroups and their projects follow', async () => {
      const s = unique();
      const top = await createGroup(t, { path: `tree-${s}`, name: `Tree ${s}`, visibility: 'public' }, alice.token);
      const mid = await createGroup(
        t,
        { path: 'mid', name: 'Mid', parent_id: top.id, visibility: 'public' },
        alice.token,
      );
      const leaf = await createGroup(
        t,
        { path: 'leaf', name: 'Leaf', parent_id: mid.id, visibility: 'public' },
        alice.token,
      );
      const project = await createProject(
        t,
        { namespace_id: leaf.id, path: 'code', name: 'Code', visibility: 'public' },
        alice.token,
      );
      expect(project.path_with_namespace).toBe(`tree-${s}/mid/leaf/code`);

      const res = await as(alice)
        .put(`/groups/${top.id}`)
        .send({ path: `wood-${s}`, name: `Wood ${s}` });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        path: `wood-${s}`,
        full_path: `wood-${s}`,
        web_url: `http://lode.test/groups/wood-${s}`,
      });

      const l = await anon().get(`/groups/${leaf.id}`);
      expect(l.body).toMatchObject({
        full_path: `wood-${s}/mid/leaf`,
        full_name: `Wood ${s} / Mid / Leaf`,
        web_url: `http://lode.test/groups/wood-${s}/mid/leaf`,
      });
      const m = await anon().get(`/groups/${encodeURIComponent(`wood-${s}/mid`)}`);
      expect(m.status).toBe(200);
      expect(m.body.id).toBe(mid.id);
      expect((await anon().get(`/groups/${encodeURIComponent(`tree-${s}/mid`)}`)).status).toBe(404);
      expect(l.body.projects[0].path_with_namespace).toBe(`wood-${s}/mid/leaf/code`);
      const p = await anon().get(`/projects/${project.id}`);
      expect(p.body).toMatchObject({
        path_with_namespace: `wood-${s}/mid/leaf/code`,
        web_url: `http://lode.test/wood-${s}/mid/leaf/code`,
      });
      const byPath = await anon().get(`/projects/${encodeURIComponent(`wood-${s}/mid/leaf/code`)}`);
      expect(byPath.status).toBe(200);

      // The old top-level path is free again.
      const reuse = await as(alice)
        .post('/groups')
        .send({ name: `Tree again ${s}`, path: `tree-${s}` });
      expect(reuse.status).toBe(201);
    });

    describe('visibility bounds', () => {
      it('refuses a subgroup more open than its parent', async () => {
        const parent = await createGroup(t, { visibility: 'internal' }, alice.token);
        const child = await createGroup(t, { visibility: 'internal', parent_id: parent.id }, alice.token);
        const res = await as(alice).put(`/groups/${child.id}`).send({ visibility: 'public' });
        expect(res.status).toBe(400);
        expect(res.body).toEqual({
          message: { visibility_level: ['public is not allowed since the parent group has a internal visibility.'] },
        });
      });

      it('refuses a group more closed than one of its subgroups', async () => {
        const parent = await createGroup(t, { visibility: 'public' }, alice.token);
        await createGroup(t, { visibility: 'internal', parent_id: parent.id }, alice.token);
        const res = await as(alice).put(`/groups/${parent.id}`).send({ visibility: 'private' });
        expect(res.status).toBe(400);
        expect(res.body).toEqual({
          message: { visibility_level: ['private is not allowed since there are sub-groups with higher visibility.'] },
        });
        const ok = await as(alice).put(`/groups/${parent.id}`).send({ visibility: 'internal' });
        expect(ok.status).toBe(200);
      });

      it('refuses a group more closed than one of its projects', async () => {
        const parent = await createGroup(t, { visibility: 'public' }, alice.token);
        await createProject(t, { namespace_id: parent.id, visibility: 'internal' }, alice.token);
        const res = await as(alice).put(`/groups/${parent.id}`).send({ visibility: 'private' });
        expect(res.status).toBe(400);
        expect(res.body).toEqual({
          message: {
            visibility_level: ['private is not allowed since this group contains projects with higher visibility.'],
          },
        });
        const ok = await as(alice).put(`/groups/${parent.id}`).send({ visibility: 'internal' });
        expect(ok.status).toBe(200);
        expect(ok.body.visibility).toBe('internal');
      });
    });
  });

  describe('DELETE /groups/:id', () => {
    it('lets the owner delete the group with its subgroups and projects: 204', async () => {
      const top = await createGroup(t, { visibility: 'public' }, alice.token);
      const sub = await createGroup(t, { visibility: 'public', parent_id: top.id }, alice.token);
      const subsub = await createGroup(t, { visibility: 'public', parent_id: sub.id }, alice.token);
      const member = await createUser(t);
      await addGroupMember(t, sub.id, member.id, 30);
      const p1 = await createProject(t, { namespace_id: top.id, visibility: 'public' }, alice.token);
      const p2 = await createProject(t, { namespace_id: subsub.id, visibility: 'public' }, alice.token);

      const res = await as(alice).delete(`/groups/${top.id}`);
      expect(res.status).toBe(204);
      expect(res.text).toBe('');

      for (const g of [top, sub, subsub]) {
        const gone = await admin().get(`/groups/${g.id}`);
        expect(gone.status).toBe(404);
        expect(gone.body).toEqual(NOT_FOUND);
      }
      for (const p of [p1, p2]) {
        const gone = await admin().get(`/projects/${p.id}`);
        expect(gone.status).toBe(404);
        expect(gone.body).toEqual({ message: '404 Project Not Found' });
      }
      const listed = await as(member).get('/groups');
      expect(ids(listed)).not.toContain(sub.id);
      expect((await as(member).get(`/groups/${sub.id}/members`)).status).toBe(404);
      // The path is free again.
      const again = await as(alice).post('/groups').send({ name: top.name, path: top.path });
      expect(again.status).toBe(201);
    });

    it('drops the shares with the deleted group from the projects that were shared with it', async () => {
      const doomed = await createGroup(t, { visibility: 'public' }, alice.token);
      const home = await createGroup(t, { visibility: 'public' }, alice.token);
      const project = await createProject(t, { namespace_id: home.id, visibility: 'public' }, alice.token);
      expect(
        (await as(alice).post(`/projects/${project.id}/share`).send({ group_id: doomed.id, group_access: 30 })).status,
      ).toBe(201);
      expect((await as(alice).get(`/projects/${project.id}`)).body.shared_with_groups).toHaveLength(1);
      expect((await as(alice).delete(`/groups/${doomed.id}`)).status).toBe(204);
      const after = await as(alice).get(`/projects/${project.id}`);
      expect(after.status).toBe(200);
      expect(after.body.shared_with_groups).toEqual([]);
    });

    it('refuses members below owner (403) and anonymous callers (401); hides invisible groups (404)', async () => {
      const g = await createGroup(t, { visibility: 'internal' }, alice.token);
      const maintainer = await createUser(t);
      await addGroupMember(t, g.id, maintainer.id, 40);
      const m = await as(maintainer).delete(`/groups/${g.id}`);
      expect(m.status).toBe(403);
      expect(m.body).toEqual(FORBIDDEN);
      const outsider = await as(bob).delete(`/groups/${g.id}`);
      expect(outsider.status).toBe(403);
      const anonymous = await anon().delete(`/groups/${g.id}`);
      expect(anonymous.status).toBe(401);
      expect(anonymous.body).toEqual(UNAUTHORIZED);
      const priv = await createGroup(t, { visibility: 'private' }, alice.token);
      const hidden = await as(bob).delete(`/groups/${priv.id}`);
      expect(hidden.status).toBe(404);
      expect(hidden.body).toEqual(NOT_FOUND);
      expect((await as(alice).get(`/groups/${g.id}`)).status).toBe(200);
    });

    it('lets an owner of the parent delete a subgroup, and administrators any group', async () => {
      const top = await createGroup(t, {}, alice.token);
      const sub = await createGroup(t, { parent_id: top.id }, t.rootToken);
      expect((await as(alice).delete(`/groups/${sub.id}`)).status).toBe(204);
      expect((await as(alice).get(`/groups/${top.id}`)).status).toBe(200);
      expect((await admin().delete(`/groups/${top.id}`)).status).toBe(204);
      expect((await admin().delete(`/groups/${top.id}`)).status).toBe(404);
    });
  });

  describe('GET /groups/:id/subgroups', () => {
    let parent: CreatedGroup;
    let c1: CreatedGroup;
    let c2: CreatedGroup;
    let c3: CreatedGroup;
    let member: SeededUser;

    beforeAll(async () => {
      member = await createUser(t);
      parent = await createGroup(t, { visibility: 'public' });
      c1 = await createGroup(t, { name: 'C1 one', path: 'c1', visibility: 'public', parent_id: parent.id });
      c2 = await createGroup(t, { name: 'C2 two', path: 'c2', visibility: 'internal', parent_id: parent.id });
      c3 = await createGroup(t, { name: 'C3 three', path: 'c3', visibility: 'private', parent_id: parent.id });
      await createGroup(t, { name: 'Grandchild', path: 'gc', visibility: 'public', parent_id: c1.id });
      await addGroupMember(t, parent.id, member.id, 10);
    });

    it('lists the direct children the caller may see', async () => {
      const anonymous = await anon().get(`/groups/${parent.id}/subgroups`);
      expect(anonymous.status).toBe(200);
      expectEachShape(anonymous, 'group');
      expect(ids(anonymous)).toEqual([c1.id]);
      // GitLab's GroupsFinder: a signed-in non-member sees only their own hierarchy unless all_available is set.
      const outsider = await as(bob).get(`/groups/${parent.id}/subgroups`);
      expect(outsider.body).toEqual([]);
      const available = await as(bob).get(`/groups/${parent.id}/subgroups`).query({ all_available: true });
      expect(ids(available)).toEqual([c1.id, c2.id]);
      const inherited = await as(member).get(`/groups/${parent.id}/subgroups`);
      expect(ids(inherited)).toEqual([c1.id, c2.id, c3.id]);
      const root = await admin().get(`/groups/${parent.id}/subgroups`);
      expect(ids(root)).toEqual([c1.id, c2.id, c3.id]);
      expect(root.body[0]).toMatchObject({ parent_id: parent.id, full_path: `${parent.path}/c1` });
    });

    it('takes the GL filters', async () => {
      const desc = await admin().get(`/groups/${parent.id}/subgroups`).query({ sort: 'desc' });
      expect(ids(desc)).toEqual([c3.id, c2.id, c1.id]);
      const search = await admin().get(`/groups/${parent.id}/subgroups`).query({ search: 'two' });
      expect(ids(search)).toEqual([c2.id]);
      const skip = await admin().get(`/groups/${parent.id}/subgroups?skip_groups[]=${c1.id}`);
      expect(ids(skip)).toEqual([c2.id, c3.id]);
      const page = await admin().get(`/groups/${parent.id}/subgroups`).query({ per_page: 1, page: 2 });
      expect(ids(page)).toEqual([c2.id]);
      expect(page.headers['x-total']).toBe('3');
      const bad = await admin().get(`/groups/${parent.id}/subgroups`).query({ order_by: 'size' });
      expect(bad.status).toBe(400);
    });

    it('answers 404 for a parent the caller cannot see', async () => {
      const priv = await createGroup(t, { visibility: 'private' });
      const res = await as(bob).get(`/groups/${priv.id}/subgroups`);
      expect(res.status).toBe(404);
      expect(res.body).toEqual(NOT_FOUND);
      expect((await anon().get('/groups/99999999/subgroups')).status).toBe(404);
    });
  });

  describe('GET /groups/:id/projects', () => {
    let group: CreatedGroup;
    let a: { id: number }; // public "Apple"
    let b: { id: number }; // internal "Banana"
    let c: { id: number }; // private "Cherry"
    let d: { id: number }; // public, archived "Date"
    let member: SeededUser;

    beforeAll(async () => {
      member = await createUser(t);
      group = await createGroup(t, { visibility: 'public' }, alice.token);
      await addGroupMember(t, group.id, member.id, 30);
      a = await createProject(
        t,
        { namespace_id: group.id, name: 'Apple', path: 'zz-apple', visibility: 'public', description: 'crunchy' },
        alice.token,
      );
      b = await createProject(
        t,
        { namespace_id: group.id, name: 'Banana', path: 'yy-banana', visibility: 'internal' },
        alice.token,
      );
      c = await createProject(
        t,
        { namespace_id: group.id, name: 'Cherry', path: 'xx-cherry', visibility: 'private' },
        alice.token,
      );
      d = await createProject(
        t,
        { namespace_id: group.id, name: 'Date', path: 'ww-date', visibility: 'public' },
        alice.token,
      );
      expect((await as(alice).post(`/projects/${d.id}/archive`)).status).toBe(201);
      expect((await as(member).post(`/projects/${b.id}/star`)).status).toBe(201);
    });

    it('lists the projects the caller may see, newest first, archived ones hidden', async () => {
      const anonymous = await anon().get(`/groups/${group.id}/projects`);
      expect(anonymous.status).toBe(200);
      expect(ids(anonymous)).toEqual([a.id]);
      const outsider = await as(bob).get(`/groups/${group.id}/projects`);
      expect(ids(outsider)).toEqual([b.id, a.id]);
      const inside = await as(member).get(`/groups/${group.id}/projects`);
      expect(ids(inside)).toEqual([c.id, b.id, a.id]);
      expect(inside.headers['x-total']).toBe('3');
    });

    it("answers with GitLab's Project entity (no permissions), also for anonymous callers", async () => {
      for (const token of [undefined, member.token]) {
        const res = await client(t, token).get(`/groups/${group.id}/projects`);
        const p = res.body.find((x: { id: number }) => x.id === a.id);
        expect(p).toMatchObject({
          id: a.id,
          name: 'Apple',
          visibility: 'public',
          archived: false,
          namespace: expect.objectContaining({ id: group.id }),
        });
        expect(p).not.toHaveProperty('permissions');
        expect(p).not.toHaveProperty('runners_token');
        for (const x of res.body) expectProject(x, 'project-in-group', { owner: false, adminFields: false });
      }
    });

    it('shows archived projects as well with archived=true', async () => {
      const res = await as(member).get(`/groups/${group.id}/projects`).query({ archived: true });
      expect(ids(res)).toEqual([d.id, c.id, b.id, a.id]);
      const not = await as(member).get(`/groups/${group.id}/projects`).query({ archived: false });
      expect(ids(not)).toEqual([c.id, b.id, a.id]);
    });

    it('filters by visibility and search, and orders as asked', async () => {
      const vis = await as(member).get(`/groups/${group.id}/projects`).query({ visibility: 'internal' });
      expect(ids(vis)).toEqual([b.id]);
      const search = await as(member).get(`/groups/${group.id}/projects`).query({ search: 'CHERRY' });
      expect(ids(search)).toEqual([c.id]);
      const byName = await as(member).get(`/groups/${group.id}/projects`).query({ order_by: 'name', sort: 'asc' });
      expect(ids(byName)).toEqual([a.id, b.id, c.id]);
      const byPath = await as(member).get(`/groups/${group.id}/projects`).query({ order_by: 'path', sort: 'asc' });
      expect(ids(byPath)).toEqual([c.id, b.id, a.id]);
      const byId = await as(member).get(`/groups/${group.id}/projects`).query({ order_by: 'id', sort: 'asc' });
      expect(ids(byId)).toEqual([a.id, b.id, c.id]);
      const bad = await as(member).get(`/groups/${group.id}/projects`).query({ order_by: 'stars' });
      expect(bad.status).toBe(400);
      expect(bad.body).toEqual({ error: 'order_by does not have a valid value' });
      const badVis = await as(member).get(`/groups/${group.id}/projects`).query({ visibility: 'hidden' });
      expect(badVis.status).toBe(400);
      expect(badVis.body).toEqual({ error: 'visibility does not have a valid value' });
    });

    it("shows each listed project's shares in shared_with_groups", async () => {
      const home = await createGroup(t, { visibility: 'public' }, alice.token);
      const other = await createGroup(t, { visibility: 'public' }, alice.token);
      const shared = await createProject(
        t,
        { namespace_id: home.id, name: 'Shared', visibility: 'public' },
        alice.token,
      );
      const alone = await createProject(t, { namespace_id: home.id, name: 'Alone', visibility: 'public' }, alice.token);
      const share = await as(alice)
        .post(`/projects/${shared.id}/share`)
        .send({ group_id: other.id, group_access: 30, expires_at: '2099-01-31' });
      expect(share.status).toBe(201);
      const res = await as(member).get(`/groups/${home.id}/projects`);
      expect(res.status).toBe(200);
      const byId = new Map(res.body.map((p: { id: number }) => [p.id, p]));
      expect((byId.get(shared.id) as { shared_with_groups: unknown }).shared_with_groups).toEqual([
        { group_id: other.id, group_name: other.name, group_access_level: 30 },
      ]);
      expect((byId.get(alone.id) as { shared_with_groups: unknown }).shared_with_groups).toEqual([]);
    });

    it('answers the simple shape with simple=true', async () => {
      const res = await as(member).get(`/groups/${group.id}/projects`).query({ simple: true, search: 'apple' });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body[0]).sort()).toEqual(
        [
          'id',
          'description',
          'default_branch',
          'tag_list',
          'topics',
          'ssh_url_to_repo',
          'http_url_to_repo',
          'web_url',
          'name',
          'name_with_namespace',
          'path',
          'path_with_namespace',
          'star_count',
          'forks_count',
          'created_at',
          'last_activity_at',
          'avatar_url',
        ].sort(),
      );
    });

    it('keeps starred and owned projects for the caller', async () => {
      const starred = await as(member).get(`/groups/${group.id}/projects`).query({ starred: true });
      expect(ids(starred)).toEqual([b.id]);
      const ownedByMember = await as(member).get(`/groups/${group.id}/projects`).query({ owned: true });
      expect(ownedByMember.body).toEqual([]);
      const ownedByAlice = await as(alice).get(`/groups/${group.id}/projects`).query({ owned: true });
      expect(ids(ownedByAlice)).toEqual([c.id, b.id, a.id]);
    });

    it('paginates and answers 404 for a group the caller cannot see', async () => {
      const page = await as(member).get(`/groups/${group.id}/projects`).query({ per_page: 2, page: 2 });
      expect(ids(page)).toEqual([a.id]);
      expect(page.headers).toMatchObject({
        'x-total': '3',
        'x-total-pages': '2',
        'x-page': '2',
        'x-prev-page': '1',
        'x-next-page': '',
      });
      const priv = await createGroup(t, { visibility: 'private' }, alice.token);
      const res = await as(bob).get(`/groups/${priv.id}/projects`);
      expect(res.status).toBe(404);
      expect(res.body).toEqual(NOT_FOUND);
    });
  });

  describe('POST /groups/:id/projects/:project_id (transfer)', () => {
    it('lets administrators move a project into a group: 201 with the GroupDetail holding it', async () => {
      const target = await createGroup(t, { visibility: 'internal' }, alice.token);
      const project = await createProject(t, { visibility: 'internal' }, bob.token);
      const res = await admin().post(`/groups/${target.id}/projects/${project.id}`);
      expect(res.status).toBe(201);
      expectShape(res.body, 'group-detail');
      expect(res.body.id).toBe(target.id);
      expect(res.body.projects.map((p: { id: number }) => p.id)).toEqual([project.id]);
      expect(res.body.projects[0].path_with_namespace).toBe(`${target.full_path}/${project.path}`);
      const moved = await as(alice).get(`/projects/${project.id}`);
      expect(moved.body.namespace).toMatchObject({ id: target.id, kind: 'group' });
    });

    it('takes the project by URL-encoded path as well', async () => {
      const target = await createGroup(t, { visibility: 'public' });
      const project = await createProject(t, { visibility: 'public' }, bob.token);
      const res = await admin().post(
        `/groups/${target.full_path}/projects/${encodeURIComponent(project.path_with_namespace)}`,
      );
      expect(res.status).toBe(201);
      expect(res.body.projects.map((p: { id: number }) => p.id)).toEqual([project.id]);
    });

    it('refuses non-administrators (403) and anonymous callers (401); unknown group or project 404', async () => {
      const target = await createGroup(t, {}, alice.token);
      const project = await createProject(t, {}, alice.token);
      const owner = await as(alice).post(`/groups/${target.id}/projects/${project.id}`);
      expect(owner.status).toBe(403);
      expect(owner.body).toEqual(FORBIDDEN);
      const anonymous = await anon().post(`/groups/${target.id}/projects/${project.id}`);
      expect(anonymous.status).toBe(401);
      const noGroup = await admin().post(`/groups/99999999/projects/${project.id}`);
      expect(noGroup.status).toBe(404);
      expect(noGroup.body).toEqual(NOT_FOUND);
      const noProject = await admin().post(`/groups/${target.id}/projects/99999999`);
      expect(noProject.status).toBe(404);
      expect(noProject.body).toEqual({ message: '404 Project Not Found' });
    });
  });
});
