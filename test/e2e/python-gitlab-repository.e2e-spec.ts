import { repositoryPath } from '@app/git';
import { tempDirs } from '../support/git';
import { runPython } from '../support/python-gitlab';
import { buildSampleHistory, pushSampleHistory, type SampleHistory } from '../support/sample-history';
import { createUser, type SeededUser } from '../support/seed';
import { freePort, startTestApp, type TestApp } from '../support/test-app';

/**
 * Debian's python3-gitlab (3.12), the client people point at a GitLab, reading a repository through
 * Lode: commits, files, branches and tags, as a script would. Its output is asserted here.
 */

const SCRIPT = `
import json, sys, warnings
import gitlab
warnings.simplefilter("ignore")
url, token, project_id = sys.argv[1], sys.argv[2], int(sys.argv[3])
gl = gitlab.Gitlab(url, private_token=token)
project = gl.projects.get(project_id)
out = {}
out["commits"] = [c.id for c in project.commits.list(get_all=True, per_page=2)]
out["feature_commits"] = [c.id for c in project.commits.list(ref_name="feature/x")]
commit = project.commits.get("v1.2")
out["commit"] = {"id": commit.id, "parent_ids": commit.parent_ids, "stats": commit.stats, "status": commit.status}
out["diff"] = [[d["new_path"], d["new_file"], d["diff"]] for d in commit.diff()]
out["refs"] = commit.refs()
out["branch_refs"] = commit.refs(type="branch")
f = project.files.get(file_path="src/a.txt", ref="master")
out["file"] = {"content": f.decode().decode(), "blob_id": f.blob_id, "last_commit_id": f.last_commit_id, "file_name": f.file_name}
out["raw"] = project.files.raw(file_path="src/a.txt", ref="v1.0").decode()
out["blame"] = [[r["commit"]["id"], r["lines"]] for r in project.files.blame(file_path="src/a.txt", ref="master")]
out["branches"] = [[b.name, b.merged, b.default, b.protected] for b in project.branches.list()]
b = project.branches.get("feature/x")
out["branch"] = {"name": b.name, "commit": b.commit["id"], "developers_can_push": b.developers_can_push}
out["tags"] = [t.name for t in project.tags.list()]
out["tags_by_name"] = [t.name for t in project.tags.list(order_by="name", sort="asc")]
t = project.tags.get("v1.2")
out["tag"] = {"name": t.name, "message": t.message, "target": t.target, "commit": t.commit["id"], "release": t.release}
try:
    project.files.get(file_path="nope.txt", ref="master")
    out["missing"] = None
except gitlab.exceptions.GitlabGetError as e:
    out["missing"] = [e.response_code, e.error_message]
try:
    project.commits.get("nope")
    out["missing_commit"] = None
except gitlab.exceptions.GitlabGetError as e:
    out["missing_commit"] = [e.response_code, e.error_message]
print(json.dumps(out))
`;

describe('python-gitlab 3.12 reads commits, files, branches and tags', () => {
  let t: TestApp;
  let owner: SeededUser;
  let project: { id: number };
  let h: SampleHistory;
  let url: string;
  const tmp = tempDirs();

  beforeAll(async () => {
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    // Link headers are built on LODE_EXTERNAL_URL, which python-gitlab follows for get_all.
    t = await startTestApp({ externalUrl: url });
    await t.app.listen(port, '127.0.0.1');
    owner = await createUser(t);
    project = (
      await t
        .http()
        .post('/api/v4/projects')
        .set('PRIVATE-TOKEN', owner.token)
        .send({ name: 'Python reads', visibility: 'private' })
    ).body;
    h = await buildSampleHistory(tmp.make());
    await pushSampleHistory(h, repositoryPath(t.config.dataDir, project.id));
  });
  afterAll(async () => {
    tmp.removeAll();
    await t.close();
  });

  it('answers every call the way the client expects', async () => {
    const out = JSON.parse(await runPython(SCRIPT, [url, owner.token, String(project.id)])) as Record<string, unknown>;
    const { c1, c2, c3, cf } = h.sha;
    expect(out.commits).toEqual([c3, c2, c1]);
    expect(out.feature_commits).toEqual([cf, c1]);
    expect(out.commit).toEqual({
      id: c2,
      parent_ids: [c1],
      stats: { additions: 2, deletions: 1, total: 3 },
      status: null,
    });
    expect(out.diff).toEqual([
      ['docs/naïve.md', true, '@@ -0,0 +1 @@\n+naïve\n'],
      ['src/a.txt', false, '@@ -1,3 +1,3 @@\n a1\n-a2\n+B2\n a3\n'],
    ]);
    expect(out.refs).toEqual([
      { type: 'branch', name: 'level' },
      { type: 'branch', name: 'master' },
      { type: 'tag', name: 'v1.10' },
      { type: 'tag', name: 'v1.2' },
    ]);
    expect(out.branch_refs).toEqual([
      { type: 'branch', name: 'level' },
      { type: 'branch', name: 'master' },
    ]);
    expect(out.file).toMatchObject({ content: 'a1\nB2\na3\n', last_commit_id: c2, file_name: 'a.txt' });
    expect(out.raw).toBe('a1\na2\na3\n');
    expect(out.blame).toEqual([
      [c1, ['a1']],
      [c2, ['B2']],
      [c1, ['a3']],
    ]);
    expect(out.branches).toEqual([
      ['feature/x', false, false, false],
      ['level', false, false, false],
      ['master', false, true, false],
      ['old', true, false, false],
    ]);
    expect(out.branch).toEqual({ name: 'feature/x', commit: cf, developers_can_push: false });
    expect(out.tags).toEqual(['v1.10', 'v1.2', 'v1.0']);
    expect(out.tags_by_name).toEqual(['v1.0', 'v1.2', 'v1.10']);
    expect(out.tag).toEqual({
      name: 'v1.2',
      message: 'Release 1.2',
      target: h.annotatedTag,
      commit: c2,
      release: null,
    });
    expect(out.missing).toEqual([404, '404 File Not Found']);
    expect(out.missing_commit).toEqual([404, '404 Commit Not Found']);
  });
});
