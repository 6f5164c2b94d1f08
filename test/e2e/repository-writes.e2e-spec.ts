import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { expectShape } from '../contract/shape';
import { gitOk, tempDirs } from '../support/git';
import { runPython } from '../support/python-gitlab';
import { createUser, type SeededUser } from '../support/seed';
import { startTestApp, type TestApp } from '../support/test-app';

const ZERO = '0'.repeat(40);

/**
 * The repository API's writes (GitLab's commits and files APIs): commits built in process, moved onto
 * their branch through the gate every push passes, recorded as `RepositoryPushed`.
 */
describe('repository writes', () => {
  let t: TestApp;
  let base: string;
  let owner: SeededUser;
  let developer: SeededUser;
  let reporter: SeededUser;
  let project: { id: number; path_with_namespace: string };
  const tmp = tempDirs();

  const as = (user: SeededUser) => ({
    post: (path: string, body: object) =>
      t.http().post(`/api/v4/projects/${project.id}${path}`).set('PRIVATE-TOKEN', user.token).send(body),
    put: (path: string, body: object) =>
      t.http().put(`/api/v4/projects/${project.id}${path}`).set('PRIVATE-TOKEN', user.token).send(body),
    delete: (path: string, body: object) =>
      t.http().delete(`/api/v4/projects/${project.id}${path}`).set('PRIVATE-TOKEN', user.token).send(body),
    get: (path: string) => t.http().get(`/api/v4/projects/${project.id}${path}`).set('PRIVATE-TOKEN', user.token),
  });
  const refs = async () => gitOk(['ls-remote', `http://git:${owner.token}@${base}/${project.path_with_namespace}.git`]);
  const file = async (path: string, ref = 'master') => {
    const res = await as(owner).get(`/repository/files/${encodeURIComponent(path)}?ref=${ref}`);
    return res.status === 200 ? Buffer.from(res.body.content, 'base64').toString() : res.status;
  };
  const pushes = async () =>
    t.db.query<{ data: { userId: number; updates: { ref: string; before: string; after: string }[] } }[]>(
      `select data from events where type = 'RepositoryPushed' and (data->>'projectId')::int = $1 order by global_position`,
      [project.id],
    );

  beforeAll(async () => {
    t = await startTestApp();
    await t.app.listen(0, '127.0.0.1');
    base = `127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    owner = await createUser(t, { name: 'Olive Owner' });
    developer = await createUser(t);
    reporter = await createUser(t);
    project = (
      await t
        .http()
        .post('/api/v4/projects')
        .set('PRIVATE-TOKEN', owner.token)
        .send({ name: 'Written', visibility: 'private' })
    ).body;
    for (const [user, level] of [
      [developer, 30],
      [reporter, 20],
    ] as const)
      expect((await as(owner).post('/members', { user_id: user.id, access_level: level })).status).toBe(201);
  });
  afterAll(async () => {
    tmp.removeAll();
    await t.close();
  });

  it('makes the first commit of an empty repository, which names the default branch, recorded as a push', async () => {
    const res = await as(owner).post('/repository/commits', {
      branch: 'master',
      commit_message: 'Initial commit\n\nwith a body',
      actions: [
        { action: 'create', file_path: 'README.md', content: '# Written\n' },
        {
          action: 'create',
          file_path: 'bin/run',
          content: Buffer.from('#!/bin/sh\necho hi\n').toString('base64'),
          encoding: 'base64',
        },
        // GitLab takes the execute bit from `chmod` alone (`execute_filemode` elsewhere is ignored).
        { action: 'chmod', file_path: 'bin/run', execute_filemode: true },
      ],
    });
    expect(res.status).toBe(201);
    expectShape(res.body, 'commit-detail');
    expect(res.body).toMatchObject({
      title: 'Initial commit',
      message: 'Initial commit\n\nwith a body',
      parent_ids: [],
      author_name: 'Olive Owner',
      author_email: owner.email,
      committer_name: 'Olive Owner',
      committer_email: owner.email,
      stats: { additions: 3, deletions: 0, total: 3 },
      status: null,
      project_id: project.id,
    });
    expect(await refs()).toContain(`${res.body.id}\trefs/heads/master`);
    expect((await as(owner).get('')).body.default_branch).toBe('master');
    const [push] = await pushes();
    expect(push.data.userId).toBe(owner.id);
    expect(push.data.updates).toEqual([
      expect.objectContaining({ ref: 'refs/heads/master', before: ZERO, after: res.body.id }),
    ]);
    // The stock client sees what the API wrote, the mode included.
    const clone = join(tmp.make(), 'c');
    await gitOk(['clone', '-q', `http://git:${owner.token}@${base}/${project.path_with_namespace}.git`, clone]);
    expect(await gitOk(['ls-tree', 'HEAD', 'bin/run'], clone)).toMatch(/^100755 blob /);
  });

  it('applies create, update, move, delete and chmod in one commit on top of the branch', async () => {
    const before = (await as(owner).get('/repository/branches/master')).body.commit.id;
    const res = await as(owner).post('/repository/commits', {
      branch: 'master',
      commit_message: 'Many things',
      author_name: 'Ann Author',
      author_email: 'ann@example.com',
      actions: [
        { action: 'update', file_path: 'README.md', content: '# Written, again\n' },
        { action: 'move', file_path: 'scripts/run', previous_path: 'bin/run' },
        { action: 'chmod', file_path: 'scripts/run', execute_filemode: false },
        { action: 'create', file_path: 'docs/a.md', content: 'a\n' },
        { action: 'create', file_path: 'docs/b.md', content: 'b\n' },
        { action: 'delete', file_path: 'docs/b.md' },
      ],
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      parent_ids: [before],
      author_name: 'Ann Author',
      author_email: 'ann@example.com',
      committer_email: owner.email,
    });
    expect(await file('README.md')).toBe('# Written, again\n');
    expect(await file('docs/a.md')).toBe('a\n');
    expect(await file('docs/b.md')).toBe(404);
    expect(await file('bin/run')).toBe(404);
    const tree = await as(owner).get('/repository/tree?recursive=true');
    expect(tree.body.map((e: { path: string; mode: string }) => `${e.mode} ${e.path}`).sort()).toEqual([
      '040000 docs',
      '040000 scripts',
      '100644 README.md',
      '100644 docs/a.md',
      '100644 scripts/run',
    ]);
  });

  it("refuses what cannot be done in GitLab's words and leaves the branch where it was", async () => {
    const head = await refs();
    const cases: [object, number, object][] = [
      [{ commit_message: 'x', actions: [] }, 400, { error: 'branch is missing' }],
      [
        { branch: 'master', actions: [{ action: 'create', file_path: 'a' }] },
        400,
        { error: 'commit_message is missing' },
      ],
      [{ branch: 'master', commit_message: 'x' }, 400, { error: 'actions is missing' }],
      [
        { branch: 'master', commit_message: 'x', actions: [{ action: 'copy', file_path: 'a' }] },
        400,
        { error: 'actions[0][action] does not have a valid value' },
      ],
      [
        { branch: 'master', commit_message: 'x', actions: [{ action: 'update', file_path: 'a' }] },
        400,
        { error: 'actions[0][content] is missing' },
      ],
      [
        {
          branch: 'master',
          commit_message: 'x',
          actions: [{ action: 'create', file_path: 'README.md', content: 'x' }],
        },
        400,
        { message: 'A file with this name already exists' },
      ],
      [
        { branch: 'master', commit_message: 'x', actions: [{ action: 'update', file_path: 'nope.md', content: 'x' }] },
        400,
        { message: "A file with this name doesn't exist" },
      ],
      [
        { branch: 'master', commit_message: 'x', actions: [{ action: 'delete', file_path: 'nope.md' }] },
        400,
        { message: "A file with this name doesn't exist" },
      ],
      [
        {
          branch: 'master',
          commit_message: 'x',
          actions: [{ action: 'create', file_path: '../escape', content: 'x' }],
        },
        400,
        { message: 'Invalid path' },
      ],
      [
        {
          branch: 'master',
          commit_message: 'x',
          actions: [{ action: 'create', file_path: 'b.bin', content: '%%%', encoding: 'base64' }],
        },
        400,
        { error: 'actions[0][content] is invalid' },
      ],
      [
        { branch: 'other', commit_message: 'x', actions: [{ action: 'create', file_path: 'c', content: 'x' }] },
        400,
        { message: 'You can only create or edit files when you are on a branch' },
      ],
      [
        {
          branch: 'other',
          start_branch: 'nope',
          commit_message: 'x',
          actions: [{ action: 'create', file_path: 'c', content: 'x' }],
        },
        400,
        { message: 'You can only create or edit files when you are on a branch' },
      ],
      [
        {
          branch: 'master',
          commit_message: 'x',
          actions: [{ action: 'update', file_path: 'README.md', content: 'x', last_commit_id: 'a'.repeat(40) }],
        },
        400,
        { message: 'The file has changed since you started editing it: README.md' },
      ],
    ];
    for (const [body, status, answer] of cases) {
      const res = await as(owner).post('/repository/commits', body);
      expect([res.status, res.body]).toEqual([status, answer]);
    }
    expect(await refs()).toBe(head);
  });

  it('takes developers to new branches, keeps them off the protected default branch, and reporters off the repository', async () => {
    const head = await refs();
    const protectedBranch = await as(developer).post('/repository/commits', {
      branch: 'master',
      commit_message: 'x',
      actions: [{ action: 'create', file_path: 'dev.md', content: 'x' }],
    });
    expect([protectedBranch.status, protectedBranch.body]).toEqual([
      403,
      { message: '403 Forbidden - You are not allowed to push into this branch' },
    ]);
    const reporterWrite = await as(reporter).post('/repository/commits', {
      branch: 'feature',
      start_branch: 'master',
      commit_message: 'x',
      actions: [{ action: 'create', file_path: 'r.md', content: 'x' }],
    });
    expect(reporterWrite.status).toBe(403);
    expect(await refs()).toBe(head);

    const feature = await as(developer).post('/repository/commits', {
      branch: 'feature',
      start_branch: 'master',
      commit_message: 'Feature',
      actions: [{ action: 'create', file_path: 'dev.md', content: 'dev\n' }],
    });
    expect(feature.status).toBe(201);
    expect(await file('dev.md', 'feature')).toBe('dev\n');
    expect(await file('dev.md', 'master')).toBe(404);
    const again = await as(developer).post('/repository/commits', {
      branch: 'feature',
      start_branch: 'master',
      commit_message: 'x',
      actions: [{ action: 'create', file_path: 'dev2.md', content: 'x' }],
    });
    expect(again.body).toEqual({
      message: "A branch called 'feature' already exists. Switch to that branch in order to make changes",
    });
  });

  it('creates, updates and deletes single files (the files API), refusing a stale edit', async () => {
    const path = encodeURIComponent('notes/today.md');
    const created = await as(developer).post(`/repository/files/${path}`, {
      branch: 'feature',
      commit_message: 'add notes',
      content: 'first\n',
    });
    expect([created.status, created.body]).toEqual([201, { file_path: 'notes/today.md', branch: 'feature' }]);
    const twice = await as(developer).post(`/repository/files/${path}`, {
      branch: 'feature',
      commit_message: 'again',
      content: 'x',
    });
    expect([twice.status, twice.body]).toEqual([400, { message: 'A file with this name already exists' }]);

    const meta = await as(developer).get(`/repository/files/${path}?ref=feature`);
    const stale = await as(developer).put(`/repository/files/${path}`, {
      branch: 'feature',
      commit_message: 'edit',
      content: 'second\n',
      last_commit_id: '1'.repeat(40),
    });
    expect([stale.status, stale.body]).toEqual([
      400,
      { message: 'You are attempting to update a file that has changed since you started editing it.' },
    ]);
    const updated = await as(developer).put(`/repository/files/${path}`, {
      branch: 'feature',
      commit_message: 'edit',
      content: Buffer.from('second\n').toString('base64'),
      encoding: 'base64',
      last_commit_id: meta.body.last_commit_id,
    });
    expect([updated.status, updated.body]).toEqual([200, { file_path: 'notes/today.md', branch: 'feature' }]);
    expect(await file('notes/today.md', 'feature')).toBe('second\n');

    // The default branch is protected: the files API answers that as a 400, as GitLab's Files services do.
    const onMaster = await as(developer).post(`/repository/files/${path}`, {
      branch: 'master',
      commit_message: 'x',
      content: 'x',
    });
    expect([onMaster.status, onMaster.body]).toEqual([
      400,
      { message: 'You are not allowed to push into this branch' },
    ]);
    expect(
      (await as(reporter).post(`/repository/files/x.md`, { branch: 'feature', commit_message: 'x', content: 'x' }))
        .status,
    ).toBe(403);

    const deleted = await as(developer).delete(`/repository/files/${path}`, {
      branch: 'feature',
      commit_message: 'drop',
    });
    expect(deleted.status).toBe(204);
    expect(await file('notes/today.md', 'feature')).toBe(404);
  });

  it('loses no commit when twenty writers commit to one branch at once', async () => {
    const before = (await as(owner).get('/repository/branches/feature')).body.commit.id;
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        as(developer).post('/repository/commits', {
          branch: 'feature',
          commit_message: `writer ${i}`,
          actions: [{ action: 'create', file_path: `race/${i}.txt`, content: `${i}\n` }],
        }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(201));
    const tree = await as(owner).get('/repository/tree?path=race&ref=feature&per_page=100');
    expect(tree.body.map((e: { name: string }) => e.name).sort()).toEqual(
      Array.from({ length: 20 }, (_, i) => `${i}.txt`).sort(),
    );
    const log = await as(owner).get(`/repository/commits?ref_name=feature&per_page=100`);
    const ids = log.body.map((c: { id: string }) => c.id);
    for (const r of results) expect(ids).toContain(r.body.id);
    expect(ids).toContain(before);
  });

  it('is what python-gitlab 3.12 calls: project.commits.create and project.files create/update/delete', async () => {
    const port = (t.app.getHttpServer().address() as AddressInfo).port;
    const script = `
import json, sys, warnings
import gitlab
warnings.simplefilter("ignore")
gl = gitlab.Gitlab(sys.argv[1], private_token=sys.argv[2])
p = gl.projects.get(int(sys.argv[3]))
c = p.commits.create({"branch": "feature", "commit_message": "from python", "actions": [{"action": "create", "file_path": "py.txt", "content": "py"}]})
f = p.files.create({"file_path": "py2.txt", "branch": "feature", "content": "one", "commit_message": "py2"})
f = p.files.get(file_path="py2.txt", ref="feature")
f.content = "two"
f.save(branch="feature", commit_message="py2 again")
p.files.delete(file_path="py.txt", branch="feature", commit_message="drop py")
print(json.dumps({"commit": c.id, "title": c.title, "py2": p.files.get(file_path="py2.txt", ref="feature").decode().decode()}))
`;
    const out = await runPython(script, [`http://127.0.0.1:${port}`, developer.token, String(project.id)]);
    const r = JSON.parse(out) as { commit: string; title: string; py2: string };
    expect(r.title).toBe('from python');
    expect(r.py2).toBe('two');
    expect(await file('py.txt', 'feature')).toBe(404);
    expect(await refs()).toContain('refs/heads/feature');
  });
});
