import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { git, gitOk, tempDirs } from '../support/git';
import { createUser, type SeededUser } from '../support/seed';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * One caller, one policy. GitLab's `download_code` on an INTERNAL project (ProjectAccessPolicy): every
 * signed-in user who is not external may read its code (`internal_access`); an external user needs
 * reporter, like anyone on a private project. The same rule answers the repository API, git over HTTP
 * and forks; git's caller comes from the same ActorResolver as the API's.
 */
describe('project access: download_code on an internal project, and the caller over git', () => {
  let t: TestApp;
  let base: string;
  let owner: SeededUser;
  let insider: SeededUser;
  let externalGuest: SeededUser;
  let externalReporter: SeededUser;
  let externalStranger: SeededUser;
  let project: { id: number; path_with_namespace: string };
  let head: string;
  let readme: string;
  const tmp = tempDirs();

  const api = (token?: string) => ({
    get: (path: string) => {
      const r = t.http().get(`/api/v4${path}`);
      return token ? r.set('PRIVATE-TOKEN', token) : r;
    },
    post: (path: string, body: object = {}) => {
      const r = t.http().post(`/api/v4${path}`);
      return (token ? r.set('PRIVATE-TOKEN', token) : r).send(body);
    },
  });
  const url = (token?: string) => `http://${token ? `git:${token}@` : ''}${base}/${project.path_with_namespace}.git`;
  const infoRefs = (token?: string) =>
    fetch(`${url()}/info/refs?service=git-upload-pack`, {
      headers: token ? { authorization: `Basic ${Buffer.from(`x:${token}`).toString('base64')}` } : {},
    });

  beforeAll(async () => {
    t = await startTestApp();
    await t.app.listen(0, '127.0.0.1');
    base = `127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    owner = await createUser(t);
    insider = await createUser(t);
    externalGuest = await createUser(t, { external: true });
    externalReporter = await createUser(t, { external: true });
    externalStranger = await createUser(t, { external: true });
    project = (await api(owner.token).post('/projects', { name: 'Inside', visibility: 'internal' })).body;
    for (const [u, level] of [
      [externalGuest, 10],
      [externalReporter, 20],
    ] as const)
      expect(
        (await api(owner.token).post(`/projects/${project.id}/members`, { user_id: u.id, access_level: level })).status,
      ).toBe(201);

    const work = tmp.make();
    await gitOk(['init', '-q', '-b', 'master', work]);
    writeFileSync(join(work, 'README.md'), '# Inside\n');
    await gitOk(['add', '-A'], work);
    await gitOk(['commit', '-q', '-m', 'first'], work);
    await gitOk(['push', '-q', url(owner.token), 'master'], work);
    head = (await gitOk(['rev-parse', 'HEAD'], work)).trim();
    readme = (await gitOk(['rev-parse', 'HEAD:README.md'], work)).trim();
  });
  afterAll(async () => {
    tmp.removeAll();
    await t.close();
  });

  describe('through the repository API', () => {
    const reads = () => [
      '/repository/tree',
      `/repository/blobs/${readme}`,
      `/repository/blobs/${readme}/raw`,
      '/repository/archive',
      `/repository/compare?from=${head}&to=${head}`,
      '/repository/contributors',
      '/repository/branches',
    ];

    it('serves a signed-in user who is not external and not a member (internal_access)', async () => {
      for (const path of reads())
        expect((await api(insider.token).get(`/projects/${project.id}${path}`)).status).toBe(200);
    });

    it('refuses an external guest with 403, though the project is visible to them', async () => {
      expect((await api(externalGuest.token).get(`/projects/${project.id}`)).status).toBe(200);
      for (const path of reads()) {
        const res = await api(externalGuest.token).get(`/projects/${project.id}${path}`);
        expect(res.status).toBe(403);
        expect(res.body).toEqual({ message: '403 Forbidden' });
      }
    });

    it('serves an external reporter', async () => {
      for (const path of reads())
        expect((await api(externalReporter.token).get(`/projects/${project.id}${path}`)).status).toBe(200);
    });

    it('hides the project from an external non-member and from anonymous callers (404)', async () => {
      for (const token of [externalStranger.token, undefined]) {
        const res = await api(token).get(`/projects/${project.id}/repository/tree`);
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ message: '404 Project Not Found' });
      }
    });
  });

  describe('through git over HTTP', () => {
    it('lets a signed-in user who is not external clone', async () => {
      const dir = join(tmp.make(), 'c');
      await gitOk(['clone', '--quiet', url(insider.token), dir]);
      expect((await gitOk(['rev-parse', 'HEAD'], dir)).trim()).toBe(head);
    });

    it("refuses an external guest's clone with 403 and git's words", async () => {
      const res = await infoRefs(externalGuest.token);
      expect(res.status).toBe(403);
      expect(await res.text()).toBe('You are not allowed to download code from this project.\n');
      const r = await git(['clone', url(externalGuest.token), join(tmp.make(), 'c')]);
      expect(r.status).not.toBe(0);
      expect(r.out).toMatch(/not allowed to download code/);
    });

    it('lets an external reporter clone', async () => {
      const dir = join(tmp.make(), 'c');
      await gitOk(['clone', '--quiet', url(externalReporter.token), dir]);
      expect((await gitOk(['rev-parse', 'HEAD'], dir)).trim()).toBe(head);
    });

    it('answers 404 to an external non-member and the Basic challenge to an anonymous caller', async () => {
      expect((await infoRefs(externalStranger.token)).status).toBe(404);
      const anonymous = await infoRefs();
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers.get('www-authenticate')).toBe('Basic realm="Lode"');
    });
  });

  describe('the caller over git (ActorResolver, as the API resolves it)', () => {
    it("answers a blocked user with 403 and git's words, and serves them again once unblocked", async () => {
      const user = await createUser(t);
      expect((await api(t.rootToken).post(`/users/${user.id}/block`)).status).toBe(201);
      const blocked = await infoRefs(user.token);
      expect(blocked.status).toBe(403);
      expect(await blocked.text()).toBe('Your account has been blocked.\n');
      expect((await api(t.rootToken).post(`/users/${user.id}/unblock`)).status).toBe(201);
      expect((await infoRefs(user.token)).status).toBe(200);
    });

    it('challenges an unknown token and a Basic header without a password', async () => {
      for (const credentials of ['git:nope', 'git:', 'git']) {
        const res = await fetch(`${url()}/info/refs?service=git-upload-pack`, {
          headers: { authorization: `Basic ${Buffer.from(credentials).toString('base64')}` },
        });
        expect(res.status).toBe(401);
        expect(res.headers.get('www-authenticate')).toBe('Basic realm="Lode"');
      }
    });
  });

  describe('forks (a fork copies the code)', () => {
    it("refuses an external guest's fork with GitLab's 409", async () => {
      const res = await api(externalGuest.token).post(`/projects/${project.id}/fork`);
      expect(res.status).toBe(409);
      expect(res.body).toEqual({ message: { forked_from_project_id: ['is forbidden'] } });
    });

    it('lets a signed-in user who is not external fork it', async () => {
      const res = await api(insider.token).post(`/projects/${project.id}/fork`);
      expect(res.status).toBe(201);
      expect(res.body.forked_from_project).toMatchObject({ id: project.id });
    });
  });
});
