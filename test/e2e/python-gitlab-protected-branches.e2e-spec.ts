import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gitOk, tempDirs } from '../support/git';
import { runPython } from '../support/python-gitlab';
import { createUser, type SeededUser } from '../support/seed';
import { freePort, startTestApp, type TestApp } from '../support/test-app';

/**
 * Debian's python3-gitlab (3.12), as a script protecting branches would call Lode:
 * `project.protectedbranches` (list, get, create, delete) and the branches API's protect/unprotect
 * through its `http_put` (3.12 dropped `ProjectBranch.protect`). Its output is asserted here.
 */

const SCRIPT = `
import json, sys, warnings
import gitlab
warnings.simplefilter("ignore")
url, token, project_id = sys.argv[1], sys.argv[2], int(sys.argv[3])
gl = gitlab.Gitlab(url, private_token=token)
project = gl.projects.get(project_id)
levels = lambda b: [b.name, [l["access_level"] for l in b.push_access_levels], [l["access_level"] for l in b.merge_access_levels]]
out = {}
out["initial"] = [levels(b) for b in project.protectedbranches.list()]
created = project.protectedbranches.create({"name": "*-stable", "push_access_level": gitlab.const.DEVELOPER_ACCESS, "merge_access_level": gitlab.const.MAINTAINER_ACCESS})
out["created"] = levels(created)
project.protectedbranches.create({"name": "feature/*", "push_access_level": gitlab.const.NO_ACCESS})
out["get_wildcard"] = levels(project.protectedbranches.get("*-stable"))
out["get_slash"] = levels(project.protectedbranches.get("feature/*"))
try:
    project.protectedbranches.create({"name": "master"})
    out["duplicate"] = None
except gitlab.exceptions.GitlabCreateError as e:
    out["duplicate"] = [e.response_code, e.error_message]
try:
    project.protectedbranches.get("nope")
    out["missing"] = None
except gitlab.exceptions.GitlabGetError as e:
    out["missing"] = [e.response_code, e.error_message]
project.protectedbranches.get("*-stable").delete()
project.protectedbranches.delete("feature/*")
out["after_delete"] = [b.name for b in project.protectedbranches.list()]
protect = gl.http_put(f"/projects/{project_id}/repository/branches/topic/protect", post_data={"developers_can_push": True})
out["protect"] = [protect["name"], protect["protected"], protect["developers_can_push"], protect["developers_can_merge"]]
unprotect = gl.http_put(f"/projects/{project_id}/repository/branches/topic/unprotect")
out["unprotect"] = [unprotect["name"], unprotect["protected"]]
out["final"] = [levels(b) for b in project.protectedbranches.list(get_all=True)]
print(json.dumps(out))
`;

describe('python-gitlab 3.12 manages protected branches', () => {
  let t: TestApp;
  let owner: SeededUser;
  let project: { id: number; path_with_namespace: string };
  let url: string;
  const tmp = tempDirs();

  beforeAll(async () => {
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    // Link headers are built on LODE_EXTERNAL_URL, which python-gitlab follows for get_all.
    t = await startTestApp({ externalUrl: url });
    await t.app.listen(port, '127.0.0.1');
    owner = await createUser(t);
    const res = await t
      .http()
      .post('/api/v4/projects')
      .set('PRIVATE-TOKEN', owner.token)
      .send({ name: 'Python protects', visibility: 'private' });
    project = res.body;
    const dir = tmp.make();
    await gitOk(['init', '-q', '-b', 'master', dir]);
    writeFileSync(join(dir, 'a.txt'), 'a\n');
    await gitOk(['add', '.'], dir);
    await gitOk(['commit', '-q', '-m', 'first'], dir);
    await gitOk(['branch', 'topic'], dir);
    await gitOk(
      [
        'push',
        '-q',
        `http://git:${owner.token}@127.0.0.1:${port}/${project.path_with_namespace}.git`,
        'master',
        'topic',
      ],
      dir,
    );
  });
  afterAll(async () => {
    tmp.removeAll();
    await t.close();
  });

  it('answers every call the way the client expects', async () => {
    const out = JSON.parse(await runPython(SCRIPT, [url, owner.token, String(project.id)])) as Record<string, unknown>;
    expect(out).toEqual({
      // The first push protected the default branch.
      initial: [['master', [40], [40]]],
      created: ['*-stable', [30], [40]],
      get_wildcard: ['*-stable', [30], [40]],
      get_slash: ['feature/*', [0], [40]],
      duplicate: [409, "Protected branch 'master' already exists"],
      missing: [404, '404 Not found'],
      after_delete: ['master'],
      protect: ['topic', true, true, false],
      unprotect: ['topic', false],
      final: [['master', [40], [40]]],
    });
  });
});
