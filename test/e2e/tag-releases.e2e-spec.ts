import { ProjectionRebuilder } from '@app/platform';
import { RemoveTagRelease } from '@app/projects';
import { CommandBus } from '@nestjs/cqrs';
import { createHash } from 'node:crypto';
import { expectShape } from '../contract/shape';
import { gitOk, tempDirs } from '../support/git';
import { runPython } from '../support/python-gitlab';
import { buildSampleHistory, type SampleHistory } from '../support/sample-history';
import { createUser, type SeededUser } from '../support/seed';
import { countStatements, freePort, startTestApp, type TestApp } from '../support/test-app';

const api = (path: string) => `/api/v4${path}`;
const FORBIDDEN = { message: '403 Forbidden' };
const PROJECT_NOT_FOUND = { message: '404 Project Not Found' };
const TAG_MISSING = { message: 'Tag does not exist' };
const RELEASE_MISSING = { message: 'Release does not exist' };
const RELEASE_EXISTS = { message: 'Release already exists' };

/**
 * Debian's python3-gitlab (3.12). Its `ProjectTag.set_release_description` (POST without a release,
 * PUT with one) is gone in 3.x, so the script sends those two calls through the client's own HTTP
 * layer (its error parsing included) and reads the notes back with `project.tags`.
 */
const SCRIPT = `
import json, sys, warnings
import gitlab
warnings.simplefilter("ignore")
url, token, project_id = sys.argv[1], sys.argv[2], int(sys.argv[3])
gl = gitlab.Gitlab(url, private_token=token)
project = gl.projects.get(project_id)
path = "/projects/%d/repository/tags/v1.2/release" % project_id
out = {"before": project.tags.get("v1.2").release}
out["created"] = gl.http_post(path, post_data={"description": "First notes"})
out["updated"] = gl.http_put(path, post_data={"description": "Second notes"})
out["read"] = project.tags.get("v1.2").release
out["listed"] = [[t.name, t.release] for t in project.tags.list()]
try:
    gl.http_put("/projects/%d/repository/tags/v1.0/release" % project_id, post_data={"description": "x"})
    out["missing"] = None
except gitlab.exceptions.GitlabHttpError as e:
    out["missing"] = [e.response_code, e.error_message]
print(json.dumps(out))
`;

