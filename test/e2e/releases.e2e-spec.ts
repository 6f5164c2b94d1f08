import type { Gitlab } from '@gitbeaker/rest' with { 'resolution-mode': 'import' };
import { ProjectionRebuilder } from '@app/platform';
import { expectShape } from '../contract/shape';
import { gitOk, tempDirs } from '../support/git';
import { runPython } from '../support/python-gitlab';
import { buildSampleHistory, type SampleHistory } from '../support/sample-history';
import { createUser, type SeededUser } from '../support/seed';
import { freePort, startTestApp, type TestApp } from '../support/test-app';

const api = (path: string) => `/api/v4${path}`;
const FORBIDDEN = { message: '403 Forbidden' };
const PROJECT_NOT_FOUND = { message: '404 Project Not Found' };
const NOT_FOUND = { message: '404 Not found' };

/** Debian's python3-gitlab (3.12): `project.releases` and `release.links`, each through its own resource methods. */
const PYTHON_SCRIPT = `
import json, sys, warnings
import gitlab
warnings.simplefilter("ignore")
url, token, project_id = sys.argv[1], sys.argv[2], int(sys.argv[3])
gl = gitlab.Gitlab(url, private_token=token)
project = gl.projects.get(project_id, lazy=True)
out = {}
r = project.releases.create({"tag_name": "py/1.0", "ref": "master", "name": "Py", "description": "from python",
    "assets": {"links": [{"name": "bin", "url": "https://example.com/bin"}]}})
out["created"] = [r.tag_name, r.name, r.description, [l["name"] for l in r.assets["links"]]]
out["listed"] = [x.tag_name for x in project.releases.list(order_by="created_at", sort="desc")][:1]
got = project.releases.get("py/1.0")
out["got"] = [got.tag_name, got.commit["short_id"], got.author["id"]]
got.description = "changed"
got.save()
out["saved"] = project.releases.get("py/1.0").description
project.releases.update("py/1.0", {"name": "Py!"})
out["updated"] = project.releases.get("py/1.0").name
link = got.links.create({"name": "docs", "url": "https://example.com/docs", "filepath": "/docs/index", "link_type": "runbook"})
out["link"] = [link.name, link.link_type, link.direct_asset_url.split("/-/")[1]]
out["links"] = sorted(l.name for l in got.links.list())
again = got.links.get(link.id)
again.name = "manual"
again.save()
out["link_saved"] = got.links.get(link.id).name
got.links.delete(link.id)
out["links_after"] = [l.name for l in got.links.list()]
try:
    got.links.get(link.id)
    out["link_gone"] = None
except gitlab.exceptions.GitlabGetError as e:
    out["link_gone"] = e.response_code
try:
    project.releases.create({"tag_name": "py/1.0", "description": "again"})
    out["again"] = None
except gitlab.exceptions.GitlabCreateError as e:
    out["again"] = [e.response_code, e.error_message]
project.releases.delete("py/1.0")
try:
    project.releases.get("py/1.0")
    out["deleted"] = None
except gitlab.exceptions.GitlabGetError as e:
    out["deleted"] = e.response_code
print(json.dumps(out))
`;

