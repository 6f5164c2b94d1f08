import type { Gitlab } from '@gitbeaker/rest' with { 'resolution-mode': 'import' };
import { runPython } from '../support/python-gitlab';
import { createUser, type SeededUser } from '../support/seed';
import { freePort, startTestApp, type TestApp } from '../support/test-app';

/**
 * The instance's routes: `GET /metadata` (GitLab 15.2) answering the version `/version` answers, and
 * `GET /application/settings` (administrators only), answered from Lode's configuration. Through
 * python-gitlab 3.12 (`gl.version()`, `gl.settings.get()`), gitbeaker (`Metadata.show`,
 * `ApplicationSettings.show`) and plain HTTP for statuses and permissions.
 */

const PYTHON_NAMESPACES = `
import json, sys, warnings
import gitlab
warnings.simplefilter("ignore")
url, token, group_path = sys.argv[1], sys.argv[2], sys.argv[3]
gl = gitlab.Gitlab(url, private_token=token)
out = {}
out["list"] = sorted(n.full_path for n in gl.namespaces.list(get_all=True))
out["search"] = [n.full_path for n in gl.namespaces.list(search=group_path)]
g = gl.namespaces.get(group_path)
out["get"] = [g.kind, g.full_path]
e = gl.namespaces.exists(group_path)
out["exists"] = [e.exists, e.suggests]
f = gl.namespaces.exists("nobody-has-this")
out["free"] = [f.exists, f.suggests]
try:
    gl.namespaces.get("no/such/namespace")
    out["missing"] = None
except gitlab.exceptions.GitlabGetError as e:
    out["missing"] = [e.response_code, e.error_message]
print(json.dumps(out))
`;

const PYTHON = `
import json, sys, warnings
import gitlab
warnings.simplefilter("ignore")
url, token = sys.argv[1], sys.argv[2]
gl = gitlab.Gitlab(url, private_token=token)
s = gl.settings.get()
print(json.dumps({"version": list(gl.version()), "protection": s.default_branch_protection,
                  "signup": s.signup_enabled, "limit": s.default_projects_limit}))
`;

