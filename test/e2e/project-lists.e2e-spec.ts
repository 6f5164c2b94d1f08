import type { Response } from 'supertest';
import { expectShape } from '../contract/shape';
import { client, createGroup, unique } from '../support/groups';
import { expectProject } from '../support/project-shape';
import { createUser, type SeededUser } from '../support/seed';
import { countStatements, startTestApp, type TestApp } from '../support/test-app';

/**
 * GET /projects and GET /users/:user_id/projects: who sees what, every PL filter, order, pagination
 * and the statement budget. Every project of this file is made in beforeAll, so expected sets are exact.
 */
describe('project lists', () => {
  let t: TestApp;
  let alice: SeededUser;
  let bob: SeededUser;
  let carol: SeededUser; // external
  let filler: SeededUser;
  let groupOwner: SeededUser;
  const ids: Record<string, number> = {};
  let fillerIds: number[] = [];
  let tag: string; // in the names of the order_by trio

  const as = (token?: string) => client(t, token);
  const anon = () => as();
  const idsOf = (res: Response) => (res.body as { id: number }[]).map((p) => p.id);
  const named = (...names: string[]) => names.map((n) => ids[n]);
  const make = async (name: string, token: string, attrs: Record<string, unknown> = {}) => {
    const res = await as(token)
      .post('/projects')
      .send({ name: `${name} ${unique()}`, ...attrs });
    if (res.status !== 201) throw new Error(`make ${name}: ${res.status} ${JSON.stringify(res.body)}`);
    ids[name] = res.body.id;
    return res.body;
  };
  /** Every id of a list (one page of 100 is enough here), asserting X-Total agrees. */
  const all = async (token: string | undefined, query: Record<string, unknown> = {}) => {
    const res = await as(token)
      .get('/projects')
      .query({ per_page: 100, ...query });
    expect(res.status).toBe(200);
    expect(Number(res.headers['x-total'])).toBe(res.body.length);
    return res;
  };
  const sameSet = (actual: number[], expected: number[]) =>
    expect([...actual].sort((a, b) => a - b)).toEqual([...expected].sort((a, b) => a - b));

  beforeAll(async () => {
    t = await startTestApp();
    [alice, bob, carol, filler, groupOwner] = await Promise.all([
      createUser(t),
      createUser(t),
      createUser(t, { external: true }),
      createUser(t),
      createUser(t, { name: 'Group Keeper' }),
    ]);
    const group = await createGroup(t, { name: `Zebra Herd ${unique()}`, visibility: 'public' }, groupOwner.token);
    await make('A1', alice.token, { visibility: 'private' });
    await make('A2', alice.token, { visibility: 'internal' });
    await make('A3', alice.token, { visibility: 'public', description: 'has a needle inside' });
    await make('B1', bob.token, { visibility: 'private' });
    await make('B2', bob.token, { visibility: 'public' });
    await make('G1', groupOwner.token, { visibility: 'private', namespace_id: group.id });
    await make('G2', groupOwner.token, { visibility: 'internal', namespace_id: group.id });
    await make('G3', groupOwner.token, { visibility: 'public', namespace_id: group.id });
    await make('N1', alice.token, { visibility: 'public', issues_enabled: false });
    await make('N2', alice.token, { visibility: 'public', merge_requests_enabled: false });
    expect(
      (await as(groupOwner.token).post(`/projects/${ids.G1}/members`).send({ user_id: alice.id, access_level: 30 }))
        .status,
    ).toBe(201);
    expect(
      (await as(alice.token).post(`/projects/${ids.A2}/members`).send({ user_id: carol.id, access_level: 20 })).status,
    ).toBe(201);
    expect((await as(groupOwner.token).post(`/projects/${ids.G3}/archive`)).status).toBe(201);
    expect((await as(bob.token).post(`/projects/${ids.A3}/star`)).status).toBe(201);
    expect((await as(bob.token).post(`/projects/${ids.G2}/star`)).status).toBe(201);
    // The order_by trio: names, paths and creation run in three different orders.
    tag = `ord${unique()}`;
    for (const [key, name, path] of [
      ['O1', 'charlie', '2'],
      ['O2', 'alpha', '3'],
      ['O3', 'bravo', '1'],
    ]) {
      const res = await as(filler.token)
        .post('/projects')
        .send({ name: `${tag}${name}`, path: `${tag}-${path}`, visibility: 'public' });
      ids[key] = res.body.id;
    }
    // Touch the first one last: it becomes the most recently updated and active.
    await new Promise((r) => setTimeout(r, 5));
    expect((await as(filler.token).put(`/projects/${ids.O1}`).send({ description: 'touched' })).status).toBe(200);
    for (let i = 0; i < 32; i += 8) {
      const batch = await Promise.all(
        Array.from({ length: 8 }, (_, j) =>
          as(filler.token)
            .post('/projects')
            .send({ name: `Filler ${i + j} ${unique()}`, visibility: 'public' }),
        ),
      );
      fillerIds = [...fillerIds, ...batch.map((r) => r.body.id)];
    }
  });
  afterAll(async () => {
    await t?.close();
  });

  /** Public and active: what everybody sees by default (G3 is public but archived, so hidden unless asked). */
  const common = () => [...named('A3', 'B2', 'N1', 'N2', 'O1', 'O2', 'O3'), ...fillerIds];

  describe('who sees what', () => {
    it('anonymous callers see public projects only, in the basic shape', async () => {
      const res = await all(undefined);
      sameSet(idsOf(res), common());
      for (const p of res.body) expectShape(p, 'project-simple');
      sameSet(idsOf(await all(undefined, { archived: true })), [...common(), ids.G3]);
    });

    it('a signed-in user sees public and internal projects and private ones they are a member of, with permissions', async () => {
      const res = await all(alice.token);
      sameSet(idsOf(res), [...common(), ...named('A1', 'A2', 'G1', 'G2')]);
      for (const p of res.body) {
        // Lists never carry the administrators' fields (GitLab passes no user_can_admin_project).
        expectProject(p, 'project', {
          owner: p.namespace.kind === 'user',
          adminFields: false,
          issues: p.issues_enabled,
        });
      }
      const g1 = res.body.find((p: { id: number }) => p.id === ids.G1);
      expect(g1.permissions).toEqual({
        project_access: { access_level: 30, notification_level: 3 },
        group_access: null,
      });
      sameSet(idsOf(await all(bob.token)), [...common(), ...named('A2', 'B1', 'G2')]);
      sameSet(idsOf(await all(bob.token, { archived: true })), [...common(), ...named('A2', 'B1', 'G2', 'G3')]);
    });

    it('an external user sees public projects and those they are a member of, not other internal ones', async () => {
      sameSet(idsOf(await all(carol.token)), [...common(), ids.A2]);
      expect((await as(carol.token).get(`/projects/${ids.G2}`)).status).toBe(404);
      expect((await as(carol.token).get(`/projects/${ids.A2}`)).status).toBe(200);
    });

    it('administrators see every project', async () => {
      const res = await all(t.rootToken);
      sameSet(idsOf(res), [...common(), ...named('A1', 'A2', 'B1', 'G1', 'G2')]);
      sameSet(idsOf(await all(t.rootToken, { archived: true })), [
        ...common(),
        ...named('A1', 'A2', 'B1', 'G1', 'G2', 'G3'),
      ]);
      for (const p of res.body)
        expectProject(p, 'project', {
          owner: p.namespace.kind === 'user',
          adminFields: false,
          issues: p.issues_enabled,
        });
    });
  });

  describe('filters', () => {
    // GitLab 10.x: `archived` defaults to false (archived projects hidden); `archived=true` adds them to the
    // others (ProjectsFinder#by_archived). "Archived only" came with 11.x.
    it('archived: hidden by default and with false, listed along with the others with true', async () => {
      const active = idsOf(await all(bob.token));
      expect(active).not.toContain(ids.G3);
      expect(idsOf(await all(bob.token, { archived: 'false' }))).toEqual(active);
      sameSet(idsOf(await all(bob.token, { archived: true })), [...active, ids.G3]);
      sameSet(idsOf(await all(bob.token, { archived: 'true', search: 'zebra herd' })), named('G2', 'G3'));
    });

    it('visibility', async () => {
      sameSet(idsOf(await all(alice.token, { visibility: 'private' })), named('A1', 'G1'));
      sameSet(idsOf(await all(alice.token, { visibility: 'internal' })), named('A2', 'G2'));
      sameSet(idsOf(await all(alice.token, { visibility: 'public' })), common());
      sameSet(idsOf(await all(undefined, { visibility: 'private' })), []);
    });

    it('search matches name, path, description and the namespace name, case-insensitively', async () => {
      sameSet(idsOf(await all(alice.token, { search: 'NEEDLE' })), [ids.A3]);
      sameSet(idsOf(await all(alice.token, { search: tag.toUpperCase() })), named('O1', 'O2', 'O3'));
      sameSet(idsOf(await all(alice.token, { search: `${tag}-3` })), [ids.O2]);
      sameSet(idsOf(await all(alice.token, { search: 'zebra herd' })), named('G1', 'G2'));
      sameSet(idsOf(await all(bob.token, { search: 'zebra herd' })), named('G2'));
      // LIKE wildcards are literal.
      sameSet(idsOf(await all(alice.token, { search: '%' })), []);
    });

    it('simple=true gives the basic shape to signed-in callers too', async () => {
      const res = await all(alice.token, { simple: 'true' });
      expect(res.body.length).toBeGreaterThan(30);
      for (const p of res.body) expectShape(p, 'project-simple');
    });

    it('owned: personal projects and projects of groups owned directly', async () => {
      sameSet(idsOf(await all(alice.token, { owned: true })), named('A1', 'A2', 'A3', 'N1', 'N2'));
      sameSet(idsOf(await all(groupOwner.token, { owned: true, archived: true })), named('G1', 'G2', 'G3'));
    });

    it('membership: projects where the caller has a level (own, member, group member)', async () => {
      sameSet(idsOf(await all(alice.token, { membership: true })), named('A1', 'A2', 'A3', 'N1', 'N2', 'G1'));
      sameSet(idsOf(await all(carol.token, { membership: true })), [ids.A2]);
      sameSet(idsOf(await all(groupOwner.token, { membership: true })), named('G1', 'G2'));
    });

    it('starred', async () => {
      sameSet(idsOf(await all(bob.token, { starred: true })), named('A3', 'G2'));
      // Only visible projects: carol starred nothing and cannot see G2 anyway.
      sameSet(idsOf(await all(carol.token, { starred: true })), []);
    });

    it('with_issues_enabled and with_merge_requests_enabled', async () => {
      const issues = idsOf(await all(alice.token, { with_issues_enabled: true }));
      expect(issues).not.toContain(ids.N1);
      expect(issues).toContain(ids.N2);
      const mrs = idsOf(await all(alice.token, { with_merge_requests_enabled: true }));
      expect(mrs).not.toContain(ids.N2);
      expect(mrs).toContain(ids.N1);
      expect(issues.length + 1).toBe((await all(alice.token)).body.length);
    });

    it('statistics=true adds statistics where the caller may read them (reporters and up, administrators)', async () => {
      const mine = await all(alice.token, { statistics: true, owned: true });
      for (const p of mine.body)
        expectProject(p, 'project', { owner: true, adminFields: false, issues: p.issues_enabled, statistics: true });
      const others = await all(alice.token, { statistics: true, search: tag });
      for (const p of others.body) expectProject(p, 'project', { owner: true, adminFields: false });
      const byAdmin = await all(t.rootToken, { statistics: true, search: tag });
      for (const p of byAdmin.body) expectProject(p, 'project', { owner: true, adminFields: false, statistics: true });
    });

    it('combines filters', async () => {
      sameSet(
        idsOf(await all(alice.token, { owned: true, visibility: 'public', with_issues_enabled: true })),
        named('A3', 'N2'),
      );
    });

    it('refuses bad values with Grape errors (400)', async () => {
      const cases: [Record<string, string>, string][] = [
        [{ order_by: 'stars' }, 'order_by does not have a valid value'],
        [{ sort: 'up' }, 'sort does not have a valid value'],
        [{ visibility: 'hidden' }, 'visibility does not have a valid value'],
        [{ archived: 'maybe' }, 'archived is invalid'],
        [{ per_page: 'many' }, 'per_page is invalid'],
      ];
      for (const [query, error] of cases) {
        const res = await as(alice.token).get('/projects').query(query);
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ error });
      }
    });
  });

  describe('order', () => {
    const order = async (query: Record<string, string>) => idsOf(await all(alice.token, { search: tag, ...query }));

    it('defaults to created_at desc', async () => {
      expect(await order({})).toEqual(named('O3', 'O2', 'O1'));
    });

    it.each([
      ['id', 'asc', ['O1', 'O2', 'O3']],
      ['id', 'desc', ['O3', 'O2', 'O1']],
      ['name', 'asc', ['O2', 'O3', 'O1']],
      ['name', 'desc', ['O1', 'O3', 'O2']],
      ['path', 'asc', ['O3', 'O1', 'O2']],
      ['path', 'desc', ['O2', 'O1', 'O3']],
      ['created_at', 'asc', ['O1', 'O2', 'O3']],
      ['created_at', 'desc', ['O3', 'O2', 'O1']],
      ['updated_at', 'desc', ['O1', 'O3', 'O2']],
      ['updated_at', 'asc', ['O2', 'O3', 'O1']],
      ['last_activity_at', 'desc', ['O1', 'O3', 'O2']],
      ['last_activity_at', 'asc', ['O2', 'O3', 'O1']],
    ])('order_by=%s sort=%s', async (orderBy, sort, expected) => {
      expect(await order({ order_by: orderBy, sort })).toEqual(named(...expected));
    });

    it('sort alone applies to created_at', async () => {
      expect(await order({ sort: 'asc' })).toEqual(named('O1', 'O2', 'O3'));
    });
  });

  describe('pagination', () => {
    it('sets GitLab headers and keeps X-Total right under visibility rules', async () => {
      const visible = (await all(bob.token)).body.length;
      const res = await as(bob.token).get('/projects').query({ per_page: 7, page: 2, order_by: 'id', sort: 'asc' });
      expect(res.status).toBe(200);
      expect(res.body).toHaveLength(7);
      expect(res.headers['x-total']).toBe(String(visible));
      expect(res.headers['x-total-pages']).toBe(String(Math.ceil(visible / 7)));
      expect(res.headers['x-per-page']).toBe('7');
      expect(res.headers['x-page']).toBe('2');
      expect(res.headers['x-next-page']).toBe('3');
      expect(res.headers['x-prev-page']).toBe('1');
      expect(res.headers.link).toContain('rel="next"');
      expect(res.headers.link).toContain('order_by=id');
      // Walking every page gives each visible project once, and nothing invisible.
      const seen: number[] = [];
      for (let page = 1; page <= Math.ceil(visible / 7); page += 1) {
        const p = await as(bob.token).get('/projects').query({ per_page: 7, page, order_by: 'id', sort: 'asc' });
        expect(p.headers['x-total']).toBe(String(visible));
        seen.push(...idsOf(p));
      }
      expect(new Set(seen).size).toBe(visible);
      expect(seen).not.toContain(ids.A1);
      expect(seen).not.toContain(ids.G1);
      const last = await as(bob.token)
        .get('/projects')
        .query({ per_page: 7, page: Math.ceil(visible / 7) });
      expect(last.headers['x-next-page']).toBe('');
    });

    it('caps per_page at 100', async () => {
      const res = await as(t.rootToken).get('/projects').query({ per_page: 500 });
      expect(res.headers['x-per-page']).toBe('100');
    });
  });

  describe('statement budget', () => {
    let counter: ReturnType<typeof countStatements>;
    beforeAll(() => {
      counter = countStatements();
    });
    afterAll(() => counter.restore());

    it.each([
      ['an administrator', () => t.rootToken],
      ['a normal user', () => alice.token],
      ['an anonymous caller', () => undefined],
    ])('GET /projects?per_page=100 as %s runs at most 5 statements', async (_, token) => {
      const id = `projects-list-${unique()}`;
      let req = t.http().get('/api/v4/projects?per_page=100&statistics=true').set('X-Request-Id', id);
      const tok = token();
      if (tok) req = req.set('PRIVATE-TOKEN', tok);
      const res = await req;
      expect(res.status).toBe(200);
      expect(res.body.length).toBeGreaterThanOrEqual(30);
      const n = counter.forRequest(id);
      expect(n).toBeGreaterThan(0);
      expect(n).toBeLessThanOrEqual(5);
    });

    it('GET /users/:id/projects?per_page=100 runs at most 5 statements', async () => {
      const id = `user-projects-${unique()}`;
      const res = await t
        .http()
        .get(`/api/v4/users/${filler.username}/projects?per_page=100`)
        .set('PRIVATE-TOKEN', alice.token)
        .set('X-Request-Id', id);
      expect(res.status).toBe(200);
      expect(res.body.length).toBeGreaterThanOrEqual(30);
      expect(counter.forRequest(id)).toBeLessThanOrEqual(5);
    });
  });

  describe('GET /users/:user_id/projects', () => {
    it('lists the user’s personal projects the caller may see, by id or username', async () => {
      const byId = await as(bob.token).get(`/users/${alice.id}/projects`).query({ per_page: 100 });
      expect(byId.status).toBe(200);
      sameSet(idsOf(byId), named('A2', 'A3', 'N1', 'N2'));
      expect(byId.headers['x-total']).toBe('4');
      const byName = await as(bob.token).get(`/users/${alice.username}/projects`).query({ per_page: 100 });
      expect(idsOf(byName)).toEqual(idsOf(byId));
      sameSet(
        idsOf(await as(alice.token).get(`/users/${alice.id}/projects`).query({ per_page: 100 })),
        named('A1', 'A2', 'A3', 'N1', 'N2'),
      );
      // Group projects are not personal projects, even for the group's creator.
      sameSet(idsOf(await as(groupOwner.token).get(`/users/${groupOwner.id}/projects`)), []);
    });

    it('shows anonymous callers public ones in the basic shape', async () => {
      const res = await anon().get(`/users/${alice.username}/projects`);
      expect(res.status).toBe(200);
      sameSet(idsOf(res), named('A3', 'N1', 'N2'));
      for (const p of res.body) expectShape(p, 'project-simple');
    });

    it('takes the PL filters', async () => {
      sameSet(
        idsOf(
          await as(alice.token)
            .get(`/users/${alice.id}/projects`)
            .query({ visibility: 'public', with_issues_enabled: true }),
        ),
        named('A3', 'N2'),
      );
      sameSet(idsOf(await as(alice.token).get(`/users/${alice.id}/projects`).query({ search: 'needle' })), [ids.A3]);
      const simple = await as(alice.token).get(`/users/${alice.id}/projects`).query({ simple: true });
      for (const p of simple.body) expectShape(p, 'project-simple');
      const bad = await as(alice.token).get(`/users/${alice.id}/projects`).query({ order_by: 'nope' });
      expect(bad.body).toEqual({ error: 'order_by does not have a valid value' });
    });

    it('404 User Not Found for an unknown id or username', async () => {
      for (const who of ['999999', 'no-such-user-anywhere']) {
        const res = await as(alice.token).get(`/users/${who}/projects`);
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ message: '404 User Not Found' });
      }
    });
  });
});
