import { repositoryPath } from '@app/git';
import type { AddressInfo } from 'node:net';
import { expectShape } from '../contract/shape';
import { gitOk, tempDirs } from '../support/git';
import { runPython } from '../support/python-gitlab';
import { createUser, type SeededUser } from '../support/seed';
import { startTestApp, type TestApp } from '../support/test-app';

const ZERO = '0'.repeat(40);
const FORBIDDEN = { message: '403 Forbidden' };
const PUSH_REFUSED = { message: 'You are not allowed to push code to protected branches on this project.' };
const DELETE_REFUSED = {
  message:
    'You are not allowed to delete protected branches from this project. Only a project master or owner can delete a protected branch.',
};
const CHERRY_PICK_REFUSED = {
  message:
    'Sorry, we cannot cherry-pick this commit automatically. This commit may already have been cherry-picked, or a more recent commit may have updated some of its content.',
};

/**
 * The API's ref writes (GitLab 10.x branches, tags, cherry-pick and merged-branches endpoints), each
 * moved through the gate a push passes and recorded as `RepositoryPushed` with origin `api`.
 */
describe('repository ref writes', () => {
  let t: TestApp;
  let owner: SeededUser;
  let maintainer: SeededUser;
  let developer: SeededUser;
  let reporter: SeededUser;
  let guest: SeededUser;
  let stranger: SeededUser;
  let project: { id: number; path_with_namespace: string };
  let first: string;
  let second: string;
  const tmp = tempDirs();

  const as = (user: SeededUser) => ({
    post: (path: string, body: object = {}) =>
      t.http().post(`/api/v4/projects/${project.id}${path}`).set('PRIVATE-TOKEN', user.token).send(body),
    delete: (path: string) => t.http().delete(`/api/v4/projects/${project.id}${path}`).set('PRIVATE-TOKEN', user.token),
    get: (path: string) => t.http().get(`/api/v4/projects/${project.id}${path}`).set('PRIVATE-TOKEN', user.token),
  });
  const heads = async () => {
    const out = await gitOk(
      ['for-each-ref', '--format=%(refname) %(objectname)'],
      repositoryPath(t.config.dataDir, project.id),
    );
    return new Map(
      out
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split(' ') as [string, string]),
    );
  };
  const pushes = async () =>
    t.db.query<
      {
        data: { userId: number; updates: { ref: string; before: string; after: string }[] };
        metadata: { origin: string };
      }[]
    >(
      `select data, metadata from events where type = 'RepositoryPushed' and (data->>'projectId')::int = $1 order by global_position`,
      [project.id],
    );
  /** The push hooks' fan-out jobs written with the project's recorded pushes (webhookJobsRoute). */
  const fanOuts = async () =>
    (
      await t.db.query<{ count: number }[]>(
        `select count(*)::int as count from outbox where queue = 'webhooks' and name = 'push-fanout' and (data->>'projectId')::int = $1`,
        [project.id],
      )
    )[0].count;
  const commit = async (user: SeededUser, branch: string, path: string, content: string, start?: string) => {
    const res = await as(user).post('/repository/commits', {
      branch,
      start_branch: start,
      commit_message: `write ${path}`,
      actions: [{ action: start || branch === 'master' ? 'create' : 'update', file_path: path, content }],
    });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };

  beforeAll(async () => {
    t = await startTestApp();
    await t.app.listen(0, '127.0.0.1');
    owner = await createUser(t, { name: 'Olive Owner' });
    maintainer = await createUser(t, { name: 'Mo Maintainer' });
    developer = await createUser(t, { name: 'Dee Developer' });
    reporter = await createUser(t);
    guest = await createUser(t);
    stranger = await createUser(t);
    project = (
      await t
        .http()
        .post('/api/v4/projects')
        .set('PRIVATE-TOKEN', owner.token)
        .send({ name: 'Refs', visibility: 'private' })
    ).body;
    for (const [user, level] of [
      [maintainer, 40],
      [developer, 30],
      [reporter, 20],
      [guest, 10],
    ] as const)
      expect((await as(owner).post('/members', { user_id: user.id, access_level: level })).status).toBe(201);
    first = await commit(owner, 'master', 'a.txt', 'a\n');
    second = await commit(owner, 'master', 'b.txt', 'b\n');
    expect(
      (
        await as(owner).post('/protected_branches', {
          name: 'release-*',
          push_access_level: 40,
          merge_access_level: 40,
        })
      ).status,
    ).toBe(201);
  });
  afterAll(async () => {
    tmp.removeAll();
    await t.close();
  });

  describe('POST /projects/:id/repository/branches', () => {
    it('creates a branch from a branch, a tag or a sha for developers, recorded as a push', async () => {
      const before = (await pushes()).length;
      const hooked = await fanOuts();
      const res = await as(developer).post('/repository/branches', { branch: 'feature', ref: 'master' });
      expect(res.status).toBe(201);
      expectShape(res.body, 'branch');
      expect(res.body).toMatchObject({ name: 'feature', commit: { id: second }, protected: false, default: false });
      expectShape(res.body.commit, 'commit');
      expect((await heads()).get('refs/heads/feature')).toBe(second);
      const recorded = (await pushes()).slice(before);
      expect(recorded).toHaveLength(1);
      expect(recorded[0].data.userId).toBe(developer.id);
      expect(recorded[0].metadata.origin).toBe('api');
      expect(await fanOuts()).toBe(hooked + 1);
      expect(recorded[0].data.updates).toEqual([
        expect.objectContaining({ ref: 'refs/heads/feature', before: ZERO, after: second }),
      ]);

      const bySha = await as(developer).post('/repository/branches', { branch: 'release/old', ref: first.slice(0, 8) });
      expect(bySha.status).toBe(201);
      expect(bySha.body.commit.id).toBe(first);
      expect((await as(developer).get('/repository/branches/release%2Fold')).body.name).toBe('release/old');
    });

    it("answers GitLab's 400s and leaves the refs as they were", async () => {
      const refs = await heads();
      const bad = async (body: object, message: string) => {
        const res = await as(developer).post('/repository/branches', body);
        expect([res.status, res.body]).toEqual([400, { message }]);
      };
      await bad({ branch: 'feature', ref: 'master' }, 'Branch already exists');
      await bad({ branch: 'bad..name', ref: 'master' }, 'Branch name is invalid');
      await bad({ branch: 'refs/heads/x', ref: 'master' }, 'Branch name is invalid');
      await bad({ branch: 'fresh', ref: 'nope' }, 'Invalid reference name');
      await bad({ branch: 'feature/x', ref: 'master' }, "Failed to create branch 'feature/x': feature is in the way");
      await bad({ branch: 'release', ref: 'master' }, "Failed to create branch 'release': release/old is in the way");
      // Grape's words for a missing parameter, in its `error` key.
      for (const [body, error] of [
        [{ ref: 'master' }, 'branch is missing'],
        [{ branch: 'fresh' }, 'ref is missing'],
      ] as const)
        expect((await as(developer).post('/repository/branches', body)).body).toEqual({ error });
      expect(await heads()).toEqual(refs);
    });

    it('refuses a protected branch below its push level, in the push rule’s words; maintainers make it', async () => {
      expect((await as(developer).post('/repository/branches', { branch: 'release-1', ref: 'master' })).body).toEqual(
        PUSH_REFUSED,
      );
      expect((await heads()).has('refs/heads/release-1')).toBe(false);
      const res = await as(maintainer).post('/repository/branches', { branch: 'release-1', ref: 'master' });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ name: 'release-1', protected: true, developers_can_push: false });
    });

    it('makes one branch of many callers racing for one name; the others hear it exists', async () => {
      const answers = await Promise.all(
        Array.from({ length: 8 }, () => as(developer).post('/repository/branches', { branch: 'raced', ref: 'master' })),
      );
      expect(answers.filter((r) => r.status === 201)).toHaveLength(1);
      for (const r of answers.filter((a) => a.status !== 201))
        expect([r.status, r.body]).toEqual([400, { message: 'Branch already exists' }]);
      // One push recorded: the losers of the swap moved nothing and recorded nothing.
      const made = (await pushes()).filter((p) => p.data.updates.some((u) => u.ref === 'refs/heads/raced'));
      expect(made).toHaveLength(1);
      const deletions = await Promise.all(
        Array.from({ length: 5 }, () => as(developer).delete('/repository/branches/raced')),
      );
      expect(deletions.map((r) => r.status).sort()).toEqual([204, 404, 404, 404, 404]);
      const gone = (await pushes()).filter((p) =>
        p.data.updates.some((u) => u.ref === 'refs/heads/raced' && u.after === ZERO),
      );
      expect(gone).toHaveLength(1);
    });

    it('answers Invalid reference name in an empty repository', async () => {
      const empty = (await t.http().post('/api/v4/projects').set('PRIVATE-TOKEN', owner.token).send({ name: 'Empty' }))
        .body as { id: number };
      const res = await t
        .http()
        .post(`/api/v4/projects/${empty.id}/repository/branches`)
        .set('PRIVATE-TOKEN', owner.token)
        .send({ branch: 'master', ref: 'master' });
      expect([res.status, res.body]).toEqual([400, { message: 'Invalid reference name' }]);
    });

    it('is for developers and up: 403 for reporters and guests, 404 for strangers', async () => {
      expect((await as(reporter).post('/repository/branches', { branch: 'r', ref: 'master' })).body).toEqual(FORBIDDEN);
      expect((await as(guest).post('/repository/branches', { branch: 'g', ref: 'master' })).status).toBe(403);
      expect((await as(stranger).post('/repository/branches', { branch: 's', ref: 'master' })).body).toEqual({
        message: '404 Project Not Found',
      });
    });
  });

  describe('DELETE /projects/:id/repository/branches/:branch', () => {
    it('deletes a branch (204, recorded as a push) and answers 404 Branch Not Found after', async () => {
      await as(developer).post('/repository/branches', { branch: 'doomed', ref: 'master' });
      const before = (await pushes()).length;
      expect((await as(developer).delete('/repository/branches/doomed')).status).toBe(204);
      expect((await heads()).has('refs/heads/doomed')).toBe(false);
      const [push] = (await pushes()).slice(before);
      expect(push.data.updates).toEqual([expect.objectContaining({ ref: 'refs/heads/doomed', after: ZERO })]);
      expect((await as(developer).delete('/repository/branches/doomed')).body).toEqual({
        message: '404 Branch Not Found',
      });
      expect((await as(developer).delete('/repository/branches/release%2Fold')).status).toBe(204);
    });

    it('keeps protected branches from developers and the default branch from everyone', async () => {
      expect((await as(developer).delete('/repository/branches/release-1')).body).toEqual(DELETE_REFUSED);
      expect((await as(owner).delete('/repository/branches/master')).body).toEqual({
        message: 'The default branch of a project cannot be deleted.',
      });
      expect((await heads()).has('refs/heads/master')).toBe(true);
      expect((await as(reporter).delete('/repository/branches/feature')).body).toEqual(FORBIDDEN);
      expect((await as(maintainer).delete('/repository/branches/release-1')).status).toBe(204);
    });
  });

  describe('tags', () => {
    it('creates a lightweight tag, and an annotated one with the caller as tagger and its release', async () => {
      const before = (await pushes()).length;
      const hooked = await fanOuts();
      const light = await as(developer).post('/repository/tags', { tag_name: 'v1.0', ref: first });
      expect(light.status).toBe(201);
      expectShape(light.body, 'tag');
      expect(light.body).toMatchObject({
        name: 'v1.0',
        message: null,
        target: first,
        commit: { id: first },
        release: null,
      });

      const annotated = await as(developer).post('/repository/tags', {
        tag_name: 'v1.1',
        ref: 'master',
        message: '  Release 1.1\n',
        release_description: 'Notes for 1.1',
      });
      expect(annotated.status).toBe(201);
      expectShape(annotated.body, 'tag');
      expect(annotated.body).toMatchObject({
        name: 'v1.1',
        message: 'Release 1.1',
        commit: { id: second },
        release: { tag_name: 'v1.1', description: 'Notes for 1.1' },
      });
      expect(annotated.body.target).not.toBe(second);
      const object = await gitOk(
        ['cat-file', '-p', annotated.body.target],
        repositoryPath(t.config.dataDir, project.id),
      );
      expect(object).toContain(`tagger Dee Developer <${developer.email}>`);
      expect((await as(developer).get('/repository/tags/v1.1')).body).toEqual(annotated.body);

      const recorded = (await pushes()).slice(before);
      expect(recorded.map((p) => p.data.updates[0].ref)).toEqual(['refs/tags/v1.0', 'refs/tags/v1.1']);
      expect(recorded.every((p) => p.metadata.origin === 'api')).toBe(true);
      expect(await fanOuts()).toBe(hooked + 2);
    });

    it('makes a branch from a tag (peeled to its commit)', async () => {
      const res = await as(developer).post('/repository/branches', { branch: 'from-tag', ref: 'v1.1' });
      expect(res.status).toBe(201);
      expect(res.body.commit.id).toBe(second);
      expect((await as(developer).delete('/repository/branches/from-tag')).status).toBe(204);
    });

    it("answers GitLab's 400s for a tag", async () => {
      const bad = async (body: object, message: string) => {
        const res = await as(developer).post('/repository/tags', body);
        expect([res.status, res.body]).toEqual([400, { message }]);
      };
      await bad({ tag_name: 'v1.0', ref: 'master' }, 'Tag v1.0 already exists');
      await bad({ tag_name: 'v2', ref: 'nope' }, 'Target nope is invalid');
      await bad({ tag_name: 'v 2', ref: 'master' }, 'Tag name invalid');
      expect((await heads()).has('refs/tags/v2')).toBe(false);
      expect((await as(reporter).post('/repository/tags', { tag_name: 'r', ref: 'master' })).body).toEqual(FORBIDDEN);
    });

    it('deletes a tag with its release (204), then 404 Tag Not Found', async () => {
      expect((await as(reporter).delete('/repository/tags/v1.1')).body).toEqual(FORBIDDEN);
      expect((await as(developer).delete('/repository/tags/v1.1')).status).toBe(204);
      expect((await heads()).has('refs/tags/v1.1')).toBe(false);
      expect((await as(developer).delete('/repository/tags/v1.1')).body).toEqual({ message: '404 Tag Not Found' });
      // The release went with it: the same name again has none.
      const again = await as(developer).post('/repository/tags', { tag_name: 'v1.1', ref: 'master' });
      expect(again.body.release).toBeNull();
    });
  });

  it('keeps the release notes a tag deleted over git left behind, as 10.x, when the tag is made again', async () => {
    await as(developer).post('/repository/tags', { tag_name: 'v3', ref: 'master', release_description: 'Old notes' });
    const port = (t.app.getHttpServer().address() as AddressInfo).port;
    const dir = tmp.make();
    await gitOk(['init', '-q', dir]);
    await gitOk(
      ['push', '-q', `http://git:${owner.token}@127.0.0.1:${port}/${project.path_with_namespace}.git`, ':refs/tags/v3'],
      dir,
    );
    expect((await heads()).has('refs/tags/v3')).toBe(false);
    const res = await as(developer).post('/repository/tags', {
      tag_name: 'v3',
      ref: 'master',
      release_description: 'New',
    });
    expect(res.status).toBe(201);
    expect(res.body.release).toEqual({ tag_name: 'v3', description: 'Old notes' });
    expect((await as(developer).delete('/repository/tags/v3')).status).toBe(204);
  });

  describe('POST /projects/:id/repository/commits/:sha/cherry_pick', () => {
    let change: string;

    it('applies a commit on a branch: the original author, the caller as committer (201 Commit)', async () => {
      change = await commit(developer, 'topic', 'c.txt', 'c\n', 'master');
      await commit(owner, 'master', 'd.txt', 'd\n');
      const res = await as(maintainer).post(`/repository/commits/${change}/cherry_pick`, { branch: 'master' });
      expect(res.status).toBe(201);
      expectShape(res.body, 'commit');
      expect(res.body).toMatchObject({
        title: 'write c.txt',
        message: `write c.txt\n\n(cherry picked from commit ${change})`,
        author_name: 'Dee Developer',
        committer_name: 'Mo Maintainer',
        committer_email: maintainer.email,
      });
      expect((await heads()).get('refs/heads/master')).toBe(res.body.id);
      const file = await as(owner).get('/repository/files/c.txt?ref=master');
      expect(Buffer.from(file.body.content, 'base64').toString()).toBe('c\n');
    });

    it('refuses what does not apply, an unknown commit or branch, and a protected branch below its level', async () => {
      const tip = (await heads()).get('refs/heads/master');
      expect(
        (await as(maintainer).post(`/repository/commits/${change}/cherry_pick`, { branch: 'master' })).body,
      ).toEqual(CHERRY_PICK_REFUSED);
      expect(
        (await as(maintainer).post(`/repository/commits/${'e'.repeat(40)}/cherry_pick`, { branch: 'master' })).body,
      ).toEqual({ message: '404 Commit Not Found' });
      expect((await as(maintainer).post(`/repository/commits/${change}/cherry_pick`, { branch: 'nope' })).body).toEqual(
        {
          message: '404 Branch Not Found',
        },
      );
      const other = await commit(developer, 'topic', 'c.txt', 'c2\n');
      expect((await as(developer).post(`/repository/commits/${other}/cherry_pick`, { branch: 'master' })).body).toEqual(
        PUSH_REFUSED,
      );
      expect((await as(reporter).post(`/repository/commits/${other}/cherry_pick`, { branch: 'master' })).body).toEqual(
        FORBIDDEN,
      );
      expect((await heads()).get('refs/heads/master')).toBe(tip);
    });
  });

  describe('DELETE /projects/:id/repository/merged_branches', () => {
    it('deletes branches the default branch contains, keeping protected ones and the default branch (202)', async () => {
      for (const [user, branch, ref] of [
        [developer, 'merged-1', first],
        [developer, 'merged-2', second],
        [maintainer, 'release-old', first],
      ] as const)
        expect((await as(user).post('/repository/branches', { branch, ref })).status).toBe(201);
      expect((await as(reporter).delete('/repository/merged_branches')).body).toEqual(FORBIDDEN);
      const res = await as(developer).delete('/repository/merged_branches');
      expect([res.status, res.body]).toEqual([202, { message: '202 Accepted' }]);
      const branches = [...(await heads()).keys()].filter((r) => r.startsWith('refs/heads/')).sort();
      // `feature` (at an older master commit) went too; `topic` has commits master lacks.
      expect(branches).toEqual(['refs/heads/master', 'refs/heads/release-old', 'refs/heads/topic']);
    });
  });

  it('refuses every ref write on an archived project', async () => {
    expect((await as(owner).post('/archive')).status).toBe(201);
    expect((await as(owner).post('/repository/branches', { branch: 'x', ref: 'master' })).body).toEqual(FORBIDDEN);
    expect((await as(owner).post('/repository/tags', { tag_name: 'x', ref: 'master' })).body).toEqual(FORBIDDEN);
    expect((await as(owner).delete('/repository/branches/topic')).body).toEqual(FORBIDDEN);
    expect((await as(owner).delete('/repository/tags/v1.0')).body).toEqual(FORBIDDEN);
    expect((await as(owner).delete('/repository/merged_branches')).body).toEqual(FORBIDDEN);
    expect((await as(owner).post(`/repository/commits/${first}/cherry_pick`, { branch: 'topic' })).body).toEqual(
      FORBIDDEN,
    );
    expect((await as(owner).post('/unarchive')).status).toBe(201);
  });

  it('is what python-gitlab 3.12 calls: branches, tags, cherry_pick and delete_merged_branches', async () => {
    const port = (t.app.getHttpServer().address() as AddressInfo).port;
    const script = `
import json, sys, warnings
import gitlab
warnings.simplefilter("ignore")
gl = gitlab.Gitlab(sys.argv[1], private_token=sys.argv[2])
p = gl.projects.get(int(sys.argv[3]))
b = p.branches.create({"branch": "py", "ref": "master"})
c = p.commits.create({"branch": "py", "commit_message": "py change", "actions": [{"action": "create", "file_path": "py.txt", "content": "py"}]})
p.branches.create({"branch": "py-target", "ref": "master"})
picked = p.commits.get(c.id).cherry_pick(branch="py-target")
t = p.tags.create({"tag_name": "py-1", "ref": "py", "message": "from python"})
out = {"branch": b.name, "tag": [t.name, t.message], "target": p.branches.get("py-target").commit["message"]}
p.tags.delete("py-1")
p.branches.delete("py")
p.delete_merged_branches()
out["branches"] = sorted(x.name for x in p.branches.list(all=True))
out["tags"] = sorted(x.name for x in p.tags.list(all=True))
print(json.dumps(out))
`;
    const out = await runPython(script, [`http://127.0.0.1:${port}`, developer.token, String(project.id)]);
    const r = JSON.parse(out) as { branch: string; tag: string[]; target: string; branches: string[]; tags: string[] };
    expect(r.branch).toBe('py');
    expect(r.tag).toEqual(['py-1', 'from python']);
    expect(r.target).toMatch(/^py change\n\n\(cherry picked from commit [0-9a-f]{40}\)$/);
    // py-target has the picked commit (not merged), so it stays; py was deleted by name.
    expect(r.branches).toEqual(['master', 'py-target', 'release-old', 'topic']);
    expect(r.tags).toEqual(['v1.0', 'v1.1']);
  });
});