describe('instance routes', () => {
  let t: TestApp;
  let host: string;
  let user: SeededUser;
  let gb: typeof import('@gitbeaker/rest', { with: { 'resolution-mode': 'import' } });
  let api: InstanceType<typeof Gitlab<false>>;

  beforeAll(async () => {
    const port = await freePort();
    host = `http://127.0.0.1:${port}`;
    t = await startTestApp({
      externalUrl: host,
      defaultBranchProtection: 1,
      gravatar: false,
      rateLimitAuthenticated: 600,
      maxUploadBytes: 5 * 1024 * 1024,
    });
    await t.app.listen(port, '127.0.0.1');
    user = await createUser(t);
    gb = await import('@gitbeaker/rest');
    api = new gb.Gitlab({ host, token: t.rootToken });
  });
  afterAll(async () => {
    await t?.close();
  });

  describe('GET /metadata', () => {
    it('answers the version and revision of /version, no KAS, not enterprise', async () => {
      const version = await t.http().get('/api/v4/version').set('PRIVATE-TOKEN', user.token);
      expect(version.status).toBe(200);
      const res = await t.http().get('/api/v4/metadata').set('PRIVATE-TOKEN', user.token);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        version: version.body.version,
        revision: version.body.revision,
        kas: { enabled: false, externalUrl: null, version: null },
        enterprise: false,
      });
      expect(res.body.version).toMatch(/^\d+\.\d+\.\d+/);
    });

    it('needs a token (401), as GitLab', async () => {
      const res = await t.http().get('/api/v4/metadata');
      expect([res.status, res.body]).toEqual([401, { message: '401 Unauthorized' }]);
    });

    it("gitbeaker's Metadata.show", async () => {
      const shown = await api.Metadata.show();
      expect(shown).toMatchObject({ kas: { enabled: false }, enterprise: false });
    });
  });

  describe('/namespaces', () => {
    let owner: SeededUser;
    let member: SeededUser;
    let group: { id: number; full_path: string };
    let sub: { id: number; full_path: string };
    const get = (token: string, path: string) => t.http().get(`/api/v4${path}`).set('PRIVATE-TOKEN', token);

    beforeAll(async () => {
      owner = await createUser(t, { username: `nsowner${Date.now() % 100000}` });
      member = await createUser(t);
      const made = await t
        .http()
        .post('/api/v4/groups')
        .set('PRIVATE-TOKEN', owner.token)
        .send({ name: 'Space Team', path: `space-team-${owner.id}` });
      expect(made.status).toBe(201);
      group = made.body;
      const child = await t
        .http()
        .post('/api/v4/groups')
        .set('PRIVATE-TOKEN', owner.token)
        .send({ name: 'Rockets', path: 'rockets', parent_id: group.id });
      expect(child.status).toBe(201);
      sub = child.body;
      const added = await t
        .http()
        .post(`/api/v4/groups/${group.id}/members`)
        .set('PRIVATE-TOKEN', owner.token)
        .send({ user_id: member.id, access_level: 30 });
      expect(added.status).toBe(201);
    });

    it("lists the caller's personal namespace and groups; owned_only keeps the owned ones", async () => {
      const mine = await get(member.token, '/namespaces');
      expect(mine.status).toBe(200);
      expect(mine.headers['x-total']).toBe('2');
      expect(mine.body).toEqual([
        {
          id: expect.any(Number),
          name: member.username,
          path: member.username,
          kind: 'user',
          full_path: member.username,
          parent_id: null,
          avatar_url: null,
          web_url: `${host}/${member.username}`,
        },
        {
          id: group.id,
          name: 'Space Team',
          path: group.full_path,
          kind: 'group',
          full_path: group.full_path,
          parent_id: null,
          avatar_url: null,
          web_url: `${host}/groups/${group.full_path}`,
        },
      ]);
      const owned = await get(member.token, '/namespaces?owned_only=true');
      expect(owned.body.map((n: { kind: string }) => n.kind)).toEqual(['user']);
      // An owner sees the members of the group and its subgroups counted.
      const ownerList = await get(owner.token, '/namespaces');
      expect(ownerList.body.map((n: { full_path: string }) => n.full_path)).toEqual([
        owner.username,
        group.full_path,
        sub.full_path,
      ]);
      expect(ownerList.body[1].members_count_with_descendants).toBe(2);
      const search = await get(owner.token, '/namespaces?search=ROCK');
      expect(search.body.map((n: { id: number }) => n.id)).toEqual([sub.id]);
      const top = await get(owner.token, '/namespaces?top_level_only=true');
      expect(top.body.map((n: { id: number }) => n.id)).not.toContain(sub.id);
      // Administrators see every namespace.
      const all = await get(t.rootToken, '/namespaces?per_page=100');
      expect(all.body.map((n: { id: number }) => n.id)).toEqual(expect.arrayContaining([group.id, sub.id]));
      expect(Number(all.headers['x-total'])).toBeGreaterThanOrEqual(6);
    });

    it('shows one namespace by id or URL-encoded path; 404 to those who may not read it', async () => {
      const byId = await get(member.token, `/namespaces/${group.id}`);
      expect([byId.status, byId.body.full_path]).toEqual([200, group.full_path]);
      const byPath = await get(member.token, `/namespaces/${encodeURIComponent(sub.full_path)}`);
      expect([byPath.status, byPath.body.id]).toEqual([200, sub.id]);
      const personal = await get(member.token, `/namespaces/${member.username}`);
      expect(personal.body).toMatchObject({ kind: 'user', full_path: member.username });
      for (const path of [`/namespaces/${owner.username}`, `/namespaces/999999`, '/namespaces/nope']) {
        const res = await get(user.token, path);
        expect([path, res.status, res.body]).toEqual([path, 404, { message: '404 Namespace Not Found' }]);
      }
      expect((await get(user.token, `/namespaces/${group.id}`)).status).toBe(404);
      expect((await get(t.rootToken, `/namespaces/${group.id}`)).status).toBe(200);
      expect((await t.http().get('/api/v4/namespaces')).status).toBe(401);
      expect((await t.http().get(`/api/v4/namespaces/${group.id}`)).status).toBe(401);
    });

    it('says whether a path exists at the top level or under a parent, with a free one to suggest', async () => {
      const taken = await get(user.token, `/namespaces/${group.full_path}/exists`);
      expect([taken.status, taken.body]).toEqual([200, { exists: true, suggests: [`${group.full_path}1`] }]);
      const upper = await get(user.token, `/namespaces/${group.full_path.toUpperCase()}/exists`);
      expect(upper.body.exists).toBe(true);
      expect((await get(user.token, '/namespaces/rockets/exists')).body).toEqual({ exists: false, suggests: [] });
      expect((await get(user.token, `/namespaces/rockets/exists?parent_id=${group.id}`)).body).toEqual({
        exists: true,
        suggests: ['rockets1'],
      });
      const bad = await get(user.token, '/namespaces/rockets/exists?parent_id=x');
      expect([bad.status, bad.body]).toEqual([400, { error: 'parent_id is invalid' }]);
      expect((await t.http().get('/api/v4/namespaces/rockets/exists')).status).toBe(401);
    });

    it("python-gitlab 3.12's gl.namespaces and gitbeaker's Namespaces", async () => {
      const out = JSON.parse(await runPython(PYTHON_NAMESPACES, [host, member.token, group.full_path]));
      expect(out).toEqual({
        list: [member.username, group.full_path].sort(),
        search: [group.full_path],
        get: ['group', group.full_path],
        exists: [true, [`${group.full_path}1`]],
        free: [false, []],
        missing: [404, '404 Namespace Not Found'],
      });
      const asMember = new gb.Gitlab({ host, token: member.token });
      const all = await asMember.Namespaces.all();
      expect(all.map((n) => n.id)).toContain(group.id);
      expect(await asMember.Namespaces.show(group.full_path)).toMatchObject({ id: group.id, kind: 'group' });
      expect(await asMember.Namespaces.exists('rockets', { parentId: String(group.id) })).toMatchObject({
        exists: true,
      });
    });
  });

  describe('GET /application/settings', () => {
    it("answers administrators from Lode's configuration", async () => {
      const res = await t.http().get('/api/v4/application/settings').set('PRIVATE-TOKEN', t.rootToken);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        id: 1,
        default_branch_protection: 1,
        gravatar_enabled: false,
        max_attachment_size: 5,
        throttle_authenticated_api_enabled: true,
        throttle_authenticated_api_requests_per_period: 600,
        throttle_unauthenticated_enabled: false,
        allow_local_requests_from_web_hooks_and_services: false,
        default_project_visibility: 'private',
        default_projects_limit: 100000,
        signup_enabled: false,
        restricted_visibility_levels: [],
      });
      expect(typeof res.body.created_at).toBe('string');
    });

    it('is 403 for other users and 401 without a token', async () => {
      const other = await t.http().get('/api/v4/application/settings').set('PRIVATE-TOKEN', user.token);
      expect([other.status, other.body]).toEqual([403, { message: '403 Forbidden' }]);
      const anonymous = await t.http().get('/api/v4/application/settings');
      expect([anonymous.status, anonymous.body]).toEqual([401, { message: '401 Unauthorized' }]);
    });

    it("python-gitlab 3.12's gl.settings.get() and gl.version(); gitbeaker's ApplicationSettings.show", async () => {
      const version = (await t.http().get('/api/v4/version').set('PRIVATE-TOKEN', t.rootToken)).body;
      const out = JSON.parse(await runPython(PYTHON, [host, t.rootToken]));
      expect(out).toEqual({
        version: [version.version, version.revision],
        protection: 1,
        signup: false,
        limit: 100000,
      });
      const shown = await api.ApplicationSettings.show();
      expect(shown).toMatchObject({ default_branch_protection: 1, signup_enabled: false });
    });
  });
});
