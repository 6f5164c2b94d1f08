import type { Gitlab } from '@gitbeaker/rest' with { 'resolution-mode': 'import' };
import { runPython } from '../support/python-gitlab';
import { createUser, type SeededUser } from '../support/seed';
import { freePort, startTestApp, type TestApp } from '../support/test-app';

/**
 * Keyset pagination (GitLab 12.x and later, docs/notes/gitlab-settings-pagination-and-answers.md §2):
 * `GET /projects` by id (`id_before`/`id_after`), `GET /users` by id, name or username (16.5's
 * `cursor=`); one `Link: <...>; rel="next"` and no X-Total family; 405 for an order or a list without
 * keyset. Followed by python-gitlab 3.12 (`iterator=True`, `pagination="keyset"`) and gitbeaker.
 */
describe('keyset pagination', () => {
  let t: TestApp;
  let host: string;
  let member: SeededUser;
  let gb: typeof import('@gitbeaker/rest', { with: { 'resolution-mode': 'import' } });
  let api: InstanceType<typeof Gitlab<false>>;
  const projectIds: number[] = [];
  const OFFSET_HEADERS = ['x-total', 'x-total-pages', 'x-page', 'x-per-page', 'x-next-page', 'x-prev-page'];

  const get = (path: string, token = t.rootToken) => t.http().get(path).set('PRIVATE-TOKEN', token);
  const nextOf = (link: string | undefined): string | undefined => {
    const m = /^<([^>]+)>; rel="next"$/.exec(link ?? '');
    return m?.[1];
  };
  /** Follows the next links from `first` to the end, as a client does; answers every page's ids. */
  async function walk(first: string, token = t.rootToken): Promise<{ pages: number[][]; links: string[] }> {
    const pages: number[][] = [];
    const links: string[] = [];
    let path: string | undefined = first;
    while (path) {
      const res = await get(path, token);
      expect(res.status).toBe(200);
      for (const h of OFFSET_HEADERS) expect(res.headers[h]).toBeUndefined();
      pages.push((res.body as { id: number }[]).map((p) => p.id));
      const next = nextOf(res.headers.link as string | undefined);
      if (res.headers.link !== undefined) expect(next).toBeDefined();
      if (next) {
        links.push(next);
        expect(next.startsWith(`${host}/api/v4/`)).toBe(true);
        path = next.slice(host.length);
      } else path = undefined;
      expect(pages.length).toBeLessThan(20);
    }
    return { pages, links };
  }

  beforeAll(async () => {
    const port = await freePort();
    host = `http://127.0.0.1:${port}`;
    t = await startTestApp({ externalUrl: host });
    await t.app.listen(port, '127.0.0.1');
    member = await createUser(t, { name: 'Zed Member' });
    for (let i = 0; i < 5; i++) {
      const res = await t
        .http()
        .post('/api/v4/projects')
        .set('PRIVATE-TOKEN', t.rootToken)
        .send({ name: `keyset-${i}`, visibility: i === 4 ? 'private' : 'public' });
      expect(res.status).toBe(201);
      projectIds.push(res.body.id);
    }
    gb = await import('@gitbeaker/rest');
    api = new gb.Gitlab({ host, token: t.rootToken });
  });
  afterAll(() => t.close());

  describe('GET /projects', () => {
    it('pages by id, newest first, with id_before in a next link that repeats the query, and no X-Total', async () => {
      const { pages, links } = await walk('/api/v4/projects?pagination=keyset&per_page=2&simple=true');
      expect(pages.flat()).toEqual([...projectIds].reverse());
      expect(pages.map((p) => p.length)).toEqual([2, 2, 1]);
      const first = new URL(links[0]);
      expect(first.pathname).toBe('/api/v4/projects');
      expect(Object.fromEntries(first.searchParams)).toEqual({
        pagination: 'keyset',
        per_page: '2',
        simple: 'true',
        id_before: String(projectIds[3]),
      });
    });

    it('pages ascending with id_after, and order_by=id is the same order', async () => {
      const { pages, links } = await walk('/api/v4/projects?pagination=keyset&order_by=id&sort=asc&per_page=3');
      expect(pages.flat()).toEqual(projectIds);
      expect(new URL(links[0]).searchParams.get('id_after')).toBe(String(projectIds[2]));
      expect(new URL(links[0]).searchParams.get('id_before')).toBeNull();
    });

    it('shows a caller only what they may see, also page by page', async () => {
      const { pages } = await walk('/api/v4/projects?pagination=keyset&per_page=2', member.token);
      expect(pages.flat()).toEqual(projectIds.slice(0, 4).reverse());
    });

    it('neither repeats nor skips a project when others are created or deleted between pages', async () => {
      const extra: number[] = [];
      for (let i = 0; i < 4; i++) {
        const made = await t
          .http()
          .post('/api/v4/projects')
          .set('PRIVATE-TOKEN', t.rootToken)
          .send({ name: `moving-${i}` });
        extra.push(made.body.id);
      }
      const before = [...projectIds, ...extra].reverse();
      const page1 = await get('/api/v4/projects?pagination=keyset&per_page=3');
      expect(page1.body.map((p: { id: number }) => p.id)).toEqual(before.slice(0, 3));
      // Between the pages: one shown project deleted, one not yet shown deleted, one new created.
      expect((await t.http().delete(`/api/v4/projects/${before[1]}`).set('PRIVATE-TOKEN', t.rootToken)).status).toBe(
        202,
      );
      expect((await t.http().delete(`/api/v4/projects/${before[3]}`).set('PRIVATE-TOKEN', t.rootToken)).status).toBe(
        202,
      );
      const created = await t
        .http()
        .post('/api/v4/projects')
        .set('PRIVATE-TOKEN', t.rootToken)
        .send({ name: 'between-pages' });
      expect(created.status).toBe(201);
      const next = nextOf(page1.headers.link as string)!;
      const rest = await walk(next.slice(host.length));
      const seen = [...page1.body.map((p: { id: number }) => p.id), ...rest.pages.flat()];
      expect(seen).toEqual(before.filter((id) => id !== before[3]));
      expect(new Set(seen).size).toBe(seen.length);
      for (const id of [...extra, created.body.id])
        if (id !== before[1] && id !== before[3])
          await t.http().delete(`/api/v4/projects/${id}`).set('PRIVATE-TOKEN', t.rootToken);
    });

    it('answers 405 for an order keyset lacks, and 400 for a pagination it does not know', async () => {
      for (const order of ['name', 'created_at', 'last_activity_at']) {
        const res = await get(`/api/v4/projects?pagination=keyset&order_by=${order}`);
        expect(res.status).toBe(405);
        expect(res.body).toEqual({ error: 'Keyset pagination is not yet available for this type of request' });
      }
      const bad = await get('/api/v4/projects?pagination=cursor');
      expect(bad.status).toBe(400);
      expect(bad.body).toEqual({ error: 'pagination does not have a valid value' });
      // `pagination=offset` is the ordinary numbered pages.
      const offset = await get('/api/v4/projects?pagination=offset&per_page=2');
      expect(offset.status).toBe(200);
      expect(offset.headers['x-total']).toBeDefined();
    });

    it('answers 405 on a list that has no keyset pages, as GitLab does', async () => {
      for (const path of ['/api/v4/groups', `/api/v4/users/${member.id}/projects`, '/api/v4/user/keys']) {
        const res = await get(`${path}?pagination=keyset`);
        expect(res.status).toBe(405);
        expect(res.body).toEqual({ error: 'Keyset pagination is not yet available for this type of request' });
      }
    });

    it('is what python-gitlab 3.12 iterates with pagination="keyset" and order_by="id"', async () => {
      const script = `
import json, sys, gitlab
gl = gitlab.Gitlab(sys.argv[1], private_token=sys.argv[2], pagination="keyset", order_by="id", per_page=2)
print(json.dumps([p.id for p in gl.projects.list(iterator=True)]))
`;
      const ids = JSON.parse(await runPython(script, [host, t.rootToken])) as number[];
      expect(ids).toEqual([...projectIds].reverse());
    });

    it("is what gitbeaker iterates with pagination: 'keyset'", async () => {
      const all = await api.Projects.all({ pagination: 'keyset', orderBy: 'id', sort: 'asc', perPage: 2 });
      expect(all.map((p) => p.id)).toEqual(projectIds);
    });
  });

  describe('GET /users', () => {
    let users: SeededUser[];
    const ROOT_ID = 1;

    beforeAll(async () => {
      users = [member];
      for (const name of ['Anna Able', 'Carl Crane', 'Bea Bloom']) users.push(await createUser(t, { name }));
    });
    const allIds = () => [ROOT_ID, ...users.map((u) => u.id)];

    it('pages by id, newest first, with an opaque cursor, and no X-Total', async () => {
      const { pages, links } = await walk('/api/v4/users?pagination=keyset&per_page=2');
      expect(pages.flat()).toEqual([...allIds()].reverse());
      const query = Object.fromEntries(new URL(links[0]).searchParams);
      expect(Object.keys(query).sort()).toEqual(['cursor', 'pagination', 'per_page']);
      expect(query.cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    });

    it('pages by username and by name, either way', async () => {
      const byUsername = await walk('/api/v4/users?pagination=keyset&order_by=username&sort=asc&per_page=2');
      const usernames = [{ id: ROOT_ID, username: 'root' }, ...users]
        .sort((a, b) => (a.username < b.username ? -1 : 1))
        .map((u) => u.id);
      expect(byUsername.pages.flat()).toEqual(usernames);
      const byName = await walk('/api/v4/users?pagination=keyset&order_by=name&sort=desc&per_page=3');
      const names = (await get('/api/v4/users?per_page=100')).body as { id: number; name: string }[];
      const expected = [...names]
        .sort((a, b) => (a.name === b.name ? b.id - a.id : a.name < b.name ? 1 : -1))
        .map((u) => u.id);
      expect(byName.pages.flat()).toEqual(expected);
    });

    it('answers 405 for another order and 400 for a cursor it did not write', async () => {
      const res = await get('/api/v4/users?pagination=keyset&order_by=email');
      expect(res.status).toBe(405);
      expect(res.body).toEqual({ error: 'Keyset pagination is not yet available for this type of request' });
      for (const cursor of ['garbage', Buffer.from('{"id":"x"}').toString('base64url')]) {
        const bad = await get(`/api/v4/users?pagination=keyset&order_by=id&cursor=${cursor}`);
        expect(bad.status).toBe(400);
        expect(bad.body).toEqual({ error: 'cursor is invalid' });
      }
    });

    it('shows a non-administrator the basic shape, as offset pages do', async () => {
      const res = await get('/api/v4/users?pagination=keyset&per_page=1', member.token);
      expect(res.status).toBe(200);
      expect(Object.keys(res.body[0]).sort()).toEqual(['avatar_url', 'id', 'name', 'state', 'username', 'web_url']);
      expect(nextOf(res.headers.link as string)).toBeDefined();
    });

    it('is what python-gitlab 3.12 and gitbeaker iterate', async () => {
      const script = `
import json, sys, gitlab
gl = gitlab.Gitlab(sys.argv[1], private_token=sys.argv[2], pagination="keyset", order_by="id", per_page=2)
print(json.dumps([u.id for u in gl.users.list(iterator=True)]))
`;
      expect(JSON.parse(await runPython(script, [host, t.rootToken]))).toEqual([...allIds()].reverse());
      const all = await api.Users.all({ pagination: 'keyset', orderBy: 'id', sort: 'asc', perPage: 2 } as never);
      expect((all as { id: number }[]).map((u) => u.id)).toEqual(allIds());
    });
  });
});
