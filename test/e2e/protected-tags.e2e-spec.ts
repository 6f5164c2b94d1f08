import type { Gitlab } from '@gitbeaker/rest' with { 'resolution-mode': 'import' };
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { git, gitOk, tempDirs } from '../support/git';
import { runPython } from '../support/python-gitlab';
import { createUser, type SeededUser } from '../support/seed';
import { freePort, startTestApp, type TestApp } from '../support/test-app';

const api = (path: string) => `/api/v4${path}`;
const FORBIDDEN = { message: '403 Forbidden' };
const PROJECT_NOT_FOUND = { message: '404 Project Not Found' };
const NOT_FOUND = { message: '404 Not found' };
const level = (access_level: number) => [
  { access_level, access_level_description: { 0: 'No one', 30: 'Developers + Masters', 40: 'Masters' }[access_level] },
];
const rule = (name: string, createLevel = 40) => ({ name, create_access_levels: level(createLevel) });

const CREATE_REFUSED = 'You are not allowed to create this tag as it is protected.';
const UPDATE_REFUSED = 'Protected tags cannot be updated.';
const DELETE_REFUSED = 'Protected tags cannot be deleted.';

const PYTHON_SCRIPT = `
import json, sys, warnings
import gitlab
warnings.simplefilter("ignore")
url, token, project_id = sys.argv[1], sys.argv[2], int(sys.argv[3])
gl = gitlab.Gitlab(url, private_token=token)
project = gl.projects.get(project_id)
levels = lambda t: [t.name, [l["access_level"] for l in t.create_access_levels]]
out = {}
out["created"] = levels(project.protectedtags.create({"name": "py-*", "create_access_level": gitlab.const.DEVELOPER_ACCESS}))
out["default"] = levels(project.protectedtags.create({"name": "py-release"}))
out["get"] = levels(project.protectedtags.get("py-*"))
try:
    project.protectedtags.create({"name": "py-*"})
    out["duplicate"] = None
except gitlab.exceptions.GitlabCreateError as e:
    out["duplicate"] = [e.response_code, e.error_message]
try:
    project.protectedtags.get("nope")
    out["missing"] = None
except gitlab.exceptions.GitlabGetError as e:
    out["missing"] = [e.response_code, e.error_message]
out["listed"] = [t.name for t in project.protectedtags.list(get_all=True)]
project.protectedtags.get("py-*").delete()
project.protectedtags.delete("py-release")
out["after_delete"] = [t.name for t in project.protectedtags.list(get_all=True)]
print(json.dumps(out))
`;

/**
 * Protected tags (GitLab 11.3's API): the routes through plain HTTP, python-gitlab 3.12, gitbeaker and
 * the calls Terraform's `gitlab_tag_protection` makes, and the rules enforced on every path that moves
 * a tag: git over HTTP and SSH, a deploy key (which GitLab exempts), and the tags API.
 */