describe('tag releases (GitLab 10.x POST|PUT .../tags/:tag_name/release)', () => {
  let t: TestApp;
  let url: string;
  let base: string;
  let owner: SeededUser;
  let maintainer: SeededUser;
  let developer: SeededUser;
  let reporter: SeededUser;
  let guest: SeededUser;
  let stranger: SeededUser;
  /** Private, owned by `owner`, every role a member, the sample history pushed over HTTP. */
  let project: { id: number; path: string };
  /** Public, owned by `owner` alone, the sample history pushed over HTTP. */
  let open: { id: number; path: string };
  let h: SampleHistory;
  const tmp = tempDirs();

  const as = (token?: string) => {
    const auth = <R extends { set: (k: string, v: string) => R }>(r: R) => (token ? r.set('PRIVATE-TOKEN', token) : r);
    return {
      get: (path: string) => auth(t.http().get(api(path))),
      post: (path: string, body: object = {}) => auth(t.http().post(api(path))).send(body),
      put: (path: string, body: object = {}) => auth(t.http().put(api(path))).send(body),
      delete: (path: string) => auth(t.http().delete(api(path))),
    };
  };
  const release = (id: number, tag: string) => `/projects/${id}/repository/tags/${encodeURIComponent(tag)}/release`;
  const tagOf = async (id: number, tag: string) =>
    (await as(owner.token).get(`/projects/${id}/repository/tags/${encodeURIComponent(tag)}`)).body as {
      release: unknown;
    };

  async function newProject(name: string, visibility: string): Promise<{ id: number; path: string }> {
    const res = await as(owner.token).post('/projects', { name, visibility });
    expect(res.status).toBe(201);
    return { id: res.body.id, path: res.body.path_with_namespace };
  }

  /**
   * Pushes the sample history's branches and tags with the stock git client over HTTP, as the owner:
   * default branch protection 2 lets only maintainers and owners make the first push into an empty repository.
   */
  const pushHistory = (
    path: string,
    token: string,
    refspecs = ['refs/heads/*:refs/heads/*', 'refs/tags/*:refs/tags/*'],
  ) => gitOk(['push', '-q', `http://git:${token}@${base}/${path}.git`, ...refspecs], h.work);

  beforeAll(async () => {
    const port = await freePort();
    base = `127.0.0.1:${port}`;
    url = `http://${base}`;
    t = await startTestApp({ externalUrl: url });
    await t.app.listen(port, '127.0.0.1');
    [owner, maintainer, developer, reporter, guest, stranger] = await Promise.all(
      Array.from({ length: 6 }, () => createUser(t)),
    );
    project = await newProject('released', 'private');
    open = await newProject('released in the open', 'public');
    for (const [user, level] of [
      [maintainer, 40],
      [developer, 30],
      [reporter, 20],
      [guest, 10],
    ] as const) {
      const res = await as(owner.token).post(`/projects/${project.id}/members`, {
        user_id: user.id,
        access_level: level,
      });
      expect(res.status).toBe(201);
    }
    h = await buildSampleHistory(tmp.make());
    await pushHistory(project.path, owner.token);
    await pushHistory(open.path, owner.token);
  });
  afterAll(async () => {
    tmp.removeAll();
    await t.close();
  });

  describe('POST .../tags/:tag_name/release', () => {
    it('adds notes to a tag for a developer: 201 with the Release entity, which the tag answers then show', async () => {
      const res = await as(developer.token).post(release(project.id, 'v1.0'), { description: '# Notes\n\n*one*' });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ tag_name: 'v1.0', description: '# Notes\n\n*one*' });
      expectShape(res.body, 'release');

      const one = await as(reporter.token).get(`/projects/${project.id}/repository/tags/v1.0`);
      expect(one.status).toBe(200);
      expectShape(one.body, 'tag');
      expect(one.body.release).toEqual({ tag_name: 'v1.0', description: '# Notes\n\n*one*' });
      expectShape(one.body.release, 'release');

      const list = await as(reporter.token).get(`/projects/${project.id}/repository/tags`);
      expect(list.status).toBe(200);
      for (const tag of list.body) expectShape(tag, 'tag');
      expect(list.body.map((tag: { name: string; release: unknown }) => [tag.name, tag.release])).toEqual([
        ['v1.10', null],
        ['v1.2', null],
        ['v1.0', { tag_name: 'v1.0', description: '# Notes\n\n*one*' }],
      ]);
      // Another project's tag of the same name keeps no release.
      expect((await tagOf(open.id, 'v1.0')).release).toBeNull();
    });

    it('409s `Release already exists` when the tag has notes, and leaves them', async () => {
      const res = await as(maintainer.token).post(release(project.id, 'v1.0'), { description: 'again' });
      expect(res.status).toBe(409);
      expect(res.body).toEqual(RELEASE_EXISTS);
      expect((await tagOf(project.id, 'v1.0')).release).toEqual({ tag_name: 'v1.0', description: '# Notes\n\n*one*' });
    });

    it("404s `Tag does not exist` (GitLab's own sentence) for a tag the repository lacks, a branch name too", async () => {
      for (const name of ['v9.9', 'master']) {
        const res = await as(developer.token).post(release(project.id, name), { description: 'x' });
        expect(res.status).toBe(404);
        expect(res.body).toEqual(TAG_MISSING);
      }
    });

    it('400s a missing description in Grape words, after the project and code checks', async () => {
      const res = await as(developer.token).post(release(project.id, 'v1.10'), {});
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'description is missing' });
      expect((await as(stranger.token).post(release(project.id, 'v1.10'), {})).body).toEqual(PROJECT_NOT_FOUND);
      expect((await as(guest.token).post(release(project.id, 'v1.10'), {})).body).toEqual(FORBIDDEN);
    });

    it('takes form-encoded parameters and a URL-encoded tag name with a slash, pushed by a developer', async () => {
      await gitOk(['tag', 'release/2.0', h.sha.c3], h.work);
      await pushHistory(project.path, developer.token, ['refs/tags/release/2.0']);
      const res = await t
        .http()
        .post(api(release(project.id, 'release/2.0')))
        .set('PRIVATE-TOKEN', developer.token)
        .type('form')
        .send({ description: 'Two point oh' });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ tag_name: 'release/2.0', description: 'Two point oh' });
      expect((await tagOf(project.id, 'release/2.0')).release).toEqual(res.body);
    });
  });

  describe('PUT .../tags/:tag_name/release', () => {
    it('replaces the notes: 200 with the Release entity', async () => {
      const res = await as(maintainer.token).put(release(project.id, 'v1.0'), { description: 'Rewritten' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ tag_name: 'v1.0', description: 'Rewritten' });
      expectShape(res.body, 'release');
      expect((await tagOf(project.id, 'v1.0')).release).toEqual({ tag_name: 'v1.0', description: 'Rewritten' });
    });

    it('404s `Release does not exist` for a tag without notes and `Tag does not exist` for a missing tag', async () => {
      const none = await as(developer.token).put(release(project.id, 'v1.2'), { description: 'x' });
      expect(none.status).toBe(404);
      expect(none.body).toEqual(RELEASE_MISSING);
      const missing = await as(developer.token).put(release(project.id, 'v9.9'), { description: 'x' });
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual(TAG_MISSING);
      expect((await tagOf(project.id, 'v1.2')).release).toBeNull();
    });

    it('400s a missing description', async () => {
      const res = await as(developer.token).put(release(project.id, 'v1.0'), {});
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'description is missing' });
    });
  });

  describe('who may call (authorize_push_project: developers and up)', () => {
    it.each([
      ['anonymous on a private project', () => undefined, () => project.id, 404, PROJECT_NOT_FOUND],
      ['a stranger on a private project', () => stranger.token, () => project.id, 404, PROJECT_NOT_FOUND],
      ['a guest (no code)', () => guest.token, () => project.id, 403, FORBIDDEN],
      ['a reporter', () => reporter.token, () => project.id, 403, FORBIDDEN],
      ['anonymous on a public project', () => undefined, () => open.id, 403, FORBIDDEN],
      ['a stranger on a public project', () => stranger.token, () => open.id, 403, FORBIDDEN],
    ])('refuses %s, both endpoints, and writes nothing', async (_, token, id, status, body) => {
      for (const tag of ['v1.0', 'v1.10']) {
        const created = await as(token()).post(release(id(), tag), { description: 'nope' });
        expect([created.status, created.body]).toEqual([status, body]);
        const updated = await as(token()).put(release(id(), tag), { description: 'nope' });
        expect([updated.status, updated.body]).toEqual([status, body]);
      }
      expect((await tagOf(id(), 'v1.10')).release).toBeNull();
      expect((await tagOf(id(), 'v1.0')).release).not.toEqual({ tag_name: 'v1.0', description: 'nope' });
    });

    it('lets the owner and an administrator who is no member add and change notes', async () => {
      const byOwner = await as(owner.token).post(release(project.id, 'v1.10'), { description: 'Owner' });
      expect([byOwner.status, byOwner.body]).toEqual([201, { tag_name: 'v1.10', description: 'Owner' }]);
      const byAdmin = await as(t.rootToken).put(release(project.id, 'v1.10'), { description: 'Admin' });
      expect([byAdmin.status, byAdmin.body]).toEqual([200, { tag_name: 'v1.10', description: 'Admin' }]);
      expect((await tagOf(project.id, 'v1.10')).release).toEqual({ tag_name: 'v1.10', description: 'Admin' });
    });

    it('refuses everyone on an archived project, the owner and administrators too, until it is unarchived', async () => {
      expect((await as(owner.token).post(`/projects/${open.id}/archive`)).status).toBe(201);
      for (const token of [owner.token, t.rootToken]) {
        const res = await as(token).post(release(open.id, 'v1.10'), { description: 'archived' });
        expect([res.status, res.body]).toEqual([403, FORBIDDEN]);
      }
      expect((await tagOf(open.id, 'v1.10')).release).toBeNull();
      expect((await as(owner.token).post(`/projects/${open.id}/unarchive`)).status).toBe(201);
      expect((await as(owner.token).post(release(open.id, 'v1.10'), { description: 'open' })).status).toBe(201);
    });
  });

  describe('the tags answers', () => {
    it('ask for the releases of a page of tags in one query, not one per tag', async () => {
      await as(reporter.token).get('/user'); // a token's first use records activity; keep it out of the count
      const counter = countStatements();
      try {
        const statements = async (perPage: number) => {
          const id = `releases-${perPage}-${Date.now()}`;
          const res = await as(reporter.token)
            .get(`/projects/${project.id}/repository/tags?per_page=${perPage}&order_by=name&sort=asc`)
            .set('X-Request-Id', id);
          expect(res.status).toBe(200);
          return { n: counter.forRequest(id), withNotes: res.body.filter((tag: { release: unknown }) => tag.release) };
        };
        const one = await statements(1);
        const all = await statements(100);
        expect(one.withNotes).toHaveLength(1); // release/2.0 sorts first by name
        expect(all.withNotes.length).toBeGreaterThanOrEqual(3);
        expect(all.n).toBe(one.n);
      } finally {
        counter.restore();
      }
    });

    it("show no release after RemoveTagRelease (what the tag deletion endpoint sends), recorded on the release's stream", async () => {
      const bus = t.app.get(CommandBus);
      const actor = { id: owner.id, tokenId: undefined, impersonatedBy: undefined };
      expect(await bus.execute(new RemoveTagRelease(project.id, 'release/2.0', actor))).toBe(true);
      expect(await bus.execute(new RemoveTagRelease(project.id, 'release/2.0', actor))).toBe(false);
      expect((await tagOf(project.id, 'release/2.0')).release).toBeNull();
      const events = (await t.db.query(
        `select metadata, data from events where stream_id = $1 and type = 'ProjectReleaseRemoved'`,
        [`release-${project.id}-${createHash('sha256').update('release/2.0').digest('hex').slice(0, 24)}`],
      )) as { metadata: { actorId?: number }; data: unknown }[];
      expect(events).toHaveLength(1);
      expect(events[0].metadata.actorId).toBe(owner.id);
      // The notes may be written again for the tag.
      expect(
        (await as(developer.token).post(release(project.id, 'release/2.0'), { description: 'Again' })).status,
      ).toBe(201);
    });
  });

  it('python-gitlab 3.12 posts and puts a tag release description and reads it back from project.tags', async () => {
    const out = JSON.parse(await runPython(SCRIPT, [url, owner.token, String(open.id)])) as Record<string, unknown>;
    expect(out.before).toBeNull();
    expect(out.created).toEqual({ tag_name: 'v1.2', description: 'First notes' });
    expect(out.updated).toEqual({ tag_name: 'v1.2', description: 'Second notes' });
    expect(out.read).toEqual({ tag_name: 'v1.2', description: 'Second notes' });
    expect(out.listed).toEqual([
      ['v1.10', { tag_name: 'v1.10', description: 'open' }],
      ['v1.2', { tag_name: 'v1.2', description: 'Second notes' }],
      ['v1.0', null],
    ]);
    expect(out.missing).toEqual([404, 'Release does not exist']);
  });

  it('rebuilds the releases read model from the release streams to the same rows', async () => {
    const all = () => t.db.query(`select * from releases order by project_id, tag`) as Promise<unknown[]>;
    const live = await all();
    expect(live.length).toBeGreaterThanOrEqual(5);
    await t.app.get(ProjectionRebuilder).rebuild();
    expect(await all()).toEqual(live);
  });

  it("deleting the project removes its releases (GitLab's dependent: :destroy)", async () => {
    const doomed = await newProject('doomed', 'private');
    await pushHistory(doomed.path, owner.token);
    expect((await as(owner.token).post(release(doomed.id, 'v1.0'), { description: 'gone soon' })).status).toBe(201);
    const count = async () =>
      (
        (await t.db.query(`select count(*)::int as n from releases where project_id = $1`, [doomed.id])) as {
          n: number;
        }[]
      )[0].n;
    expect(await count()).toBe(1);
    expect((await as(owner.token).delete(`/projects/${doomed.id}`)).status).toBe(202);
    expect(await count()).toBe(0);
  });
});
