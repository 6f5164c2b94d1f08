import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { addGroupMember, client, createGroup, unique } from '../support/groups';
import { gitOk, tempDirs } from '../support/git';
import { expectShape } from '../contract/shape';
import { expectProject } from '../support/project-shape';
import { runPython } from '../support/python-gitlab';
import { createUser, type SeededUser } from '../support/seed';
import { eventually, freePort, startTestApp, type TestApp } from '../support/test-app';
import { bytes } from '../support/bytes';

/**
 * Projects: transfer, the import status, languages, snapshot, initialize_with_readme, topics, the fork
 * parameters and the settings clients write and read back. Through python-gitlab 3.12's and gitbeaker's
 * own resource methods where they have them, and plain HTTP for statuses, shapes and permissions.
 */
/** The Project entity's fields these tests read (the rest unknown). */
type ProjectBody = {
  id: number;
  name: string;
  path: string;
  path_with_namespace: string;
  name_with_namespace: string;
  created_at: string;
  topics: string[];
  tag_list: string[];
} & Record<string, unknown>;

describe('project extras: transfer, import, languages, snapshot, readme, topics, forks, settings', () => {
  let t: TestApp;
  let url: string;
  let owner: SeededUser;
  let other: SeededUser;
  let gb: typeof import('@gitbeaker/rest', { with: { 'resolution-mode': 'import' } });
  const tmp = tempDirs();
  const as = (token?: string) => client(t, token);

  /** A project of `token`'s personal namespace (or `namespace_id`), 201 or the test fails. */
  async function project(token: string, attrs: Record<string, unknown> = {}) {
    const s = unique();
    const res = await as(token)
      .post('/projects')
      .send({ name: `P ${s}`, path: `p-${s}`, ...attrs });
    expect(res.status).toBe(201);
    return res.body as ProjectBody;
  }

  async function commitFiles(token: string, id: number, files: Record<string, string>, branch = 'master') {
    const res = await as(token)
      .post(`/projects/${id}/repository/commits`)
      .send({
        branch,
        commit_message: 'files',
        actions: Object.entries(files).map(([file_path, content]) => ({ action: 'create', file_path, content })),
      });
    expect(res.status).toBe(201);
  }

  const py = (body: string, ...args: string[]) =>
    runPython(
      `import json, sys, warnings
import gitlab
warnings.simplefilter("ignore")
gl = gitlab.Gitlab(sys.argv[1], private_token=sys.argv[2])
${body}`,
      [url, ...args],
    );

  beforeAll(async () => {
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    t = await startTestApp({ externalUrl: url });
    await t.app.listen(port, '127.0.0.1');
    owner = await createUser(t, { name: 'Olive Owner' });
    other = await createUser(t);
    gb = await import('@gitbeaker/rest');
  });
  afterAll(async () => {
    tmp.removeAll();
    await t.close();
  });

  describe('PUT /projects/:id/transfer', () => {
    it('moves a project into a group by id, lowering its visibility; git answers at the new path', async () => {
      const group = await createGroup(t, { visibility: 'internal' });
      await addGroupMember(t, group.id, owner.id, 40);
      const p = await project(owner.token, { visibility: 'public' });
      await commitFiles(owner.token, p.id, { 'a.txt': 'hello\n' });
      const res = await as(owner.token).put(`/projects/${p.id}/transfer`).send({ namespace: group.id });
      expect(res.status).toBe(200);
      expectProject(res.body, 'project-in-group', { owner: false, adminFields: true });
      expect(res.body).toMatchObject({
        id: p.id,
        visibility: 'internal',
        path_with_namespace: `${group.full_path}/${p.path}`,
        namespace: { id: group.id, kind: 'group', full_path: group.full_path },
        http_url_to_repo: `${url}/${group.full_path}/${p.path}.git`,
      });
      expect(
        (await as(owner.token).get(`/projects/${encodeURIComponent(`${group.full_path}/${p.path}`)}`)).body.id,
      ).toBe(p.id);
      const dir = tmp.make();
      const clone = `http://git:${owner.token}@127.0.0.1:${new URL(url).port}/${group.full_path}/${p.path}.git`;
      await gitOk(['clone', clone, dir]);
      expect(execFileSync('cat', [join(dir, 'a.txt')]).toString()).toBe('hello\n');
      // The old path is gone (Lode keeps no redirects).
      expect((await as(owner.token).get(`/projects/${encodeURIComponent(p.path_with_namespace)}`)).status).toBe(404);
    });

    it('takes a full path, and a personal namespace (the owner becomes a member there)', async () => {
      const group = await createGroup(t);
      await addGroupMember(t, group.id, owner.id, 50);
      const p = await project(owner.token, { namespace_id: group.id });
      const res = await as(owner.token).put(`/projects/${p.id}/transfer`).send({ namespace: owner.username });
      expect(res.status).toBe(200);
      expect(res.body.namespace).toMatchObject({ kind: 'user', path: owner.username });
      const back = await as(owner.token).put(`/projects/${p.id}/transfer`).query({ namespace: group.full_path });
      expect(back.status).toBe(200);
      expect(back.body.namespace.id).toBe(group.id);
    });

    it('refuses as GitLab: 400 missing or not allowed, 403 below owner, 404 unknown or invisible', async () => {
      const p = await project(owner.token, { visibility: 'private' });
      const devGroup = await createGroup(t);
      await addGroupMember(t, devGroup.id, owner.id, 30);
      const privateGroup = await createGroup(t, { visibility: 'private' });
      const put = (token: string, body: object, id = p.id) => as(token).put(`/projects/${id}/transfer`).send(body);

      expect((await put(owner.token, {})).body).toEqual({ error: 'namespace is missing' });
      expect((await put(owner.token, {})).status).toBe(400);
      const notFound = await put(owner.token, { namespace: 999999 });
      expect([notFound.status, notFound.body]).toEqual([404, { message: '404 Namespace Not Found' }]);
      const invisible = await put(owner.token, { namespace: privateGroup.full_path });
      expect([invisible.status, invisible.body]).toEqual([404, { message: '404 Namespace Not Found' }]);
      const others = await put(owner.token, { namespace: other.username });
      expect(others.status).toBe(404);
      const notAllowed = await put(owner.token, { namespace: devGroup.id });
      expect([notAllowed.status, notAllowed.body]).toEqual([
        400,
        { message: 'Failed to transfer project {:new_namespace=>["Transfer failed, please contact an admin."]}' },
      ]);
      const same = await put(owner.token, { namespace: owner.username });
      expect([same.status, same.body.message]).toEqual([
        400,
        'Failed to transfer project {:new_namespace=>["Transfer failed, please contact an admin."]}',
      ]);
      // A stranger does not see the private project; a maintainer sees it but may not move it.
      expect((await put(other.token, { namespace: other.username })).status).toBe(404);
      const member = await as(owner.token)
        .post(`/projects/${p.id}/members`)
        .send({ user_id: other.id, access_level: 40 });
      expect(member.status).toBe(201);
      const maintainer = await put(other.token, { namespace: other.username });
      expect([maintainer.status, maintainer.body]).toEqual([403, { message: '403 Forbidden' }]);
      expect((await as(owner.token).get(`/projects/${p.id}`)).body.namespace.path).toBe(owner.username);
    });

    it('refuses a target holding a project of the same path', async () => {
      const group = await createGroup(t);
      await addGroupMember(t, group.id, owner.id, 40);
      const p = await project(owner.token);
      const clash = await as(owner.token)
        .post('/projects')
        .send({ name: `Other ${unique()}`, path: p.path, namespace_id: group.id });
      expect(clash.status).toBe(201);
      const res = await as(owner.token).put(`/projects/${p.id}/transfer`).send({ namespace: group.id });
      expect([res.status, res.body]).toEqual([
        400,
        {
          message:
            'Failed to transfer project {:new_namespace=>["Project with same name or path in target namespace already exists"]}',
        },
      ]);
    });

    it('python-gitlab: project.transfer_project(namespace)', async () => {
      const group = await createGroup(t);
      await addGroupMember(t, group.id, owner.id, 40);
      const p = await project(owner.token);
      const out = await py(
        `project = gl.projects.get(int(sys.argv[3]))
project.transfer_project(sys.argv[4])
print(json.dumps(gl.projects.get(project.id).namespace))`,
        owner.token,
        String(p.id),
        String(group.id),
      );
      expect(JSON.parse(out)).toMatchObject({ id: group.id, kind: 'group' });
    });
  });

  describe('GET /projects/:id/import', () => {
    it('is none for a plain project and follows a fork to finished', async () => {
      const src = await project(owner.token, { visibility: 'public' });
      const plain = await as(owner.token).get(`/projects/${src.id}/import`);
      expect(plain.status).toBe(200);
      expect(plain.body).toEqual({
        id: src.id,
        description: null,
        name: src.name,
        name_with_namespace: src.name_with_namespace,
        path: src.path,
        path_with_namespace: src.path_with_namespace,
        created_at: src.created_at,
        import_status: 'none',
        import_type: null,
        correlation_id: null,
        failed_relations: [],
        import_error: null,
        stats: null,
      });
      // Anyone who sees the project reads it; a private one is a 404 to strangers.
      expect((await as().get(`/projects/${src.id}/import`)).body.import_status).toBe('none');
      const hidden = await project(owner.token, { visibility: 'private' });
      expect((await as(other.token).get(`/projects/${hidden.id}/import`)).status).toBe(404);

      const fork = await as(other.token).post(`/projects/${src.id}/fork`);
      expect(fork.status).toBe(201);
      await eventually(
        async () => (await as(other.token).get(`/projects/${fork.body.id}/import`)).body.import_status === 'finished',
      );
      const out = await py(
        `print(json.dumps(gl.projects.get(int(sys.argv[3])).imports.get().import_status))`,
        other.token,
        String(fork.body.id),
      );
      expect(JSON.parse(out)).toBe('finished');
    });
  });

  describe('GET /projects/:id/languages', () => {
    it('answers {} for an empty repository and shares by bytes of the default branch', async () => {
      const p = await project(owner.token, { visibility: 'public' });
      expect((await as(owner.token).get(`/projects/${p.id}/languages`)).body).toEqual({});
      await commitFiles(owner.token, p.id, {
        'lib/a.rb': 'x'.repeat(300),
        'app.js': 'y'.repeat(100),
        'README.md': 'z'.repeat(5000),
        'node_modules/dep/index.js': 'w'.repeat(9000),
      });
      const res = await as().get(`/projects/${p.id}/languages`);
      expect(res.status).toBe(200);
      expect(Object.entries(res.body)).toEqual([
        ['Ruby', 75],
        ['JavaScript', 25],
      ]);
      const out = await py(
        `print(json.dumps(gl.projects.get(int(sys.argv[3])).languages()))`,
        owner.token,
        String(p.id),
      );
      expect(JSON.parse(out)).toEqual({ Ruby: 75, JavaScript: 25 });
      const hidden = await project(owner.token, { visibility: 'private' });
      expect((await as(other.token).get(`/projects/${hidden.id}/languages`)).status).toBe(404);
    });
  });

  describe('GET /projects/:id/snapshot', () => {
    it('gives administrators a tar of the bare repository; 401, 403 and 404 otherwise', async () => {
      const p = await project(owner.token, { visibility: 'public' });
      await commitFiles(owner.token, p.id, { 'f.txt': 'snap\n' });
      expect((await as().get(`/projects/${p.id}/snapshot`)).status).toBe(401);
      const denied = await as(owner.token).get(`/projects/${p.id}/snapshot`);
      expect([denied.status, denied.body]).toEqual([403, { message: '403 Forbidden' }]);
      expect((await as(t.rootToken).get(`/projects/999999/snapshot`)).status).toBe(404);
      expect((await as(t.rootToken).get(`/projects/${p.id}/snapshot?wiki=true`)).status).toBe(404);

      const res = await as(t.rootToken).get(`/projects/${p.id}/snapshot`).buffer(true).parse(bytes);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/x-tar');
      expect(res.headers['content-disposition']).toBe('attachment; filename="snapshot.tar"');
      const dir = join(tmp.make(), 'restored.git');
      mkdirSync(dir);
      writeFileSync(`${dir}.tar`, res.body as Buffer);
      execFileSync('tar', ['-xf', `${dir}.tar`, '-C', dir]);
      await gitOk(['--git-dir', dir, 'fsck', '--strict']);
      expect(await gitOk(['--git-dir', dir, 'show', 'master:f.txt'])).toBe('snap\n');

      const out = await py(`print(len(gl.projects.get(int(sys.argv[3])).snapshot()))`, t.rootToken, String(p.id));
      expect(Number(out)).toBeGreaterThan(1024);
    });
  });

  describe('initialize_with_readme', () => {
    it('commits README.md on the default branch sent, as the creator, recorded as a push', async () => {
      const res = await as(owner.token).post('/projects').send({
        name: 'Readme Me',
        description: 'with words',
        initialize_with_readme: true,
        default_branch: 'main',
      });
      expect(res.status).toBe(201);
      expect(res.body.default_branch).toBe('main');
      const id = res.body.id;
      const commit = (await as(owner.token).get(`/projects/${id}/repository/commits/main`)).body;
      expect(commit).toMatchObject({
        title: 'Initial commit',
        author_name: 'Olive Owner',
        author_email: owner.email,
        committer_email: owner.email,
        parent_ids: [],
      });
      const raw = await as(owner.token).get(`/projects/${id}/repository/files/README.md/raw?ref=main`);
      expect(raw.text).toBe('# Readme Me\n\nwith words');
      const branch = (await as(owner.token).get(`/projects/${id}/repository/branches/main`)).body;
      expect(branch).toMatchObject({ name: 'main', default: true });
      expect(branch.protected).toBe(true);
      const pushes = await t.db.query(
        `select data->'updates'->0->>'ref' as ref, metadata->>'origin' as origin from events
          where type = 'RepositoryPushed' and (data->>'projectId')::int = $1`,
        [id],
      );
      expect(pushes).toEqual([{ ref: 'refs/heads/main', origin: 'api' }]);
      // Without it the repository stays empty; with it and no default_branch, Lode's master.
      const empty = await project(owner.token);
      expect((await as(owner.token).get(`/projects/${empty.id}/repository/branches`)).body).toEqual([]);
      const out = await py(
        `p = gl.projects.create({"name": "Py Readme", "initialize_with_readme": True})
print(json.dumps([p.default_branch, [f["name"] for f in p.repository_tree()]]))`,
        owner.token,
      );
      expect(JSON.parse(out)).toEqual(['master', ['README.md']]);
    });
  });

  describe('topics beside tag_list', () => {
    it('stores one list, answered under both names; topics wins when both are sent', async () => {
      const p = await project(owner.token, { topics: ['b', 'a'] });
      expect([p.topics, p.tag_list]).toEqual([
        ['a', 'b'],
        ['a', 'b'],
      ]);
      const both = await as(owner.token)
        .put(`/projects/${p.id}`)
        .send({ topics: 'x,y', tag_list: ['z'] });
      expect([both.body.topics, both.body.tag_list]).toEqual([
        ['x', 'y'],
        ['x', 'y'],
      ]);
      const old = await as(owner.token)
        .put(`/projects/${p.id}`)
        .send({ tag_list: ['q'] });
      expect(old.body.topics).toEqual(['q']);
      const cleared = await as(owner.token).put(`/projects/${p.id}`).send({ topics: [] });
      expect(cleared.body.topics).toEqual([]);
      expectShape(
        (await as(owner.token).get(`/projects?simple=true&search=${encodeURIComponent(p.path)}`)).body[0],
        'project-simple',
      );
    });
  });

  describe('POST /projects/:id/fork parameters', () => {
    it('lands in namespace_id with the name, path, description and visibility asked (never more open)', async () => {
      const src = await project(owner.token, { visibility: 'internal', description: 'src' });
      const group = await createGroup(t, { visibility: 'public' });
      await addGroupMember(t, group.id, other.id, 40);
      const res = await as(other.token)
        .post(`/projects/${src.id}/fork`)
        .send({ namespace_id: group.id, name: 'My Fork', path: 'my-fork', description: 'mine', visibility: 'public' });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        name: 'My Fork',
        path: 'my-fork',
        description: 'mine',
        visibility: 'internal',
        namespace: { id: group.id },
        forked_from_project: { id: src.id },
      });
      const byPath = await as(other.token)
        .post(`/projects/${src.id}/fork`)
        .send({ namespace_path: group.full_path, path: 'second', name: 'Second', visibility: 'private' });
      expect([byPath.status, byPath.body.visibility, byPath.body.namespace.id]).toEqual([201, 'private', group.id]);
      const taken = await as(other.token)
        .post(`/projects/${src.id}/fork`)
        .send({ namespace_id: group.id, name: 'My Fork', path: 'my-fork' });
      expect([taken.status, taken.body]).toEqual([
        409,
        { message: { name: ['has already been taken'], path: ['has already been taken'] } },
      ]);
      const bad = await as(other.token).post(`/projects/${src.id}/fork`).send({ path: '-bad' });
      expect(bad.status).toBe(400);
      expect(Object.keys(bad.body.message)).toEqual(['path']);
      const elsewhere = await as(other.token).post(`/projects/${src.id}/fork`).send({ namespace_id: 999999 });
      expect([elsewhere.status, elsewhere.body]).toEqual([404, { message: '404 Target Namespace Not Found' }]);
    });

    it('python-gitlab forks.create and gitbeaker Projects.fork take the same parameters', async () => {
      const src = await project(owner.token, { visibility: 'public' });
      const out = await py(
        `f = gl.projects.get(int(sys.argv[3])).forks.create({"name": "Py Fork", "path": "py-fork", "description": "d"})
print(json.dumps([f.name, f.path, f.description, f.namespace["path"]]))`,
        other.token,
        String(src.id),
      );
      expect(JSON.parse(out)).toEqual(['Py Fork', 'py-fork', 'd', other.username]);
      const api = new gb.Gitlab({ host: url, token: other.token });
      const fork = (await api.Projects.fork(src.id, { name: 'Beaker Fork', path: 'beaker-fork' })) as Record<
        string,
        unknown
      >;
      expect(fork).toMatchObject({ name: 'Beaker Fork', path: 'beaker-fork', forked_from_project: { id: src.id } });
    });
  });

  describe('gitbeaker', () => {
    it('Projects.transfer, ProjectImportExports.showImportStatus, Projects.showLanguages', async () => {
      const api = new gb.Gitlab({ host: url, token: owner.token });
      const group = await createGroup(t);
      await addGroupMember(t, group.id, owner.id, 40);
      const p = await project(owner.token, { visibility: 'public' });
      await commitFiles(owner.token, p.id, { 'main.go': 'package main\n' });
      const moved = (await api.Projects.transfer(p.id, group.id)) as Record<string, unknown>;
      expect(moved).toMatchObject({ id: p.id, namespace: { id: group.id } });
      const status = (await api.ProjectImportExports.showImportStatus(p.id)) as Record<string, unknown>;
      expect(status).toMatchObject({ id: p.id, import_status: 'none' });
      expect(await api.Projects.showLanguages(p.id)).toEqual({ Go: 100 });
    });
  });

  describe('settings clients write and read back', () => {
    it('keeps merge_method, squash_option and the access levels, with the switches in step', async () => {
      const p = await project(owner.token, { merge_method: 'ff', issues_enabled: false });
      expect(p).toMatchObject({
        merge_method: 'ff',
        squash_option: 'default_off',
        issues_enabled: false,
        issues_access_level: 'disabled',
        wiki_access_level: 'enabled',
        pages_access_level: 'private',
      });
      const res = await as(owner.token).put(`/projects/${p.id}`).send({
        squash_option: 'always',
        wiki_access_level: 'disabled',
        builds_access_level: 'private',
        packages_enabled: false,
      });
      expect(res.status).toBe(200);
      expectProject(res.body, 'project-in-group', { owner: true, adminFields: true, issues: false });
      expect(res.body).toMatchObject({
        squash_option: 'always',
        wiki_access_level: 'disabled',
        wiki_enabled: false,
        builds_access_level: 'private',
        jobs_enabled: true,
        packages_enabled: false,
      });
      const read = (await as(owner.token).get(`/projects/${p.id}`)).body;
      expectProject(read, 'project', { owner: true, adminFields: true, issues: false });
      expect(read).toMatchObject({ merge_method: 'ff', squash_option: 'always', wiki_enabled: false });
      const bad = await as(owner.token).put(`/projects/${p.id}`).send({ merge_method: 'squash' });
      expect([bad.status, bad.body]).toEqual([400, { error: 'merge_method does not have a valid value' }]);
    });

    it('a PUT of only parameters GitLab knows and Lode drops answers the unchanged project; unknown ones are 400', async () => {
      const p = await project(owner.token);
      const kept = await as(owner.token).put(`/projects/${p.id}`).send({ mirror: false, ci_default_git_depth: 20 });
      expect(kept.status).toBe(200);
      expect(kept.body.name).toBe(p.name);
      const unknown = await as(owner.token).put(`/projects/${p.id}`).send({ no_such_thing: 1 });
      expect(unknown.status).toBe(400);
      expect(unknown.body.error).toMatch(/are missing, at least one parameter must be provided$/);
    });

    it('python-gitlab saves and reads them back', async () => {
      const p = await project(owner.token);
      const out = await py(
        `project = gl.projects.get(int(sys.argv[3]))
project.merge_method = "rebase_merge"
project.topics = ["one", "two"]
project.snippets_access_level = "private"
project.save()
again = gl.projects.get(project.id)
print(json.dumps([again.merge_method, again.topics, again.tag_list, again.snippets_access_level, again.snippets_enabled]))`,
        owner.token,
        String(p.id),
      );
      expect(JSON.parse(out)).toEqual(['rebase_merge', ['one', 'two'], ['one', 'two'], 'private', true]);
    });
  });
});
