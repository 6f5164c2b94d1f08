import type { Response } from 'supertest';
import { expectShape } from '../contract/shape';
import { addGroupMember, client, createGroup, unique } from '../support/groups';
import { expectProject } from '../support/project-shape';
import { createUser, type SeededUser } from '../support/seed';
import { countStatements, startTestApp, type TestApp } from '../support/test-app';

/**
 * The project resource: create, read, update, delete, archive, star, custom attributes, forks list.
 * Lists and their filters are in project-lists, members and sharing in project-members, and the
 * role × visibility matrix in project-matrix.
 */
describe('projects API', () => {
  let t: TestApp;
  let alice: SeededUser; // owns personal projects
  let bob: SeededUser; // a signed-in stranger
  let groupOwner: SeededUser;
  let maintainer: SeededUser;
  let developer: SeededUser;
  let guest: SeededUser;
  let group: { id: number; full_path: string; name: string };

  const as = (token?: string) => client(t, token);
  const admin = () => as(t.rootToken);
  const anon = () => as();
  /** Events other than the sign-in day a token's first use records. */
  const eventCount = async () =>
    Number((await t.db.query(`select count(*)::int as n from events where type <> 'UserActivityRecorded'`))[0].n);
  /** A project made through the API; fails the test on anything but 201. */
  const make = async (token: string, attrs: Record<string, unknown> = {}) => {
    const s = unique();
    const res = await as(token)
      .post('/projects')
      .send({ name: `Project ${s}`, ...attrs });
    if (res.status !== 201) throw new Error(`make: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as { id: number; name: string; path: string; path_with_namespace: string; web_url: string };
  };
  const notFound = (res: Response, resource = 'Project') => {
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ message: `404 ${resource} Not Found` });
  };
  const forbidden = (res: Response) => {
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ message: '403 Forbidden' });
  };
  const unauthorized = (res: Response) => {
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ message: '401 Unauthorized' });
  };

  beforeAll(async () => {
    t = await startTestApp();
    [alice, bob, groupOwner, maintainer, developer, guest] = await Promise.all([
      createUser(t, { name: 'Alice Anders' }),
      createUser(t),
      createUser(t),
      createUser(t),
      createUser(t),
      createUser(t),
    ]);
    group = await createGroup(t, { name: `Team ${unique()}`, visibility: 'public' }, groupOwner.token);
    await addGroupMember(t, group.id, maintainer.id, 40);
    await addGroupMember(t, group.id, developer.id, 30);
    await addGroupMember(t, group.id, guest.id, 10);
  });
  afterAll(async () => {
    await t?.close();
  });

  describe('POST /projects', () => {
    it('needs a name or a path (400, Grape at_least_one_of) and stores nothing', async () => {
      const before = await eventCount();
      const res = await as(alice.token).post('/projects').send({ description: 'nameless' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'name, path are missing, at least one parameter must be provided' });
      expect(await eventCount()).toBe(before);
    });

    it('needs a signed-in caller (401)', async () => {
      unauthorized(await anon().post('/projects').send({ name: 'anonymous' }));
    });

    it('derives the path from the name, defaults to private in the personal namespace, and answers 201 with the entity', async () => {
      const res = await as(alice.token).post('/projects').send({ name: 'Foo Project' });
      expect(res.status).toBe(201);
      expect(res.headers['content-type']).toBe('application/json');
      // GitLab presents writes with the plain Project entity (no permissions); the creator administers it.
      expectProject(res.body, 'project-in-group', { owner: true, adminFields: true });
      const web = `http://lode.test/${alice.username}/foo-project`;
      expect(res.body).toMatchObject({
        name: 'Foo Project',
        path: 'foo-project',
        path_with_namespace: `${alice.username}/foo-project`,
        visibility: 'private',
        name_with_namespace: 'Alice Anders / Foo Project',
        description: null,
        default_branch: null,
        tag_list: [],
        archived: false,
        web_url: web,
        http_url_to_repo: `${web}.git`,
        ssh_url_to_repo: `git@lode.test:${alice.username}/foo-project.git`,
        avatar_url: null,
        star_count: 0,
        forks_count: 0,
        open_issues_count: 0,
        creator_id: alice.id,
        import_status: 'none',
        import_error: null,
        shared_with_groups: [],
        issues_enabled: true,
        merge_requests_enabled: true,
        wiki_enabled: true,
        jobs_enabled: true,
        snippets_enabled: true,
        container_registry_enabled: true,
        shared_runners_enabled: true,
        lfs_enabled: true,
        public_jobs: true,
        request_access_enabled: false,
        only_allow_merge_if_pipeline_succeeds: false,
        only_allow_merge_if_all_discussions_are_resolved: false,
        resolve_outdated_diff_discussions: false,
        printing_merge_requests_link_enabled: true,
        ci_config_path: null,
        owner: { id: alice.id, name: 'Alice Anders' },
      });
      expect(res.body.namespace).toEqual({
        id: expect.any(Number),
        name: alice.username,
        path: alice.username,
        kind: 'user',
        full_path: alice.username,
        parent_id: null,
      });
      expect(res.body.runners_token).toMatch(/^[\w-]{16,}$/);
      expect(res.body.owner.created_at).toMatch(/^\d{4}-\d\d-\d\dT/);
      const api = `http://lode.test/api/v4/projects/${res.body.id}`;
      expect(res.body._links).toEqual({
        self: api,
        issues: `${api}/issues`,
        merge_requests: `${api}/merge_requests`,
        repo_branches: `${api}/repository/branches`,
        labels: `${api}/labels`,
        events: `${api}/events`,
        members: `${api}/members`,
      });
      expect(Date.parse(res.body.created_at)).toBeGreaterThan(Date.now() - 60_000);
      // GitLab makes the namespace owner a master (40) of a personal project.
      const get = await as(alice.token).get(`/projects/${res.body.id}`);
      expect(get.status).toBe(200);
      expectProject(get.body, 'project', { owner: true, adminFields: true });
      expect(get.body.permissions).toEqual({
        project_access: { access_level: 40, notification_level: 3 },
        group_access: null,
      });
    });

    it('takes the name from the path when only the path is given', async () => {
      const res = await as(alice.token).post('/projects').send({ path: 'only-a-path' });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ name: 'only-a-path', path: 'only-a-path' });
    });

    it('parameterizes names the Rails way (dots and accents)', async () => {
      const res = await as(alice.token).post('/projects').send({ name: 'Café.Crème  Project' });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ name: 'Café.Crème  Project', path: 'cafe-creme-project' });
    });

    it('takes every write field, booleans as strings and forms, and sorts the tags', async () => {
      const res = await as(alice.token)
        .post('/projects')
        .type('form')
        .send({
          name: `Switches ${unique()}`,
          description: 'all the switches',
          visibility: 'internal',
          default_branch: 'develop',
          issues_enabled: 'false',
          merge_requests_enabled: 'False',
          wiki_enabled: 'no',
          jobs_enabled: '0',
          snippets_enabled: 'f',
          container_registry_enabled: 'false',
          shared_runners_enabled: 'false',
          public_jobs: 'false',
          lfs_enabled: 'false',
          request_access_enabled: 'true',
          only_allow_merge_if_pipeline_succeeds: 'TRUE',
          only_allow_merge_if_all_discussions_are_resolved: 'yes',
          resolve_outdated_diff_discussions: '1',
          printing_merge_request_link_enabled: 'false',
          ci_config_path: 'ci/pipeline.yml',
          'tag_list[]': ['zeta', 'alpha', 'mid'],
        });
      expect(res.status).toBe(201);
      expectProject(res.body, 'project-in-group', { owner: true, adminFields: true, issues: false });
      expect(res.body).toMatchObject({
        description: 'all the switches',
        visibility: 'internal',
        default_branch: 'develop',
        issues_enabled: false,
        merge_requests_enabled: false,
        wiki_enabled: false,
        jobs_enabled: false,
        snippets_enabled: false,
        container_registry_enabled: false,
        shared_runners_enabled: false,
        public_jobs: false,
        lfs_enabled: false,
        request_access_enabled: true,
        only_allow_merge_if_pipeline_succeeds: true,
        only_allow_merge_if_all_discussions_are_resolved: true,
        resolve_outdated_diff_discussions: true,
        printing_merge_requests_link_enabled: false,
        ci_config_path: 'ci/pipeline.yml',
        tag_list: ['alpha', 'mid', 'zeta'],
      });
      // Issues and merge requests off: no open_issues_count, no links to them.
      expect(res.body).not.toHaveProperty('open_issues_count');
      expect(Object.keys(res.body._links).sort()).toEqual(['events', 'labels', 'members', 'repo_branches', 'self']);
    });

    it('takes tag_list as a JSON array or a comma-separated string', async () => {
      const json = await as(alice.token)
        .post('/projects')
        .send({ name: `Tags ${unique()}`, tag_list: ['b', 'a', 'b'] });
      expect(json.body.tag_list).toEqual(['a', 'b']);
      const csv = await as(alice.token)
        .post('/projects')
        .send({ name: `Tags ${unique()}`, tag_list: 'y,x' });
      expect(csv.body.tag_list).toEqual(['x', 'y']);
    });

    it('refuses a bad visibility value (400 Grape values)', async () => {
      const res = await as(alice.token)
        .post('/projects')
        .send({ name: `Bad ${unique()}`, visibility: 'secret' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'visibility does not have a valid value' });
    });

    it('reports a taken name and path in the namespace together (400), case-insensitively, and stores nothing', async () => {
      const s = unique();
      await make(alice.token, { name: `Dup ${s}`, path: `dup-${s}` });
      const before = await eventCount();
      const both = await as(alice.token)
        .post('/projects')
        .send({ name: `Dup ${s}` });
      expect(both.status).toBe(400);
      expect(both.body).toEqual({ message: { name: ['has already been taken'], path: ['has already been taken'] } });
      const name = await as(alice.token)
        .post('/projects')
        .send({ name: `dup ${s}`, path: `other-${s}` });
      expect(name.status).toBe(400);
      expect(name.body).toEqual({ message: { name: ['has already been taken'] } });
      const path = await as(alice.token)
        .post('/projects')
        .send({ name: `Other ${s}`, path: `DUP-${s}` });
      expect(path.status).toBe(400);
      expect(path.body).toEqual({ message: { path: ['has already been taken'] } });
      expect(await eventCount()).toBe(before);
      // The same path in another namespace is fine.
      expect(
        (
          await as(bob.token)
            .post('/projects')
            .send({ name: `Dup ${s}` })
        ).status,
      ).toBe(201);
    });

    it('reports a malformed name or path with GitLab messages (400)', async () => {
      const path = await as(alice.token)
        .post('/projects')
        .send({ name: `Fine ${unique()}`, path: '-starts-with-dash' });
      expect(path.status).toBe(400);
      expect(path.body).toEqual({
        message: {
          path: [
            "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-', end in '.git' or end in '.atom'",
          ],
        },
      });
      for (const p of ['ends.git', 'ends.atom', 'has space', 'has/slash']) {
        const res = await as(alice.token)
          .post('/projects')
          .send({ name: `Fine ${unique()}`, path: p });
        expect(res.status).toBe(400);
        expect(Object.keys(res.body.message)).toEqual(['path']);
      }
      const name = await as(alice.token)
        .post('/projects')
        .send({ name: '*stars*', path: `ok-${unique()}` });
      expect(name.status).toBe(400);
      expect(name.body).toEqual({
        message: {
          name: [
            "can contain only letters, digits, emojis, '_', '.', dash, space. It must start with letter, digit, emoji or '_'.",
          ],
        },
      });
      // A name with nothing ASCII parameterizes to an empty path, which GitLab reports as blank.
      const blank = await as(alice.token).post('/projects').send({ name: '日本' });
      expect(blank.status).toBe(400);
      expect(blank.body).toEqual({ message: { path: ["can't be blank"] } });
      const long = await as(alice.token)
        .post('/projects')
        .send({ name: 'n'.repeat(256), path: `ok-${unique()}` });
      expect(long.body).toEqual({ message: { name: ['is too long (maximum is 255 characters)'] } });
    });

    it('accepts a path ending in a dot (project paths, unlike namespace paths, may)', async () => {
      const res = await as(alice.token)
        .post('/projects')
        .send({ name: `Dot ${unique()}`, path: `dotted-${unique()}.` });
      expect(res.status).toBe(201);
    });

    describe('namespace_id', () => {
      it('takes the caller’s own namespace, explicitly or by default', async () => {
        const first = await make(alice.token);
        const nsId = (await as(alice.token).get(`/projects/${first.id}`)).body.namespace.id;
        const res = await as(alice.token)
          .post('/projects')
          .send({ name: `Own ${unique()}`, namespace_id: String(nsId) });
        expect(res.status).toBe(201);
        expect(res.body.namespace).toMatchObject({ id: nsId, kind: 'user' });
      });

      it('creates in a group for its maintainers and owners (no owner key, namespace of kind group)', async () => {
        for (const who of [maintainer, groupOwner]) {
          const res = await as(who.token)
            .post('/projects')
            .send({ name: `In group ${unique()}`, namespace_id: group.id, visibility: 'public' });
          expect(res.status).toBe(201);
          expectProject(res.body, 'project-in-group', { owner: false, adminFields: true });
          expect(res.body.namespace).toEqual({
            id: group.id,
            name: group.name,
            path: group.full_path,
            kind: 'group',
            full_path: group.full_path,
            parent_id: null,
          });
          expect(res.body.name_with_namespace).toBe(`${group.name} / ${res.body.name}`);
          expect(res.body.creator_id).toBe(who.id);
        }
      });

      it('lets administrators create in any group and in any user’s namespace', async () => {
        const inGroup = await admin()
          .post('/projects')
          .send({ name: `Admin ${unique()}`, namespace_id: group.id });
        expect(inGroup.status).toBe(201);
        const bobsNs = (await as(bob.token).get(`/projects/${(await make(bob.token)).id}`)).body.namespace.id;
        const inUser = await admin()
          .post('/projects')
          .send({ name: `For bob ${unique()}`, namespace_id: bobsNs });
        expect(inUser.status).toBe(201);
        expect(inUser.body.namespace.id).toBe(bobsNs);
        expect(inUser.body.owner.id).toBe(bob.id);
      });

      // GitLab's CreateService answers a namespace the caller may not create in (too low a level,
      // invisible, another user's, or unknown) with a validation error on `namespace`, not 403/404.
      it('refuses developers of the group, strangers, other users’ namespaces and unknown ids: 400 namespace is not valid', async () => {
        const privateGroup = await createGroup(t, { visibility: 'private' }, groupOwner.token);
        const bobsNs = (await as(bob.token).get(`/projects/${(await make(bob.token)).id}`)).body.namespace.id;
        const before = await eventCount();
        for (const [who, nsId] of [
          [developer, group.id],
          [guest, group.id],
          [bob, group.id],
          [bob, privateGroup.id],
          [alice, bobsNs],
          [alice, 999999],
        ] as const) {
          const res = await as(who.token)
            .post('/projects')
            .send({ name: `Denied ${unique()}`, namespace_id: nsId });
          expect(res.status).toBe(400);
          expect(res.body).toEqual({ message: { namespace: ['is not valid'] } });
        }
        expect(await eventCount()).toBe(before);
        const bad = await as(alice.token).post('/projects').send({ name: 'x', namespace_id: 'abc' });
        expect(bad.status).toBe(400);
        expect(bad.body).toEqual({ error: 'namespace_id is invalid' });
      });

      it('refuses a visibility more open than the group (400 visibility_level)', async () => {
        const internal = await createGroup(t, { visibility: 'internal' }, groupOwner.token);
        const res = await as(groupOwner.token)
          .post('/projects')
          .send({ name: `Too open ${unique()}`, namespace_id: internal.id, visibility: 'public' });
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ message: { visibility_level: ['public is not allowed in a internal group.'] } });
        const ok = await as(groupOwner.token)
          .post('/projects')
          .send({ name: `Fits ${unique()}`, namespace_id: internal.id, visibility: 'internal' });
        expect(ok.status).toBe(201);
      });
    });

    it('refuses personal projects past projects_limit (403); group projects do not count', async () => {
      const limited = await createUser(t, { projects_limit: 1 });
      expect((await as(limited.token).post('/projects').send({ name: 'first' })).status).toBe(201);
      const before = await eventCount();
      const second = await as(limited.token).post('/projects').send({ name: 'second' });
      expect(second.status).toBe(403);
      expect(second.body).toEqual({
        message: '403 Forbidden - Your project limit is 1 projects! Please contact your administrator to increase it',
      });
      expect(await eventCount()).toBe(before);
      const g = await createGroup(t, {}, limited.token);
      expect((await as(limited.token).post('/projects').send({ name: 'in group', namespace_id: g.id })).status).toBe(
        201,
      );
      const none = await createUser(t, { projects_limit: 0 });
      const zero = await as(none.token).post('/projects').send({ name: 'nope' });
      expect(zero.status).toBe(403);
      expect(zero.body).toEqual({
        message:
          '403 Forbidden - Personal project creation is not allowed. Please contact your administrator with questions',
      });
    });
  });

  describe('POST /projects/user/:user_id', () => {
    it('creates a project for the user, who is its creator and owner (administrators)', async () => {
      const res = await admin().post(`/projects/user/${bob.id}`).send({ name: 'Made For Bob', visibility: 'internal' });
      expect(res.status).toBe(201);
      expectProject(res.body, 'project-in-group', { owner: true, adminFields: true });
      expect(res.body).toMatchObject({
        name: 'Made For Bob',
        path: 'made-for-bob',
        visibility: 'internal',
        creator_id: bob.id,
        owner: { id: bob.id },
        namespace: { name: bob.username, kind: 'user' },
        path_with_namespace: `${bob.username}/made-for-bob`,
      });
      const mine = await as(bob.token).get(`/projects/${res.body.id}`);
      expect(mine.body.permissions.project_access).toEqual({ access_level: 40, notification_level: 3 });
    });

    it('requires the name (400 name is missing)', async () => {
      const res = await admin().post(`/projects/user/${bob.id}`).send({ path: 'no-name' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'name is missing' });
    });

    it('is for administrators: 403 others, 401 anonymous', async () => {
      forbidden(await as(alice.token).post(`/projects/user/${bob.id}`).send({ name: 'sneaky' }));
      unauthorized(await anon().post(`/projects/user/${bob.id}`).send({ name: 'sneaky' }));
    });

    it('404 User Not Found for an unknown user; 400 for a non-integer id', async () => {
      notFound(await admin().post('/projects/user/999999').send({ name: 'ghost' }), 'User');
      const bad = await admin().post('/projects/user/abc').send({ name: 'ghost' });
      expect(bad.status).toBe(400);
      expect(bad.body).toEqual({ error: 'user_id is invalid' });
    });
  });

  describe('GET /projects/:id', () => {
    let personal: { id: number; path_with_namespace: string };
    let nested: { id: number; path_with_namespace: string };
    let publicOne: { id: number };

    beforeAll(async () => {
      personal = await make(alice.token, { visibility: 'private' });
      const sub = (
        await as(groupOwner.token)
          .post('/groups')
          .send({ name: `Sub ${unique()}`, path: `sub-${unique()}`, parent_id: group.id, visibility: 'public' })
      ).body;
      nested = (
        await as(groupOwner.token)
          .post('/projects')
          .send({ name: `Nested ${unique()}`, namespace_id: sub.id, visibility: 'private' })
      ).body;
      publicOne = await make(alice.token, { visibility: 'public', tag_list: ['x'] });
    });

    it('finds a project by id and by URL-encoded full path (any case)', async () => {
      const byId = await as(alice.token).get(`/projects/${personal.id}`);
      expect(byId.status).toBe(200);
      const byPath = await as(alice.token).get(`/projects/${encodeURIComponent(personal.path_with_namespace)}`);
      expect(byPath.status).toBe(200);
      expect(byPath.body).toEqual(byId.body);
      const upper = await as(alice.token).get(
        `/projects/${encodeURIComponent(personal.path_with_namespace.toUpperCase())}`,
      );
      expect(upper.body.id).toBe(personal.id);
      expect(nested.path_with_namespace.split('/')).toHaveLength(3);
      const deep = await as(groupOwner.token).get(`/projects/${nested.path_with_namespace.replace(/\//g, '%2F')}`);
      expect(deep.status).toBe(200);
      expect(deep.body.id).toBe(nested.id);
      expectProject(deep.body, 'project', { owner: false, adminFields: true });
      // The subgroup's creator owns it: a membership of the project's own group, not of the project.
      expect(deep.body.permissions).toEqual({
        project_access: null,
        group_access: { access_level: 50, notification_level: 3 },
      });
    });

    it('answers 404 Project Not Found for private projects of others, unknown ids and paths', async () => {
      notFound(await as(bob.token).get(`/projects/${personal.id}`));
      notFound(await as(bob.token).get(`/projects/${encodeURIComponent(personal.path_with_namespace)}`));
      notFound(await anon().get(`/projects/${personal.id}`));
      notFound(await as(alice.token).get('/projects/999999'));
      notFound(await as(alice.token).get(`/projects/${encodeURIComponent(`${alice.username}/nothing-here`)}`));
      notFound(await as(alice.token).get('/projects/no-slash-at-all'));
    });

    it('shows public projects to anonymous callers in the basic shape (no permissions, no visibility)', async () => {
      const res = await anon().get(`/projects/${publicOne.id}`);
      expect(res.status).toBe(200);
      expectShape(res.body, 'project-simple');
      expect(res.body).toMatchObject({ id: publicOne.id, tag_list: ['x'] });
      const stats = await anon().get(`/projects/${publicOne.id}?statistics=true`);
      expectShape(stats.body, 'project-simple');
    });

    it('shows public projects to strangers with null permissions and without the administrators’ fields', async () => {
      const res = await as(bob.token).get(`/projects/${publicOne.id}`);
      expect(res.status).toBe(200);
      expectProject(res.body, 'project', { owner: true, adminFields: false });
      expect(res.body.permissions).toEqual({ project_access: null, group_access: null });
    });

    it('adds statistics when asked, for those who may read them', async () => {
      const res = await as(alice.token).get(`/projects/${personal.id}`).query({ statistics: 'true' });
      expectProject(res.body, 'project', { owner: true, adminFields: true, statistics: true });
      expect(res.body.statistics).toEqual({
        commit_count: 0,
        storage_size: 0,
        repository_size: 0,
        lfs_objects_size: 0,
        job_artifacts_size: 0,
      });
      const byAdmin = await admin().get(`/projects/${personal.id}?statistics=1`);
      expectProject(byAdmin.body, 'project', { owner: true, adminFields: true, statistics: true });
      const without = await as(alice.token).get(`/projects/${personal.id}?statistics=false`);
      expectProject(without.body, 'project', { owner: true, adminFields: true });
      // Lode follows GitLab's later read_statistics rule (reporters and up), so a stranger gets none.
      const stranger = await as(bob.token).get(`/projects/${publicOne.id}?statistics=true`);
      expectProject(stranger.body, 'project', { owner: true, adminFields: false });
    });

    it('shows runners_token and import_error to maintainers, owners and administrators only', async () => {
      const p = await make(groupOwner.token, { namespace_id: group.id, visibility: 'public' });
      for (const [who, admins] of [
        [groupOwner, true],
        [maintainer, true],
        [developer, false],
        [guest, false],
        [bob, false],
      ] as const) {
        const res = await as(who.token).get(`/projects/${p.id}`);
        expect(res.status).toBe(200);
        expectProject(res.body, 'project', { owner: false, adminFields: admins });
      }
      const byAdmin = await admin().get(`/projects/${p.id}`);
      expectProject(byAdmin.body, 'project', { owner: false, adminFields: true });
      expect(byAdmin.body.permissions).toEqual({ project_access: null, group_access: null });
      // group_access is the caller's own membership of the project's group.
      const dev = await as(developer.token).get(`/projects/${p.id}`);
      expect(dev.body.permissions).toEqual({
        project_access: null,
        group_access: { access_level: 30, notification_level: 3 },
      });
      const own = await as(groupOwner.token).get(`/projects/${p.id}`);
      expect(own.body.permissions).toEqual({
        project_access: null,
        group_access: { access_level: 50, notification_level: 3 },
      });
    });
  });

  describe('PUT /projects/:id', () => {
    let groupProject: { id: number; name: string };

    beforeEach(async () => {
      groupProject = await make(groupOwner.token, { namespace_id: group.id, visibility: 'private' });
    });

    it('lets the owner rename, move the path, change visibility, switches and tags (200, the entity)', async () => {
      const p = await make(alice.token);
      const s = unique();
      const res = await as(alice.token)
        .put(`/projects/${p.id}`)
        .send({
          name: `Renamed ${s}`,
          path: `renamed-${s}`,
          description: 'now described',
          visibility: 'public',
          issues_enabled: 'false',
          wiki_enabled: false,
          tag_list: ['zz', 'aa'],
          default_branch: 'main',
          request_access_enabled: 'true',
        });
      expect(res.status).toBe(200);
      expectProject(res.body, 'project-in-group', { owner: true, adminFields: true, issues: false });
      expect(res.body).toMatchObject({
        id: p.id,
        name: `Renamed ${s}`,
        path: `renamed-${s}`,
        path_with_namespace: `${alice.username}/renamed-${s}`,
        description: 'now described',
        visibility: 'public',
        issues_enabled: false,
        wiki_enabled: false,
        tag_list: ['aa', 'zz'],
        default_branch: 'main',
        request_access_enabled: true,
        web_url: `http://lode.test/${alice.username}/renamed-${s}`,
      });
      expect(Date.parse(res.body.last_activity_at)).toBeGreaterThanOrEqual(Date.parse(res.body.created_at));
      expect(
        (await as(alice.token).get(`/projects/${encodeURIComponent(`${alice.username}/renamed-${s}`)}`)).body.id,
      ).toBe(p.id);
      notFound(await as(alice.token).get(`/projects/${encodeURIComponent(p.path_with_namespace)}`));
      // Now public: strangers see it.
      expect((await as(bob.token).get(`/projects/${p.id}`)).status).toBe(200);
      const visible = await as(alice.token).put(`/projects/${p.id}`).send({ visibility: 'private' });
      expect(visible.body.visibility).toBe('private');
      notFound(await as(bob.token).get(`/projects/${p.id}`));
    });

    it('keeps the same name and path without calling them taken', async () => {
      const p = await make(alice.token);
      const res = await as(alice.token).put(`/projects/${p.id}`).send({ name: p.name, path: p.path });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ name: p.name, path: p.path });
    });

    it('lets maintainers change settings and the path, but not the name or visibility (GitLab: rename_project, change_visibility_level are owner rights)', async () => {
      const res = await as(maintainer.token)
        .put(`/projects/${groupProject.id}`)
        .send({ description: 'by a maintainer', snippets_enabled: false });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ description: 'by a maintainer', snippets_enabled: false });
      const path = await as(maintainer.token)
        .put(`/projects/${groupProject.id}`)
        .send({ path: `moved-${unique()}` });
      expect(path.status).toBe(200);
      forbidden(await as(maintainer.token).put(`/projects/${groupProject.id}`).send({ name: 'Renamed by maintainer' }));
      forbidden(await as(maintainer.token).put(`/projects/${groupProject.id}`).send({ visibility: 'internal' }));
      const byOwner = await as(groupOwner.token)
        .put(`/projects/${groupProject.id}`)
        .send({ name: `Owner rename ${unique()}`, visibility: 'internal' });
      expect(byOwner.status).toBe(200);
      expect(byOwner.body.visibility).toBe('internal');
      const byAdmin = await admin()
        .put(`/projects/${groupProject.id}`)
        .send({ name: `Admin rename ${unique()}` });
      expect(byAdmin.status).toBe(200);
    });

    it('refuses developers and guests (403), hides private projects from strangers (404), wants a token (401)', async () => {
      forbidden(await as(developer.token).put(`/projects/${groupProject.id}`).send({ description: 'no' }));
      forbidden(await as(guest.token).put(`/projects/${groupProject.id}`).send({ description: 'no' }));
      notFound(await as(bob.token).put(`/projects/${groupProject.id}`).send({ description: 'no' }));
      unauthorized(await anon().put(`/projects/${groupProject.id}`).send({ description: 'no' }));
      const internal = await make(alice.token, { visibility: 'internal' });
      forbidden(await as(bob.token).put(`/projects/${internal.id}`).send({ description: 'no' }));
    });

    it('needs at least one attribute (400)', async () => {
      const res = await as(groupOwner.token).put(`/projects/${groupProject.id}`).send({ unknown_field: 'x' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error:
          'jobs_enabled, resolve_outdated_diff_discussions, ci_config_path, container_registry_enabled, default_branch, description, ' +
          'issues_enabled, lfs_enabled, merge_requests_enabled, name, only_allow_merge_if_all_discussions_are_resolved, ' +
          'only_allow_merge_if_pipeline_succeeds, path, printing_merge_request_link_enabled, public_jobs, request_access_enabled, ' +
          'shared_runners_enabled, snippets_enabled, tag_list, visibility, wiki_enabled, merge_method, issues_access_level, ' +
          'repository_access_level, merge_requests_access_level, forking_access_level, wiki_access_level, builds_access_level, ' +
          'snippets_access_level, pages_access_level, operations_access_level, analytics_access_level, requirements_access_level, ' +
          'security_and_compliance_access_level, container_registry_access_level, squash_option, topics, packages_enabled, ' +
          'remove_source_branch_after_merge, allow_merge_on_skipped_pipeline, autoclose_referenced_issues, ' +
          'ci_forward_deployment_enabled, merge_pipelines_enabled, merge_trains_enabled are missing, at least one parameter must be provided',
      });
    });

    it('reports taken names and paths in the namespace (400) and invalid values', async () => {
      const other = await make(groupOwner.token, { namespace_id: group.id });
      const name = await as(groupOwner.token).put(`/projects/${groupProject.id}`).send({ name: other.name });
      expect(name.status).toBe(400);
      expect(name.body).toEqual({ message: { name: ['has already been taken'] } });
      const path = await as(groupOwner.token)
        .put(`/projects/${groupProject.id}`)
        .send({ path: other.path.toUpperCase() });
      expect(path.body).toEqual({ message: { path: ['has already been taken'] } });
      const both = await as(groupOwner.token)
        .put(`/projects/${groupProject.id}`)
        .send({ name: other.name, path: other.path });
      expect(both.body).toEqual({ message: { name: ['has already been taken'], path: ['has already been taken'] } });
      const bad = await as(groupOwner.token).put(`/projects/${groupProject.id}`).send({ path: 'bad path' });
      expect(bad.status).toBe(400);
      expect(Object.keys(bad.body.message)).toEqual(['path']);
      const vis = await as(groupOwner.token).put(`/projects/${groupProject.id}`).send({ visibility: 'nope' });
      expect(vis.body).toEqual({ error: 'visibility does not have a valid value' });
      const privateGroup = await createGroup(t, { visibility: 'private' }, groupOwner.token);
      const inPrivate = await make(groupOwner.token, { namespace_id: privateGroup.id });
      const open = await as(groupOwner.token).put(`/projects/${inPrivate.id}`).send({ visibility: 'public' });
      expect(open.status).toBe(400);
      expect(open.body).toEqual({ message: { visibility_level: ['public is not allowed in a private group.'] } });
    });
  });

  describe('DELETE /projects/:id', () => {
    it('answers 202 Accepted to the owner, then the project is gone and its path free', async () => {
      const p = await make(alice.token);
      const res = await as(alice.token).delete(`/projects/${p.id}`);
      expect(res.status).toBe(202);
      expect(res.body).toEqual({ message: '202 Accepted' });
      notFound(await as(alice.token).get(`/projects/${p.id}`));
      notFound(await as(alice.token).delete(`/projects/${p.id}`));
      expect((await as(alice.token).post('/projects').send({ name: p.name, path: p.path })).status).toBe(201);
    });

    it('is for owners and administrators: 403 maintainers and developers, 404 invisible, 401 anonymous', async () => {
      const p = await make(groupOwner.token, { namespace_id: group.id, visibility: 'private' });
      forbidden(await as(developer.token).delete(`/projects/${p.id}`));
      forbidden(await as(maintainer.token).delete(`/projects/${p.id}`));
      notFound(await as(bob.token).delete(`/projects/${p.id}`));
      unauthorized(await anon().delete(`/projects/${p.id}`));
      expect((await admin().delete(`/projects/${p.id}`)).status).toBe(202);
      const q = await make(groupOwner.token, { namespace_id: group.id });
      expect((await as(groupOwner.token).delete(`/projects/${q.id}`)).status).toBe(202);
    });
  });

  describe('archive and unarchive', () => {
    it('archives and unarchives for the owner (201 with the project, idempotent)', async () => {
      const p = await make(alice.token);
      for (const [action, archived] of [
        ['archive', true],
        ['archive', true],
        ['unarchive', false],
        ['unarchive', false],
      ] as const) {
        const res = await as(alice.token).post(`/projects/${p.id}/${action}`);
        expect(res.status).toBe(201);
        // GitLab presents these with the plain Project entity and no user_can_admin_project.
        expectProject(res.body, 'project-in-group', { owner: true, adminFields: false });
        expect(res.body).toMatchObject({ id: p.id, archived });
      }
    });

    it('is for owners (personal or group) and administrators: 403 maintainers and developers, 404 invisible, 401 anonymous', async () => {
      const p = await make(groupOwner.token, { namespace_id: group.id, visibility: 'private' });
      forbidden(await as(maintainer.token).post(`/projects/${p.id}/archive`));
      forbidden(await as(developer.token).post(`/projects/${p.id}/archive`));
      notFound(await as(bob.token).post(`/projects/${p.id}/archive`));
      unauthorized(await anon().post(`/projects/${p.id}/archive`));
      expect((await as(groupOwner.token).post(`/projects/${p.id}/archive`)).body.archived).toBe(true);
      forbidden(await as(maintainer.token).post(`/projects/${p.id}/unarchive`));
      expect((await admin().post(`/projects/${p.id}/unarchive`)).body.archived).toBe(false);
      expect((await admin().post(`/projects/${p.id}/archive`)).status).toBe(201);
    });

    // GitLab 10.x lists hide archived projects unless `archived=true`, which lists them with the others.
    it('shows in the archived filter', async () => {
      const p = await make(alice.token);
      await as(alice.token).post(`/projects/${p.id}/archive`);
      const ids = async (q: string) =>
        ((await as(alice.token).get(`/projects?owned=true&per_page=100&${q}`)).body as { id: number }[]).map(
          (x) => x.id,
        );
      expect(await ids('archived=true')).toContain(p.id);
      expect(await ids('archived=false')).not.toContain(p.id);
      expect(await ids('')).not.toContain(p.id);
      await as(alice.token).post(`/projects/${p.id}/unarchive`);
      expect(await ids('')).toContain(p.id);
      expect(await ids('archived=true')).toContain(p.id);
    });
  });

  describe('star and unstar', () => {
    it('counts stars; starring twice or unstarring an unstarred project is 304 with no body', async () => {
      const p = await make(alice.token, { visibility: 'public' });
      const first = await as(alice.token).post(`/projects/${p.id}/star`);
      expect(first.status).toBe(201);
      expectProject(first.body, 'project-in-group', { owner: true, adminFields: false });
      expect(first.body.star_count).toBe(1);
      const again = await as(alice.token).post(`/projects/${p.id}/star`);
      expect(again.status).toBe(304);
      expect(again.text).toBe('');
      expect((await as(bob.token).post(`/projects/${p.id}/star`)).body.star_count).toBe(2);
      const un = await as(alice.token).post(`/projects/${p.id}/unstar`);
      expect(un.status).toBe(201);
      expect(un.body.star_count).toBe(1);
      const unAgain = await as(alice.token).post(`/projects/${p.id}/unstar`);
      expect(unAgain.status).toBe(304);
      expect(unAgain.text).toBe('');
      expect((await as(alice.token).get(`/projects/${p.id}`)).body.star_count).toBe(1);
      const starred = await as(bob.token).get('/projects?starred=true');
      expect(starred.body.map((x: { id: number }) => x.id)).toEqual([p.id]);
      expect((await as(alice.token).get('/projects?starred=true')).body).toEqual([]);
    });

    it('401 anonymous, 404 for a project the caller cannot see', async () => {
      const p = await make(alice.token);
      unauthorized(await anon().post(`/projects/${p.id}/star`));
      notFound(await as(bob.token).post(`/projects/${p.id}/star`));
      notFound(await as(bob.token).post(`/projects/${p.id}/unstar`));
    });
  });

  describe('custom attributes', () => {
    it('are administered by administrators and filter GET /projects for them only', async () => {
      const p = await make(alice.token, { visibility: 'public' });
      const other = await make(alice.token, { visibility: 'public' });
      const key = `colour${unique()}`;
      const set = await admin().put(`/projects/${p.id}/custom_attributes/${key}`).send({ value: 'blue' });
      expect(set.status).toBe(200);
      expectShape(set.body, 'custom-attribute');
      expect(set.body).toEqual({ key, value: 'blue' });
      await admin().put(`/projects/${other.id}/custom_attributes/${key}`).send({ value: 'red' });
      expect((await admin().get(`/projects/${p.id}/custom_attributes`)).body).toEqual([{ key, value: 'blue' }]);
      expect((await admin().get(`/projects/${p.id}/custom_attributes/${key}`)).body).toEqual({ key, value: 'blue' });
      const filtered = await admin().get(`/projects?custom_attributes[${key}]=blue`);
      expect(filtered.body.map((x: { id: number }) => x.id)).toEqual([p.id]);
      expect(filtered.headers['x-total']).toBe('1');
      // Others' filters are ignored, as GitLab's finder does.
      const ignored = await as(alice.token).get(`/projects?custom_attributes[${key}]=blue&owned=true&per_page=100`);
      expect(ignored.body.map((x: { id: number }) => x.id)).toEqual(expect.arrayContaining([p.id, other.id]));
      forbidden(await as(alice.token).get(`/projects/${p.id}/custom_attributes`));
      forbidden(await as(alice.token).put(`/projects/${p.id}/custom_attributes/${key}`).send({ value: 'x' }));
      unauthorized(await anon().get(`/projects/${p.id}/custom_attributes`));
      const missing = await admin().put(`/projects/${p.id}/custom_attributes/${key}`).send({});
      expect(missing.body).toEqual({ error: 'value is missing' });
      expect((await admin().delete(`/projects/${p.id}/custom_attributes/${key}`)).status).toBe(204);
      const gone = await admin().get(`/projects/${p.id}/custom_attributes/${key}`);
      expect(gone.status).toBe(404);
      expect(gone.body).toEqual({ message: '404 Not found' });
      expect((await admin().delete(`/projects/${p.id}/custom_attributes/${key}`)).status).toBe(404);
      notFound(await admin().get('/projects/999999/custom_attributes'));
    });
  });

  describe('POST /projects statement count', () => {
    it('creates a personal project, its audit entries and memory in a bounded number of statements', async () => {
      await make(alice.token); // warm: the token cached, today's activity recorded
      const counter = countStatements();
      try {
        const id = `stmt-${unique()}`;
        const res = await as(alice.token)
          .post('/projects')
          .set('X-Request-Id', id)
          .send({ name: `Counted ${unique()}` });
        expect(res.status).toBe(201);
        // 29 before the append batch (the audit projection 8 of them, the events inserted one by one, the
        // stream locked and folded though its id is new, the limit and taken checks apart), 18 now: the
        // token, the namespace, the owner, the count and taken check, nextval; begin, the events with
        // the stream's lock, the project, member and activity rows, the audit log's one read and two
        // writes, the NOTIFY, commit; the answer's read; and the fences, which requests share.
        const n = counter.forRequest(id);
        expect(n).toBeLessThanOrEqual(19);
        // What the audit log recorded for it, and what it remembers, is all there.
        const me = await as(alice.token).get('/user');
        const entries = await t.db.query(
          `select entity_type, details from audit_events where entity_type = 'Project' and entity_id = $1 order by id`,
          [res.body.id],
        );
        expect(entries.map((e: { details: Record<string, unknown> }) => e.details)).toEqual([
          // A creation names its project's path (GitLab's target_details and entity_path), though the
          // projector remembers the project only after it.
          expect.objectContaining({
            change: 'created',
            target_type: 'Project',
            author_name: me.body.name,
            target_details: res.body.path_with_namespace,
            entity_path: res.body.path_with_namespace,
          }),
          // The second event finds the project the first one left in mind: its path, not null.
          expect.objectContaining({
            change: 'added member',
            to: 'Maintainer',
            target_type: 'User',
            target_details: alice.username,
            entity_path: res.body.path_with_namespace,
          }),
        ]);
        const [remembered] = await t.db.query(
          `select path, name from audit_entities where entity_type = 'Project' and entity_id = $1`,
          [res.body.id],
        );
        expect(remembered).toEqual({ path: res.body.path_with_namespace, name: res.body.name });
      } finally {
        counter.restore();
      }
    });
  });

  describe('GET /projects/:id/forks', () => {
    it('is an empty page for a project without forks; 404 when invisible', async () => {
      const p = await make(alice.token, { visibility: 'public' });
      const res = await anon().get(`/projects/${p.id}/forks`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual([]);
      expect(res.headers['x-total']).toBe('0');
      expect(res.headers['x-total-pages']).toBe('1');
      const q = await make(alice.token);
      notFound(await as(bob.token).get(`/projects/${q.id}/forks`));
      expect((await as(alice.token).get(`/projects/${q.id}/forks`)).body).toEqual([]);
    });
  });
});
