import { Logger } from '@nestjs/common';
import { createUser, type SeededUser } from '../support/seed';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * Names git cannot write or check out: a ref part whose lock file would pass 255 bytes, a file name
 * over 255 bytes, a path over 4095, `.git` in any case. Each is a 400 in GitLab's words before anything
 * is written (no ref, no commit, no push recorded), and none is logged as a server error.
 */
describe('names git cannot write', () => {
  let t: TestApp;
  let owner: SeededUser;
  let project: { id: number };
  let errors: string[];
  const long = (n: number, c = 'a') => c.repeat(n);

  const post = (path: string, body: object) =>
    t.http().post(`/api/v4/projects/${project.id}${path}`).set('PRIVATE-TOKEN', owner.token).send(body);
  const branches = async () =>
    (
      (await t.http().get(`/api/v4/projects/${project.id}/repository/branches`).set('PRIVATE-TOKEN', owner.token))
        .body as { name: string }[]
    ).map((b) => b.name);
  const tags = async () =>
    (
      (await t.http().get(`/api/v4/projects/${project.id}/repository/tags`).set('PRIVATE-TOKEN', owner.token)).body as {
        name: string;
      }[]
    ).map((b) => b.name);
  const pushCount = async () =>
    Number(
      (
        await t.db.query<{ n: string }[]>(
          `select count(*) as n from events where type = 'RepositoryPushed' and (data->>'projectId')::int = $1`,
          [project.id],
        )
      )[0].n,
    );

  const logError = Logger.prototype.error;
  beforeAll(async () => {
    t = await startTestApp();
    owner = await createUser(t);
    project = (await t.http().post('/api/v4/projects').set('PRIVATE-TOKEN', owner.token).send({ name: 'Names' })).body;
  });
  afterAll(async () => {
    await t?.close();
  });
  beforeEach(() => {
    errors = [];
    Logger.prototype.error = (m: unknown) => void errors.push(String(m));
  });
  afterEach(() => {
    Logger.prototype.error = logError;
    expect(errors).toEqual([]);
  });

  it('refuses a first commit onto a branch name git cannot write, leaving the repository empty', async () => {
    const branch = long(251);
    const res = await post('/repository/commits', {
      branch,
      commit_message: 'first',
      actions: [{ action: 'create', file_path: 'README.md', content: 'hi' }],
    });
    expect([res.status, res.body]).toEqual([
      400,
      { message: `Something went wrong when we tried to create '${branch}' for you: Branch name is invalid` },
    ]);
    expect(await branches()).toEqual([]);
    expect(await pushCount()).toBe(0);
  });

  it('takes a branch part of 250 bytes, the longest git can lock', async () => {
    const res = await post('/repository/files/README.md', {
      branch: 'master',
      commit_message: 'first',
      content: 'hi',
    });
    expect(res.status).toBe(201);
    const longest = long(250);
    expect((await post('/repository/branches', { branch: longest, ref: 'master' })).status).toBe(201);
    expect(await branches()).toContain(longest);
  });

  it('answers 400 for a 251-byte branch or tag, in every API that creates one', async () => {
    const before = { branches: await branches(), tags: await tags(), pushes: await pushCount() };
    const name = `feature/${long(251, 'b')}`;
    expect((await post('/repository/branches', { branch: name, ref: 'master' })).body).toEqual({
      message: 'Branch name is invalid',
    });
    expect((await post('/repository/tags', { tag_name: long(251, 't'), ref: 'master' })).body).toEqual({
      message: 'Tag name invalid',
    });
    const viaFiles = await post('/repository/files/other.md', {
      branch: name,
      start_branch: 'master',
      commit_message: 'x',
      content: 'x',
    });
    expect([viaFiles.status, viaFiles.body.message]).toEqual([
      400,
      `Something went wrong when we tried to create '${name}' for you: Branch name is invalid`,
    ]);
    const viaCommits = await post('/repository/commits', {
      branch: name,
      start_branch: 'master',
      commit_message: 'x',
      actions: [{ action: 'create', file_path: 'other.md', content: 'x' }],
    });
    expect(viaCommits.status).toBe(400);
    const release = await post('/releases', { tag_name: long(251, 'r'), ref: 'master' });
    expect([release.status, release.body]).toEqual([400, { message: 'Tag name invalid' }]);
    expect({ branches: await branches(), tags: await tags(), pushes: await pushCount() }).toEqual(before);
  });

  it('refuses file names no checkout can create, and writes nothing', async () => {
    const before = await pushCount();
    for (const path of [long(256), `dir/${long(10_240)}`, `${'d/'.repeat(2100)}x`, '.GIT/config', 'a/.Git/hooks/x']) {
      const res = await post(`/repository/files/${encodeURIComponent(path)}`, {
        branch: 'master',
        commit_message: 'x',
        content: 'x',
      });
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/^Invalid path/);
    }
    const actions = await post('/repository/commits', {
      branch: 'master',
      commit_message: 'x',
      actions: [
        { action: 'create', file_path: 'fine.md', content: 'x' },
        { action: 'create', file_path: long(300), content: 'x' },
      ],
    });
    expect(actions.status).toBe(400);
    expect(await pushCount()).toBe(before);
    // The longest name a checkout can create is taken.
    expect(
      (await post(`/repository/files/${long(255, 'f')}`, { branch: 'master', commit_message: 'x', content: 'x' }))
        .status,
    ).toBe(201);
  });
});