describe('protected tags', () => {
  let t: TestApp;
  let url: string;
  let sshPort: number;
  let owner: SeededUser;
  let maintainer: SeededUser;
  let developer: SeededUser;
  let reporter: SeededUser;
  let stranger: SeededUser;
  /** Private, every role a member, `master` pushed. */
  let project: { id: number; path_with_namespace: string };
  let publicProject: number;
  let work: string;
  let developerKey: string;
  let deployKey: string;
  const tmp = tempDirs();

  const as = (token?: string) => {
    const auth = <R extends { set: (k: string, v: string) => R }>(r: R) => (token ? r.set('PRIVATE-TOKEN', token) : r);
    return {
      get: (path: string) => auth(t.http().get(api(path))),
      post: (path: string, body: object = {}) => auth(t.http().post(api(path))).send(body),
      delete: (path: string) => auth(t.http().delete(api(path))),
    };
  };
  const tags = (p = project.id) => `/projects/${p}/protected_tags`;
  const http = (user: SeededUser) =>
    `http://git:${user.token}@${url.slice('http://'.length)}/${project.path_with_namespace}.git`;
  const ssh = () => `ssh://git@127.0.0.1:${sshPort}/${project.path_with_namespace}.git`;
  const sshEnv = (key: string) => ({
    GIT_SSH_COMMAND: `ssh -F /dev/null -i ${key} -p ${sshPort} -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR`,
  });
  const remoteTags = async () =>
    (await gitOk(['ls-remote', '--tags', http(owner)]))
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split('\t')[1])
      .sort();
  const keyPair = (name: string) => {
    const path = join(tmp.make(), name);
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', path]);
    return path;
  };

  beforeAll(async () => {
    const port = await freePort();
    sshPort = await freePort();
    url = `http://127.0.0.1:${port}`;
    t = await startTestApp({ externalUrl: url, sshPort, sshHost: '127.0.0.1' });
    await t.app.listen(port, '127.0.0.1');
    [owner, maintainer, developer, reporter, stranger] = await Promise.all([1, 2, 3, 4, 5].map(() => createUser(t)));
    project = (await as(owner.token).post('/projects', { name: 'Tagged', visibility: 'private' })).body;
    for (const [user, access_level] of [
      [maintainer, 40],
      [developer, 30],
      [reporter, 20],
    ] as const)
      expect(
        (await as(owner.token).post(`/projects/${project.id}/members`, { user_id: user.id, access_level })).status,
      ).toBe(201);
    publicProject = (await as(owner.token).post('/projects', { name: 'Open', visibility: 'public' })).body.id;
    developerKey = keyPair('developer');
    const added = await as(developer.token).post('/user/keys', {
      title: 'dev',
      key: readFileSync(`${developerKey}.pub`, 'utf8').trim(),
    });
    expect(added.status).toBe(201);
    deployKey = keyPair('deploy');
    const deployed = await as(owner.token).post(`/projects/${project.id}/deploy_keys`, {
      title: 'deployer',
      key: readFileSync(`${deployKey}.pub`, 'utf8').trim(),
      can_push: true,
    });
    expect(deployed.status).toBe(201);
    work = tmp.make();
    await gitOk(['init', '-q', '-b', 'master', work]);
    writeFileSync(join(work, 'a.txt'), 'a\n');
    await gitOk(['add', '.'], work);
    await gitOk(['commit', '-q', '-m', 'first'], work);
    await gitOk(['push', '-q', http(owner), 'master'], work);
  });
  afterAll(async () => {
    tmp.removeAll();
    await t.close();
  });

  describe('GET, POST and DELETE /projects/:id/protected_tags', () => {
    it('creates with maintainers by default (201), lists in creation order with pagination headers, gets one by its exact name', async () => {
      const made = await as(owner.token).post(tags(), { name: 'v*' });
      expect([made.status, made.body]).toEqual([201, rule('v*')]);
      const dev = await as(maintainer.token).post(tags(), { name: 'dev-*', create_access_level: '30' });
      expect([dev.status, dev.body]).toEqual([201, rule('dev-*', 30)]);
      const frozen = await as(t.rootToken).post(tags(), { name: 'release/frozen', create_access_level: 0 });
      expect([frozen.status, frozen.body]).toEqual([201, rule('release/frozen', 0)]);

      const list = await as(owner.token).get(`${tags()}?per_page=2`);
      expect(list.status).toBe(200);
      expect(list.body).toEqual([rule('v*'), rule('dev-*', 30)]);
      expect(list.headers).toMatchObject({ 'x-total': '3', 'x-total-pages': '2', 'x-page': '1', 'x-next-page': '2' });
      expect((await as(owner.token).get(`${tags()}?page=2&per_page=2`)).body).toEqual([rule('release/frozen', 0)]);

      expect((await as(maintainer.token).get(`${tags()}/v*`)).body).toEqual(rule('v*'));
      expect((await as(owner.token).get(`${tags()}/release%2Ffrozen`)).body).toEqual(rule('release/frozen', 0));
      // A wildcard's name is looked up as written, never matched against.
      const matched = await as(owner.token).get(`${tags()}/v1.0`);
      expect([matched.status, matched.body]).toEqual([404, NOT_FOUND]);
    });

    it('answers 409 for a name that has a rule, 400 for a missing name or a level GitLab does not allow', async () => {
      const again = await as(owner.token).post(tags(), { name: 'v*', create_access_level: 30 });
      expect([again.status, again.body]).toEqual([409, { message: "Protected tag 'v*' already exists" }]);
      const nameless = await as(owner.token).post(tags(), { create_access_level: 30 });
      expect([nameless.status, nameless.body]).toEqual([400, { error: 'name is missing' }]);
      const badLevel = await as(owner.token).post(tags(), { name: 'x', create_access_level: 20 });
      expect([badLevel.status, badLevel.body]).toEqual([
        400,
        { error: 'create_access_level does not have a valid value' },
      ]);
      const blank = await as(owner.token).post(tags(), { name: ' ' });
      expect(blank.status).toBe(422);
      expect((await as(owner.token).get(tags())).body.map((r: { name: string }) => r.name)).toEqual([
        'v*',
        'dev-*',
        'release/frozen',
      ]);
    });

    it('is for maintainers: developers and reporters 403, strangers and anonymous callers of a private project 404', async () => {
      for (const token of [developer.token, reporter.token]) {
        expect((await as(token).get(tags())).body).toEqual(FORBIDDEN);
        expect((await as(token).get(`${tags()}/v*`)).body).toEqual(FORBIDDEN);
        const bad = await as(token).post(tags(), { create_access_level: 'x' });
        expect([bad.status, bad.body]).toEqual([403, FORBIDDEN]);
        expect((await as(token).delete(`${tags()}/v*`)).status).toBe(403);
      }
      for (const token of [stranger.token, undefined]) {
        for (const res of [
          await as(token).get(tags()),
          await as(token).get(`${tags()}/v*`),
          await as(token).post(tags(), { name: 'x' }),
          await as(token).delete(`${tags()}/v*`),
        ])
          expect([res.status, res.body]).toEqual([404, PROJECT_NOT_FOUND]);
      }
      for (const token of [stranger.token, undefined]) {
        expect((await as(token).get(tags(publicProject))).body).toEqual(FORBIDDEN);
        expect((await as(token).post(tags(publicProject), { name: 'x' })).status).toBe(403);
      }
    });

    it('deletes a rule by its exact name (204), and 404 for one that is not there', async () => {
      expect((await as(owner.token).post(tags(), { name: 'temp-*' })).status).toBe(201);
      expect((await as(owner.token).delete(`${tags()}/temp-*`)).status).toBe(204);
      const gone = await as(owner.token).delete(`${tags()}/temp-*`);
      expect([gone.status, gone.body]).toEqual([404, NOT_FOUND]);
    });
  });

  describe('enforced on every push', () => {
    it('refuses a developer creating a protected tag over HTTP and SSH, in GitLab words, and moves nothing', async () => {
      const before = await remoteTags();
      await gitOk(['tag', 'v1.0'], work);
      const overHttp = await git(['push', http(developer), 'v1.0'], work);
      expect(overHttp.status).not.toBe(0);
      expect(overHttp.out).toContain(`remote: GitLab: ${CREATE_REFUSED}`);
      const overSsh = await git(['push', ssh(), 'v1.0'], work, sshEnv(developerKey));
      expect(overSsh.status).not.toBe(0);
      expect(overSsh.out).toContain(`remote: GitLab: ${CREATE_REFUSED}`);
      expect(await remoteTags()).toEqual(before);

      // A rule at developer level lets them; an unprotected tag is anyone's who may push.
      await gitOk(['tag', 'dev-1'], work);
      await gitOk(['tag', 'plain'], work);
      await gitOk(['push', '-q', ssh(), 'dev-1', 'plain'], work, sshEnv(developerKey));
      expect(await remoteTags()).toEqual([...before, 'refs/tags/dev-1', 'refs/tags/plain'].sort());
    });

    it('lets a maintainer create one, then refuses everyone, administrators included, moving or deleting it', async () => {
      await gitOk(['push', '-q', http(maintainer), 'v1.0'], work);
      expect(await remoteTags()).toContain('refs/tags/v1.0');
      const root: SeededUser = { id: 1, username: 'root', email: '', token: t.rootToken };

      writeFileSync(join(work, 'b.txt'), 'b\n');
      await gitOk(['add', '.'], work);
      await gitOk(['commit', '-q', '-m', 'second'], work);
      await gitOk(['tag', '-f', 'v1.0'], work);
      const moved = await git(['push', '--force', http(root), 'v1.0'], work);
      expect(moved.status).not.toBe(0);
      expect(moved.out).toContain(`remote: GitLab: ${UPDATE_REFUSED}`);
      const deleted = await git(['push', http(root), ':refs/tags/v1.0'], work);
      expect(deleted.status).not.toBe(0);
      expect(deleted.out).toContain(`remote: GitLab: ${DELETE_REFUSED}`);
      const devDeleted = await git(['push', http(owner), ':refs/tags/dev-1'], work);
      expect(devDeleted.out).toContain(`remote: GitLab: ${DELETE_REFUSED}`);
      // "No one" holds for administrators too.
      await gitOk(['tag', 'release/frozen'], work);
      const frozen = await git(['push', http(root), 'release/frozen'], work);
      expect(frozen.out).toContain(`remote: GitLab: ${CREATE_REFUSED}`);
      expect(await remoteTags()).not.toContain('refs/tags/release/frozen');
      // An unprotected tag still moves and goes.
      await gitOk(['push', '-q', http(owner), ':refs/tags/plain'], work);
      expect(await remoteTags()).not.toContain('refs/tags/plain');
    });

    it('lets a deploy key that may push through, as GitLab skips its change checks', async () => {
      await gitOk(['tag', 'v2.0'], work);
      await gitOk(['push', '-q', ssh(), 'v2.0'], work, sshEnv(deployKey));
      expect(await remoteTags()).toContain('refs/tags/v2.0');
    });

    it('holds the tags API to the same rules: 400 with the rule words', async () => {
      const refused = await as(developer.token).post(`/projects/${project.id}/repository/tags`, {
        tag_name: 'v3.0',
        ref: 'master',
      });
      expect([refused.status, refused.body]).toEqual([400, { message: CREATE_REFUSED }]);
      const made = await as(maintainer.token).post(`/projects/${project.id}/repository/tags`, {
        tag_name: 'v3.0',
        ref: 'master',
      });
      expect(made.status).toBe(201);
      const removed = await as(owner.token).delete(`/projects/${project.id}/repository/tags/v3.0`);
      expect([removed.status, removed.body]).toEqual([400, { message: DELETE_REFUSED }]);
      expect(await remoteTags()).toContain('refs/tags/v3.0');
      // Once the rule is gone, the tag goes.
      expect((await as(owner.token).delete(`${tags()}/v*`)).status).toBe(204);
      expect((await as(owner.token).delete(`/projects/${project.id}/repository/tags/v3.0`)).status).toBe(204);
      expect((await as(owner.token).post(tags(), { name: 'v*' })).status).toBe(201);
    });
  });

  describe('allow_force_push on protected branches', () => {
    const branches = () => `/projects/${project.id}/protected_branches`;
    const patch = (token: string, name: string, body: object) =>
      t
        .http()
        .patch(api(`${branches()}/${encodeURIComponent(name)}`))
        .set('PRIVATE-TOKEN', token)
        .send(body);
    const FORCE_REFUSED = 'You are not allowed to force push code to a protected branch on this project.';

    it('is taken on POST and PATCH and answered in the rule; PATCH is for maintainers and 404s an unknown rule', async () => {
      const made = await as(owner.token).post(branches(), { name: 'forced-*', allow_force_push: 'true' });
      expect([made.status, made.body.allow_force_push]).toEqual([201, true]);
      const plain = await as(owner.token).post(branches(), { name: 'rewritten' });
      expect([plain.status, plain.body.allow_force_push]).toEqual([201, false]);
      const changed = await patch(maintainer.token, 'forced-*', { allow_force_push: false });
      expect([changed.status, changed.body]).toEqual([
        200,
        {
          name: 'forced-*',
          push_access_levels: level(40),
          merge_access_levels: level(40),
          allow_force_push: false,
        },
      ]);
      expect((await as(owner.token).get(`${branches()}/forced-*`)).body.allow_force_push).toBe(false);
      expect([(await patch(developer.token, 'forced-*', { allow_force_push: true })).status]).toEqual([403]);
      const missing = await patch(owner.token, 'nope', { allow_force_push: true });
      expect([missing.status, missing.body]).toEqual([404, NOT_FOUND]);
      const bad = await patch(owner.token, 'forced-*', { allow_force_push: 'maybe' });
      expect([bad.status, bad.body]).toEqual([400, { error: 'allow_force_push is invalid' }]);
    });

    it('refuses a non-fast-forward push to a protected branch unless its rule allows force pushes', async () => {
      await gitOk(['checkout', '-q', '-b', 'rewritten'], work);
      writeFileSync(join(work, 'r.txt'), '1\n');
      await gitOk(['add', '.'], work);
      await gitOk(['commit', '-q', '-m', 'r1'], work);
      await gitOk(['push', '-q', http(maintainer), 'rewritten'], work);
      await gitOk(['commit', '-q', '--amend', '-m', 'r1 again'], work);
      const amended = (await gitOk(['rev-parse', 'HEAD'], work)).trim();
      const refused = await git(['push', '--force', http(maintainer), 'rewritten'], work);
      expect(refused.status).not.toBe(0);
      expect(refused.out).toContain(`remote: GitLab: ${FORCE_REFUSED}`);

      expect((await patch(owner.token, 'rewritten', { allow_force_push: true })).body.allow_force_push).toBe(true);
      // Still held to the push level: a developer is refused as for any push.
      const developerForce = await git(['push', '--force', ssh(), 'rewritten'], work, sshEnv(developerKey));
      expect(developerForce.out).toContain(
        'remote: GitLab: You are not allowed to push code to protected branches on this project.',
      );
      await gitOk(['push', '-q', '--force', http(maintainer), 'rewritten'], work);
      expect(await gitOk(['ls-remote', http(owner), 'refs/heads/rewritten'])).toContain(amended);
      await gitOk(['checkout', '-q', 'master'], work);
    });

    it("Terraform's gitlab_branch_protection with allow_force_push: created, read back identically, updated in place", async () => {
      // The provider POSTs every argument, reads the rule back by name on every refresh, and changes
      // allow_force_push in place with PATCH.
      const created = await as(owner.token).post(branches(), {
        name: 'tf-main',
        push_access_level: 30,
        merge_access_level: 40,
        allow_force_push: true,
      });
      expect(created.status).toBe(201);
      const first = await as(owner.token).get(`${branches()}/tf-main`);
      const second = await as(owner.token).get(`${branches()}/tf-main`);
      expect(first.body).toEqual(created.body);
      expect(second.body).toEqual(first.body);
      expect(first.body).toMatchObject({ push_access_levels: level(30), allow_force_push: true });
      expect((await patch(owner.token, 'tf-main', { allow_force_push: false })).status).toBe(200);
      expect((await as(owner.token).get(`${branches()}/tf-main`)).body).toEqual({
        ...first.body,
        allow_force_push: false,
      });
    });

    it('python-gitlab 3.12 sends allow_force_push on create and reads it back; gitbeaker edits it with PATCH', async () => {
      const script = `
import json, sys, warnings
import gitlab
warnings.simplefilter("ignore")
gl = gitlab.Gitlab(sys.argv[1], private_token=sys.argv[2])
project = gl.projects.get(int(sys.argv[3]))
made = project.protectedbranches.create({"name": "py-force", "allow_force_push": True})
print(json.dumps([made.allow_force_push, project.protectedbranches.get("py-force").allow_force_push]))
`;
      expect(JSON.parse(await runPython(script, [url, owner.token, String(project.id)]))).toEqual([true, true]);
      const gb = await import('@gitbeaker/rest');
      const client: InstanceType<typeof Gitlab<false>> = new gb.Gitlab({ host: url, token: owner.token });
      const edited = await client.ProtectedBranches.edit(project.id, 'py-force', { allowForcePush: false });
      expect(edited).toMatchObject({ name: 'py-force', allow_force_push: false });
    });
  });

  describe('clients', () => {
    it('python-gitlab 3.12: project.protectedtags create, get, list and delete', async () => {
      const out = JSON.parse(await runPython(PYTHON_SCRIPT, [url, owner.token, String(project.id)])) as unknown;
      expect(out).toEqual({
        created: ['py-*', [30]],
        default: ['py-release', [40]],
        get: ['py-*', [30]],
        duplicate: [409, "Protected tag 'py-*' already exists"],
        missing: [404, '404 Not found'],
        listed: ['dev-*', 'release/frozen', 'v*', 'py-*', 'py-release'],
        after_delete: ['dev-*', 'release/frozen', 'v*'],
      });
    });

    it('gitbeaker: ProtectedTags.protect, show, all and unprotect', async () => {
      const gb = await import('@gitbeaker/rest');
      const client: InstanceType<typeof Gitlab<false>> = new gb.Gitlab({ host: url, token: owner.token });
      const made = await client.ProtectedTags.protect(project.id, 'gb-*', { createAccessLevel: 30 });
      expect(made).toEqual(rule('gb-*', 30));
      expect(await client.ProtectedTags.show(project.id, 'gb-*')).toEqual(rule('gb-*', 30));
      expect((await client.ProtectedTags.all(project.id)).map((r) => r.name)).toContain('gb-*');
      await client.ProtectedTags.unprotect(project.id, 'gb-*');
      await expect(client.ProtectedTags.show(project.id, 'gb-*')).rejects.toThrow();
    });

    it("Terraform's gitlab_tag_protection: create, then read back identically on every later apply", async () => {
      // resource_gitlab_tag_protection: POST with name and create_access_level, then GET by name on
      // every refresh, reading `create_access_levels[0].access_level`; the import id is `<project>:<tag>`.
      const created = await as(owner.token).post(tags(), { name: 'tf-*', create_access_level: 30 });
      expect(created.status).toBe(201);
      const first = await as(owner.token).get(`${tags()}/${encodeURIComponent('tf-*')}`);
      const second = await as(owner.token).get(`${tags()}/${encodeURIComponent('tf-*')}`);
      expect(first.status).toBe(200);
      expect(second.body).toEqual(first.body);
      expect(first.body).toEqual(created.body);
      // Its destroy: DELETE, then the refresh finds it gone (404) and drops it from the state.
      expect((await as(owner.token).delete(`${tags()}/${encodeURIComponent('tf-*')}`)).status).toBe(204);
      expect((await as(owner.token).get(`${tags()}/${encodeURIComponent('tf-*')}`)).status).toBe(404);
    });
  });
});