describe('Releases API (GitLab 11.7 /projects/:id/releases) and release asset links', () => {
  let t: TestApp;
  let url: string;
  let base: string;
  let owner: SeededUser;
  let maintainer: SeededUser;
  let developer: SeededUser;
  let reporter: SeededUser;
  let guest: SeededUser;
  let stranger: SeededUser;
  /** Private, every role a member, the sample history pushed. */
  let project: { id: number; path: string };
  /** Public, owned by `owner` alone, the sample history pushed. */
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
  const releases = (id: number) => `/projects/${id}/releases`;
  const release = (id: number, tag: string) => `/projects/${id}/releases/${encodeURIComponent(tag)}`;
  const links = (id: number, tag: string) => `${release(id, tag)}/assets/links`;

  async function newProject(name: string, visibility: string): Promise<{ id: number; path: string }> {
    const res = await as(owner.token).post('/projects', { name, visibility });
    expect(res.status).toBe(201);
    return { id: res.body.id, path: res.body.path_with_namespace };
  }

  beforeAll(async () => {
    const port = await freePort();
    base = `127.0.0.1:${port}`;
    url = `http://${base}`;
    t = await startTestApp({ externalUrl: url });
    await t.app.listen(port, '127.0.0.1');
    [owner, maintainer, developer, reporter, guest, stranger] = await Promise.all(
      Array.from({ length: 6 }, () => createUser(t)),
    );
    project = await newProject('shipping', 'private');
    open = await newProject('shipping in the open', 'public');
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
    for (const p of [project, open])
      await gitOk(
        [
          'push',
          '-q',
          `http://git:${owner.token}@${base}/${p.path}.git`,
          'refs/heads/*:refs/heads/*',
          'refs/tags/*:refs/tags/*',
        ],
        h.work,
      );
    // Six users, two projects and two pushes: slow on the embedded database of a busy machine.
  }, 240_000);
  afterAll(async () => {
    tmp.removeAll();
    await t.close();
  });

  describe('POST /projects/:id/releases', () => {
    it("makes a developer's release of an existing tag with its links: 201 with GitLab's Release entity", async () => {
      const res = await as(developer.token).post(releases(project.id), {
        tag_name: 'v1.0',
        name: 'First',
        description: '## Notes',
        assets: {
          links: [
            { name: 'linux', url: 'https://example.com/linux', direct_asset_path: '/bin/linux', link_type: 'package' },
            { name: 'docs', url: 'https://example.com/docs' },
          ],
        },
      });
      expect(res.status).toBe(201);
      expectShape(res.body, 'project-release');
      const web = `${url}/${project.path}`;
      expect(res.body).toMatchObject({
        name: 'First',
        tag_name: 'v1.0',
        description: '## Notes',
        upcoming_release: false,
        author: { id: developer.id, username: developer.username },
        commit: { id: h.sha.c1, short_id: h.sha.c1.slice(0, 8) },
        commit_path: `/${project.path}/-/commit/${h.sha.c1}`,
        tag_path: `/${project.path}/-/tags/v1.0`,
        evidences: [],
        _links: { self: `${web}/-/releases/v1.0`, edit_url: `${web}/-/releases/v1.0/edit` },
      });
      expect(res.body.released_at).toBe(res.body.created_at);
      expect(res.body.assets.count).toBe(6);
      expect(res.body.assets.sources).toEqual(
        ['zip', 'tar.gz', 'tar.bz2', 'tar'].map((format) => ({
          format,
          url: `${web}/-/archive/v1.0/shipping-v1.0.${format}`,
        })),
      );
      for (const l of res.body.assets.links) expectShape(l, 'release-link');
      expect(
        res.body.assets.links.map((l: { name: string; direct_asset_url: string; link_type: string }) => [
          l.name,
          l.direct_asset_url,
          l.link_type,
        ]),
      ).toEqual([
        // Newest first: the links of one request in reverse, as GitLab saves them one after another.
        ['docs', 'https://example.com/docs', 'other'],
        ['linux', `${web}/-/releases/v1.0/downloads/bin/linux`, 'package'],
      ]);
    });

    it("shows the same release in the tag's 10.x `release` field", async () => {
      const tag = await as(reporter.token).get(`/projects/${project.id}/repository/tags/v1.0`);
      expect(tag.status).toBe(200);
      expect(tag.body.release).toEqual({ tag_name: 'v1.0', description: '## Notes' });
    });

    it('makes a missing tag from `ref` (a slash in its name URL-encoded), and 422s `Ref is not specified` without one', async () => {
      const none = await as(developer.token).post(releases(project.id), { tag_name: 'rel/2.0' });
      expect(none.status).toBe(422);
      expect(none.body).toEqual({ message: 'Ref is not specified' });

      const res = await as(developer.token).post(releases(project.id), {
        tag_name: 'rel/2.0',
        ref: 'master',
        released_at: '2099-01-01T00:00:00Z',
      });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        name: 'rel/2.0',
        description: null,
        released_at: '2099-01-01T00:00:00.000Z',
        upcoming_release: true,
        commit: { id: h.sha.c3 },
        tag_path: `/${project.path}/-/tags/rel%2F2.0`,
      });
      const tag = await as(reporter.token).get(`/projects/${project.id}/repository/tags/rel%2F2.0`);
      expect(tag.status).toBe(200);
      expect(tag.body.commit.id).toBe(h.sha.c3);
      expect(tag.body.release).toEqual({ tag_name: 'rel/2.0', description: null });

      const got = await as(reporter.token).get(release(project.id, 'rel/2.0'));
      expect(got.status).toBe(200);
      expect(got.body.tag_name).toBe('rel/2.0');

      const badRef = await as(developer.token).post(releases(project.id), { tag_name: 'rel/3.0', ref: 'nowhere' });
      expect(badRef.status).toBe(400);
      expect(badRef.body).toEqual({ message: 'Target nowhere is invalid' });
    });

    it('409s `Release already exists`, 400s what Grape and the services refuse', async () => {
      const again = await as(maintainer.token).post(releases(project.id), { tag_name: 'v1.0' });
      expect(again.status).toBe(409);
      expect(again.body).toEqual({ message: 'Release already exists' });

      const missing = await as(developer.token).post(releases(project.id), { name: 'x' });
      expect(missing.status).toBe(400);
      expect(missing.body).toEqual({ error: 'tag_name is missing' });

      const milestones = await as(developer.token).post(releases(project.id), {
        tag_name: 'v1.2',
        milestones: ['m1', 'm2'],
      });
      expect(milestones.status).toBe(400);
      expect(milestones.body).toEqual({ message: 'Milestone(s) not found: m1, m2' });

      const badLink = await as(developer.token).post(releases(project.id), {
        tag_name: 'v1.2',
        assets: { links: [{ name: 'a', url: 'javascript:alert(1)' }] },
      });
      expect(badLink.status).toBe(400);
      expect(badLink.body.message).toMatch(/^Validation failed: Links url is blocked/);

      const twice = await as(developer.token).post(releases(project.id), {
        tag_name: 'v1.2',
        assets: {
          links: [
            { name: 'a', url: 'https://a' },
            { name: 'a', url: 'https://b' },
          ],
        },
      });
      expect(twice.status).toBe(400);
      expect(twice.body).toEqual({ message: 'Validation failed: Links name has already been taken' });
      // Nothing of a refused release is kept.
      expect((await as(developer.token).get(release(project.id, 'v1.2'))).status).toBe(404);
    });

    it('403s a reporter, a guest and an anonymous caller of a public project; 404s a stranger to a private one', async () => {
      for (const who of [reporter, guest]) {
        const res = await as(who.token).post(releases(project.id), { tag_name: 'v1.2' });
        expect(res.status).toBe(403);
        expect(res.body).toEqual(FORBIDDEN);
      }
      expect((await as(undefined).post(releases(open.id), { tag_name: 'v1.2' })).status).toBe(403);
      expect((await as(stranger.token).post(releases(open.id), { tag_name: 'v1.2' })).status).toBe(403);
      const hidden = await as(stranger.token).post(releases(project.id), { tag_name: 'v1.2' });
      expect(hidden.status).toBe(404);
      expect(hidden.body).toEqual(PROJECT_NOT_FOUND);
    });
  });

  describe('GET /projects/:id/releases[/:tag_name]', () => {
    it('lists by release date, newest first, or as asked, with pagination headers', async () => {
      const list = await as(reporter.token).get(releases(project.id));
      expect(list.status).toBe(200);
      expect(list.body.map((r: { tag_name: string }) => r.tag_name)).toEqual(['rel/2.0', 'v1.0']);
      expect(list.headers['x-total']).toBe('2');
      for (const r of list.body) expectShape(r, 'project-release');

      const asc = await as(reporter.token).get(`${releases(project.id)}?order_by=created_at&sort=asc&per_page=1`);
      expect(asc.body.map((r: { tag_name: string }) => r.tag_name)).toEqual(['v1.0']);
      expect(asc.headers['x-total-pages']).toBe('2');
      expect(asc.headers['x-next-page']).toBe('2');

      const bad = await as(reporter.token).get(`${releases(project.id)}?order_by=name`);
      expect(bad.status).toBe(400);
      expect(bad.body).toEqual({ error: 'order_by does not have a valid value' });
    });

    it("lists for a guest of a private project without the code's parts, but 403s a guest's GET of one", async () => {
      const list = await as(guest.token).get(releases(project.id));
      expect(list.status).toBe(200);
      const first = list.body.find((r: { tag_name: string }) => r.tag_name === 'v1.0');
      expect(first).not.toHaveProperty('commit');
      expect(first).not.toHaveProperty('commit_path');
      expect(first).not.toHaveProperty('evidences');
      expect(first.assets).not.toHaveProperty('sources');
      expect(first.assets.count).toBe(2);
      expect(first._links).toEqual({ self: `${url}/${project.path}/-/releases/v1.0` });

      const one = await as(guest.token).get(release(project.id, 'v1.0'));
      expect(one.status).toBe(403);
      expect(one.body).toEqual(FORBIDDEN);
    });

    it('404s a stranger to a private project and a missing release; anonymous reads a public one', async () => {
      for (const path of [releases(project.id), release(project.id, 'v1.0')]) {
        const res = await as(stranger.token).get(path);
        expect(res.status).toBe(404);
        expect(res.body).toEqual(PROJECT_NOT_FOUND);
      }
      const missing = await as(reporter.token).get(release(project.id, 'v1.2'));
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual(NOT_FOUND);

      expect((await as(owner.token).post(releases(open.id), { tag_name: 'v1.10', description: 'open' })).status).toBe(
        201,
      );
      const anonymous = await as(undefined).get(release(open.id, 'v1.10'));
      expect(anonymous.status).toBe(200);
      expectShape(anonymous.body, 'project-release');
      expect(anonymous.body._links).not.toHaveProperty('edit_url');
      expect((await as(undefined).get(releases(open.id))).body).toHaveLength(1);
    });

    it("shows 10.x's tag release notes as a release: named after the tag, released when made, without an author", async () => {
      const notes = await as(developer.token).post(`/projects/${project.id}/repository/tags/v1.2/release`, {
        description: 'old notes',
      });
      expect(notes.status).toBe(201);
      const res = await as(reporter.token).get(release(project.id, 'v1.2'));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        name: 'v1.2',
        tag_name: 'v1.2',
        description: 'old notes',
        commit: { id: h.sha.c2 },
      });
      expect(res.body).not.toHaveProperty('author');
      expect(res.body.released_at).toBe(res.body.created_at);
    });
  });

  describe('PUT /projects/:id/releases/:tag_name', () => {
    it('changes what was given, and the 10.x route sees the new notes', async () => {
      const res = await as(developer.token).put(release(project.id, 'v1.2'), {
        name: 'One two',
        description: 'new notes',
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ name: 'One two', description: 'new notes', tag_name: 'v1.2' });
      const tag = await as(reporter.token).get(`/projects/${project.id}/repository/tags/v1.2`);
      expect(tag.body.release).toEqual({ tag_name: 'v1.2', description: 'new notes' });

      const older = await as(developer.token).put(`/projects/${project.id}/repository/tags/v1.2/release`, {
        description: 'from 10.x',
      });
      expect(older.status).toBe(200);
      const read = await as(reporter.token).get(release(project.id, 'v1.2'));
      expect(read.body).toMatchObject({ name: 'One two', description: 'from 10.x' });

      const dated = await as(developer.token).put(release(project.id, 'v1.2'), { released_at: '2001-02-03T04:05:06Z' });
      expect(dated.body).toMatchObject({
        released_at: '2001-02-03T04:05:06.000Z',
        upcoming_release: false,
        name: 'One two',
      });
    });

    it('400s `params is empty`, 403s a missing release and a reporter, 404s a stranger', async () => {
      const empty = await as(developer.token).put(release(project.id, 'v1.2'), {});
      expect(empty.status).toBe(400);
      expect(empty.body).toEqual({ message: 'params is empty' });
      const missing = await as(developer.token).put(release(project.id, 'v1.10'), { name: 'x' });
      expect(missing.status).toBe(403);
      expect(missing.body).toEqual(FORBIDDEN);
      expect((await as(reporter.token).put(release(project.id, 'v1.2'), { name: 'x' })).status).toBe(403);
      expect((await as(stranger.token).put(release(project.id, 'v1.2'), { name: 'x' })).status).toBe(404);
    });
  });

  describe('release asset links', () => {
    let linkId: number;

    it('creates, lists (newest first), reads, updates and deletes links for a developer', async () => {
      const created = await as(developer.token).post(links(project.id, 'v1.2'), {
        name: 'image',
        url: `${url}/${project.path}/uploads/abc/image.png`,
        filepath: '/img/image.png',
        link_type: 'image',
      });
      expect(created.status).toBe(201);
      expectShape(created.body, 'release-link');
      linkId = created.body.id;
      expect(created.body).toEqual({
        id: linkId,
        name: 'image',
        url: `${url}/${project.path}/uploads/abc/image.png`,
        direct_asset_url: `${url}/${project.path}/-/releases/v1.2/downloads/img/image.png`,
        external: false,
        link_type: 'image',
      });
      const second = await as(developer.token).post(links(project.id, 'v1.2'), {
        name: 'tarball',
        url: 'ftp://example.com/t.tgz',
      });
      expect(second.status).toBe(201);
      expect(second.body).toMatchObject({
        external: true,
        link_type: 'other',
        direct_asset_url: 'ftp://example.com/t.tgz',
      });

      const list = await as(guest.token).get(links(project.id, 'v1.2'));
      expect(list.status).toBe(200);
      expect(list.headers['x-total']).toBe('2');
      expect(list.body.map((l: { name: string }) => l.name)).toEqual(['tarball', 'image']);

      const one = await as(guest.token).get(`${links(project.id, 'v1.2')}/${linkId}`);
      expect(one.status).toBe(200);
      expect(one.body).toEqual(created.body);

      const renamed = await as(developer.token).put(`${links(project.id, 'v1.2')}/${linkId}`, { name: 'screenshot' });
      expect(renamed.status).toBe(200);
      expect(renamed.body).toEqual({ ...created.body, name: 'screenshot' });

      const moved = await as(developer.token).put(`${links(project.id, 'v1.2')}/${linkId}`, {
        url: 'https://example.com/s.png',
        direct_asset_path: '/s.png',
      });
      expect(moved.body).toMatchObject({
        url: 'https://example.com/s.png',
        direct_asset_url: `${url}/${project.path}/-/releases/v1.2/downloads/s.png`,
        link_type: 'image',
      });

      const release12 = await as(reporter.token).get(release(project.id, 'v1.2'));
      expect(release12.body.assets.count).toBe(6);
      expect(release12.body.assets.links.map((l: { name: string }) => l.name)).toEqual(['tarball', 'screenshot']);

      const removed = await as(developer.token).delete(`${links(project.id, 'v1.2')}/${second.body.id}`);
      expect(removed.status).toBe(200);
      expect(removed.body).toEqual(second.body);
      const gone = await as(developer.token).get(`${links(project.id, 'v1.2')}/${second.body.id}`);
      expect(gone.status).toBe(404);
      expect(gone.body).toEqual(NOT_FOUND);
    });

    it("400s the model's refusals as a list, and Grape's as an error", async () => {
      const cases: [object, unknown][] = [
        [{ name: 'screenshot', url: 'https://example.com/other' }, { message: ['Name has already been taken'] }],
        [{ name: 'other', url: 'https://example.com/s.png' }, { message: ['Url has already been taken'] }],
        [
          { name: 'x', url: 'javascript:alert(1)' },
          { message: ['Url is blocked: Only allowed schemes are http, https, ftp'] },
        ],
        [{ name: 'x', url: 'https://x', filepath: 'no/slash' }, { message: ['Filepath is in an invalid format'] }],
        [{ name: ' ', url: 'https://x' }, { message: ["Name can't be blank"] }],
        [{ url: 'https://x' }, { error: 'name is missing' }],
        [{ name: 'x', url: 'https://x', link_type: 'binary' }, { error: 'link_type does not have a valid value' }],
      ];
      for (const [body, answer] of cases) {
        const res = await as(developer.token).post(links(project.id, 'v1.2'), body);
        expect([res.status, res.body]).toEqual([400, answer]);
      }
      const empty = await as(developer.token).put(`${links(project.id, 'v1.2')}/${linkId}`, { link_type: 'runbook' });
      expect(empty.status).toBe(400);
      expect(empty.body).toEqual({ error: 'name, url are missing, at least one parameter must be provided' });
    });

    it('404s a missing release or a link of another release; 403s a reporter; 404s a stranger', async () => {
      const noRelease = await as(developer.token).get(links(project.id, 'v1.10'));
      expect([noRelease.status, noRelease.body]).toEqual([404, NOT_FOUND]);
      const addToNone = await as(developer.token).post(links(project.id, 'v1.10'), { name: 'a', url: 'https://a' });
      expect(addToNone.status).toBe(404);
      const elsewhere = await as(developer.token).get(`${links(project.id, 'v1.0')}/${linkId}`);
      expect([elsewhere.status, elsewhere.body]).toEqual([404, NOT_FOUND]);
      const badId = await as(developer.token).get(`${links(project.id, 'v1.2')}/abc`);
      expect([badId.status, badId.body]).toEqual([400, { error: 'link_id is invalid' }]);
      for (const call of [
        as(reporter.token).post(links(project.id, 'v1.2'), { name: 'a', url: 'https://a' }),
        as(reporter.token).put(`${links(project.id, 'v1.2')}/${linkId}`, { name: 'a' }),
        as(reporter.token).delete(`${links(project.id, 'v1.2')}/${linkId}`),
      ]) {
        const res = await call;
        expect([res.status, res.body]).toEqual([403, FORBIDDEN]);
      }
      const hidden = await as(stranger.token).get(links(project.id, 'v1.2'));
      expect([hidden.status, hidden.body]).toEqual([404, PROJECT_NOT_FOUND]);
    });

    it("walks Terraform's gitlab_release_link: create with `filepath`, read back, applied twice with identical answers, update, destroy", async () => {
      // go-gitlab names the project by its path and escapes the tag; create then Read (GET the link).
      const project64 = encodeURIComponent(project.path);
      const base64 = `/projects/${project64}/releases/v1.2/assets/links`;
      const created = await as(developer.token).post(base64, {
        name: 'tf',
        url: 'https://example.com/tf.zip',
        filepath: '/tf.zip',
        link_type: 'package',
      });
      expect(created.status).toBe(201);
      const read1 = await as(developer.token).get(`${base64}/${created.body.id}`);
      const read2 = await as(developer.token).get(`${base64}/${created.body.id}`);
      expect(read1.status).toBe(200);
      expect(read2.body).toEqual(read1.body);
      expect(read1.body).toEqual(created.body);
      // The provider derives `filepath` from `direct_asset_url` by splitting on "downloads".
      expect(read1.body.direct_asset_url.split('downloads')[1]).toBe('/tf.zip');
      // An update sends only what changed; the link type stays.
      const updated = await as(developer.token).put(`${base64}/${created.body.id}`, {
        url: 'https://example.com/tf2.zip',
      });
      expect(updated.body).toMatchObject({ url: 'https://example.com/tf2.zip', link_type: 'package', name: 'tf' });
      expect((await as(developer.token).delete(`${base64}/${created.body.id}`)).status).toBe(200);
      // A link gone is a 404, which the provider reads as "removed from state".
      expect((await as(developer.token).get(`${base64}/${created.body.id}`)).status).toBe(404);
    });
  });

  describe('DELETE /projects/:id/releases/:tag_name', () => {
    it('403s a developer and a missing release; a maintainer gets 200 with the release, its tag stays', async () => {
      const byDeveloper = await as(developer.token).delete(release(project.id, 'v1.2'));
      expect([byDeveloper.status, byDeveloper.body]).toEqual([403, FORBIDDEN]);
      const missing = await as(maintainer.token).delete(release(project.id, 'v1.10'));
      expect(missing.status).toBe(403);

      const res = await as(maintainer.token).delete(release(project.id, 'v1.2'));
      expect(res.status).toBe(200);
      // The release 10.x's route made has no author; everything else is the full entity.
      expectShape({ ...res.body, author: {} }, 'project-release');
      expect(res.body).not.toHaveProperty('author');
      expect(res.body).toMatchObject({ tag_name: 'v1.2', name: 'One two', description: 'from 10.x' });
      expect(res.body.assets.links).toHaveLength(1);

      expect((await as(reporter.token).get(release(project.id, 'v1.2'))).status).toBe(404);
      const tag = await as(reporter.token).get(`/projects/${project.id}/repository/tags/v1.2`);
      expect(tag.status).toBe(200);
      expect(tag.body.release).toBeNull();
      // Made again, the release starts without the old links.
      const again = await as(developer.token).post(releases(project.id), { tag_name: 'v1.2' });
      expect(again.status).toBe(201);
      expect(again.body.assets.links).toEqual([]);
    });
  });

  it("follows glab's `release create` calls: tag looked up, release looked up (404 => create), POST, then a link per asset", async () => {
    const tagLookup = await as(developer.token).get(`/projects/${project.id}/repository/tags/v9.0`);
    expect(tagLookup.status).toBe(404);
    const projectLookup = await as(developer.token).get(`/projects/${project.id}`);
    const ref = projectLookup.body.default_branch as string;
    expect(ref).toBe('master');
    const releaseLookup = await as(developer.token).get(release(project.id, 'v9.0'));
    expect(releaseLookup.status).toBe(404);
    const created = await as(developer.token).post(releases(project.id), {
      name: 'v9.0',
      tag_name: 'v9.0',
      description: 'glab notes',
      ref,
    });
    expect(created.status).toBe(201);
    expect(created.body._links.self).toBe(`${url}/${project.path}/-/releases/v9.0`);
    const link = await as(developer.token).post(links(project.id, 'v9.0'), {
      name: 'app.tar.gz',
      url: `${url}/${project.path}/uploads/0123/app.tar.gz`,
      direct_asset_path: '/app.tar.gz',
    });
    expect(link.status).toBe(201);
    expect(link.body.direct_asset_url).toBe(`${url}/${project.path}/-/releases/v9.0/downloads/app.tar.gz`);
    const viewed = await as(developer.token).get(release(project.id, 'v9.0'));
    expect(viewed.body).toMatchObject({
      name: 'v9.0',
      author: { id: developer.id },
      commit: { short_id: h.sha.c3.slice(0, 8) },
    });
  });

  it('is driven by python-gitlab 3.12: project.releases and release.links, as a maintainer (who may delete)', async () => {
    const out = JSON.parse(await runPython(PYTHON_SCRIPT, [url, maintainer.token, String(project.id)]));
    expect(out).toEqual({
      created: ['py/1.0', 'Py', 'from python', ['bin']],
      listed: ['py/1.0'],
      got: ['py/1.0', h.sha.c3.slice(0, 8), maintainer.id],
      saved: 'changed',
      updated: 'Py!',
      link: ['docs', 'runbook', 'releases/py%2F1.0/downloads/docs/index'],
      links: ['bin', 'docs'],
      link_saved: 'manual',
      links_after: ['bin'],
      link_gone: 404,
      again: [409, 'Release already exists'],
      deleted: 404,
    });
  });

  it('is driven by gitbeaker: ProjectReleases and ReleaseLinks', async () => {
    const gb: typeof import('@gitbeaker/rest', { with: { 'resolution-mode': 'import' } }) =
      await import('@gitbeaker/rest');
    const client: InstanceType<typeof Gitlab<false>> = new gb.Gitlab({ host: url, token: developer.token });
    const made = await client.ProjectReleases.create(project.id, {
      tagName: 'gb/1.0',
      ref: h.sha.c2,
      name: 'Beaker',
      description: 'from gitbeaker',
      assets: { links: [{ name: 'one', url: 'https://example.com/one' }] },
    });
    expect(made).toMatchObject({ tag_name: 'gb/1.0', name: 'Beaker', commit: { id: h.sha.c2 } });
    const all = await client.ProjectReleases.all(project.id, { orderBy: 'created_at', sort: 'asc' });
    expect(all.map((r) => r.tag_name)).toContain('gb/1.0');
    expect((await client.ProjectReleases.show(project.id, 'gb/1.0')).description).toBe('from gitbeaker');
    expect((await client.ProjectReleases.edit(project.id, 'gb/1.0', { description: 'edited' })).description).toBe(
      'edited',
    );

    const link = await client.ReleaseLinks.create(project.id, 'gb/1.0', 'two', 'https://example.com/two', {
      linkType: 'runbook',
      directAssetPath: '/two',
    });
    expect(link).toMatchObject({ name: 'two', link_type: 'runbook' });
    expect((await client.ReleaseLinks.all(project.id, 'gb/1.0')).map((l) => l.name)).toEqual(['two', 'one']);
    expect((await client.ReleaseLinks.show(project.id, 'gb/1.0', link.id)).url).toBe('https://example.com/two');
    expect((await client.ReleaseLinks.edit(project.id, 'gb/1.0', link.id, { name: 'deux' })).name).toBe('deux');
    await client.ReleaseLinks.remove(project.id, 'gb/1.0', link.id);
    expect((await client.ReleaseLinks.all(project.id, 'gb/1.0')).map((l) => l.name)).toEqual(['one']);

    const maintainerClient = new gb.Gitlab({ host: url, token: maintainer.token });
    await maintainerClient.ProjectReleases.remove(project.id, 'gb/1.0');
    await expect(client.ProjectReleases.show(project.id, 'gb/1.0')).rejects.toThrow();
  });

  it('rebuilds the releases and their links from the events as they are', async () => {
    const all = async () => [
      await t.db.query(`select * from releases order by project_id, tag`),
      await t.db.query(`select * from release_links order by id`),
    ];
    const live = await all();
    expect((live[0] as unknown[]).length).toBeGreaterThanOrEqual(5);
    expect((live[1] as unknown[]).length).toBeGreaterThanOrEqual(3);
    await t.app.get(ProjectionRebuilder).rebuild();
    expect(await all()).toEqual(live);
  });
});
