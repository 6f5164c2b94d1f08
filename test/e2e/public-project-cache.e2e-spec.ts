import { Metrics } from '@app/platform';
import { type INestApplication } from '@nestjs/common';
import request from 'supertest';
import { client, createGroup, createProject, unique } from '../support/groups';
import { createUser, type SeededUser } from '../support/seed';
import { describeOnServers, secondAppFor, startTestApp, type TestApp } from '../support/test-app';

/** A 1×1 PNG, the smallest valid avatar. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

type Http = () => ReturnType<typeof request>;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

/**
 * The cache of anonymous `GET /projects/:id` answers (libs/projects' PublicProjectAnswers): for every
 * event that changes what it holds, a kept answer (proven kept: the second read is a hit) is replaced
 * by the changed one on the very next read, and a visibility change made through one process is never
 * shown stale by another on the same database.
 */
describe('the cache of public project answers', () => {
  let t: TestApp;
  let owner: SeededUser;
  let fan: SeededUser;

  const metric = async (app: INestApplication, name: string) => {
    const m = app.get(Metrics).registry.getSingleMetric(name);
    return m ? ((await m.get()).values[0]?.value ?? 0) : 0;
  };
  const hits = (app: INestApplication = t.app) => metric(app, 'lode_project_cache_hits_total');
  const anon = (id: number, http: Http = t.http) => http().get(`/api/v4/projects/${id}`);
  const as = (token: string) => client(t, token);

  /**
   * Reads the anonymous answer until one comes from the cache (proven by the hit counter), and
   * returns it. A miss's answer is not kept when any eviction lands during its read (a background
   * job's event about another project, say), so the first read after a write may have to be repeated.
   */
  async function kept(id: number, app: INestApplication = t.app, http: Http = t.http): Promise<Json> {
    let previous = await anon(id, http);
    expect(previous.status).toBe(200);
    for (let attempt = 0; attempt < 10; attempt += 1) {
      const before = await hits(app);
      const next = await anon(id, http);
      expect(next.status).toBe(200);
      expect(next.body).toEqual(previous.body);
      if ((await hits(app)) === before + 1) return next.body as Json;
      previous = next;
    }
    throw new Error(`project ${id}: no read came from the cache`);
  }

  const publicProject = (attrs: Record<string, unknown> = {}, token = owner.token) =>
    createProject(t, { visibility: 'public', ...attrs }, token);

  beforeAll(async () => {
    t = await startTestApp();
    owner = await createUser(t);
    fan = await createUser(t);
  });

  afterAll(async () => {
    await t.close();
  });

  it('answers a hit as the route does: same body, status, type and headers, logged under the route', async () => {
    const p = await publicProject({ description: 'kept' });
    await kept(p.id);
    // A parameter sends the request through the route (an anonymous caller's answer ignores it).
    const miss = await t.http().get(`/api/v4/projects/${p.id}?statistics=true`);
    const hitsBefore = await hits();
    const hit = await anon(p.id);
    expect(await hits()).toBe(hitsBefore + 1);
    expect(hit.status).toBe(200);
    expect(hit.text).toBe(miss.text);
    expect(hit.headers['content-type']).toBe('application/json');
    for (const h of ['x-content-type-options', 'x-frame-options', 'content-length'])
      expect(hit.headers[h]).toBe(miss.headers[h]);
    expect(hit.headers['x-request-id']).toMatch(/\S/);
    expect(hit.headers['x-request-id']).not.toBe(miss.headers['x-request-id']);
    expect(hit.headers['cache-control']).toBeUndefined();
    const scrape = async () => (await t.http().get('/-/metrics')).text;
    const routed = (text: string) =>
      Number(
        text
          .split('\n')
          .find((l) =>
            l.startsWith(
              'lode_http_request_duration_seconds_count{method="GET",route="/api/v4/projects/:id",status="200"}',
            ),
          )
          ?.split(' ')
          .pop() ?? 0,
      );
    const text = await scrape();
    expect(text).toMatch(/lode_project_cache_hits_total [1-9]/);
    expect(text).toMatch(/lode_project_cache_misses_total [1-9]/);
    expect(text).toMatch(/lode_project_cache_bytes [1-9]/);
    // A hit is measured under the route's template, as a miss is.
    const before = await hits();
    await anon(p.id);
    expect(await hits()).toBe(before + 1);
    expect(routed(await scrape())).toBe(routed(text) + 1);
  });

  it('never answers a caller with credentials or parameters from it', async () => {
    const p = await publicProject();
    await kept(p.id);
    const signedIn = await as(fan.token).get(`/projects/${p.id}`);
    expect(signedIn.status).toBe(200);
    expect(signedIn.body.permissions).toEqual({ project_access: null, group_access: null });
    expect(signedIn.headers['cache-control']).toBe('private, no-store');
    // A bad token is refused as before, not answered as anonymous.
    expect((await t.http().get(`/api/v4/projects/${p.id}`).set('PRIVATE-TOKEN', 'nope')).status).toBe(401);
    expect((await t.http().get(`/api/v4/projects/${p.id}?private_token=nope`)).status).toBe(401);
    expect((await t.http().get(`/api/v4/projects/${p.id}`).set('Authorization', 'Bearer nope')).status).toBe(401);
    expect((await t.http().get(`/api/v4/projects/${p.id}`).set('Sudo', String(fan.id))).status).toBe(401);
    const before = await hits();
    const withToken = await t.http().get(`/api/v4/projects/${p.id}?private_token=${fan.token}`);
    expect(withToken.body.permissions).toBeDefined();
    expect(await hits()).toBe(before);
  });

  it('drops what a project update changes: name, description, topics, default branch, and visibility', async () => {
    const p = await publicProject({ description: 'before' });
    await kept(p.id);
    const name = `Renamed ${unique()}`;
    const put = await as(owner.token)
      .put(`/projects/${p.id}`)
      .send({ name, description: 'after', topics: ['one', 'two'] });
    expect(put.status).toBe(200);
    const after = await kept(p.id);
    expect(after).toMatchObject({ name, description: 'after', tag_list: ['one', 'two'], topics: ['one', 'two'] });

    expect((await as(owner.token).put(`/projects/${p.id}`).send({ visibility: 'private' })).status).toBe(200);
    expect((await anon(p.id)).status).toBe(404);
    expect((await as(owner.token).put(`/projects/${p.id}`).send({ visibility: 'internal' })).status).toBe(200);
    expect((await anon(p.id)).status).toBe(404);
    expect((await as(owner.token).put(`/projects/${p.id}`).send({ visibility: 'public' })).status).toBe(200);
    expect((await kept(p.id)).name).toBe(name);
  });

  it('drops what an avatar, an archive and a transfer change', async () => {
    const p = await publicProject();
    expect((await kept(p.id)).avatar_url).toBeNull();
    const avatar = await t
      .http()
      .put(`/api/v4/projects/${p.id}`)
      .set('PRIVATE-TOKEN', owner.token)
      .attach('avatar', PNG, { filename: 'a.png' });
    expect(avatar.status).toBe(200);
    expect((await kept(p.id)).avatar_url).toMatch(/a\.png$/);

    const active = (await kept(p.id)).last_activity_at;
    await new Promise((r) => setTimeout(r, 5));
    expect((await as(owner.token).post(`/projects/${p.id}/archive`)).status).toBe(201);
    const archived = await kept(p.id);
    expect(archived.last_activity_at).not.toBe(active);
    await new Promise((r) => setTimeout(r, 5));
    expect((await as(owner.token).post(`/projects/${p.id}/unarchive`)).status).toBe(201);
    expect((await kept(p.id)).last_activity_at).not.toBe(archived.last_activity_at);

    const group = await createGroup(t, { visibility: 'public' });
    expect((await as(t.rootToken).put(`/projects/${p.id}/transfer`).send({ namespace: group.id })).status).toBe(200);
    expect((await kept(p.id)).path_with_namespace).toBe(`${group.full_path}/${p.path}`);
    const other = await createGroup(t, { visibility: 'public' });
    expect((await as(t.rootToken).post(`/groups/${other.id}/projects/${p.id}`)).status).toBe(201);
    expect((await kept(p.id)).name_with_namespace).toBe(`${other.name} / ${p.name}`);
  });

  it('drops what a push changes: the default branch and the last activity', async () => {
    const p = await publicProject();
    expect((await kept(p.id)).default_branch).toBeNull();
    const commit = await as(owner.token)
      .post(`/projects/${p.id}/repository/commits`)
      .send({
        branch: 'main',
        commit_message: 'first',
        actions: [{ action: 'create', file_path: 'README.md', content: 'hi' }],
      });
    expect(commit.status).toBe(201);
    expect((await kept(p.id)).default_branch).toBe('main');
  });

  it('drops what stars, forks, fork relations and deletions change in the counts', async () => {
    const source = await publicProject();
    expect((await kept(source.id)).star_count).toBe(0);
    expect((await as(fan.token).post(`/projects/${source.id}/star`)).status).toBe(201);
    expect((await kept(source.id)).star_count).toBe(1);
    expect((await as(fan.token).post(`/projects/${source.id}/unstar`)).status).toBe(201);
    expect((await kept(source.id)).star_count).toBe(0);

    expect((await kept(source.id)).forks_count).toBe(0);
    const fork = await as(fan.token).post(`/projects/${source.id}/fork`);
    expect(fork.status).toBe(201);
    expect((await kept(source.id)).forks_count).toBe(1);

    const loose = await publicProject({}, fan.token);
    expect((await as(t.rootToken).post(`/projects/${loose.id}/fork/${source.id}`)).status).toBe(201);
    expect((await kept(source.id)).forks_count).toBe(2);
    expect((await as(fan.token).delete(`/projects/${loose.id}/fork`)).status).toBe(204);
    expect((await kept(source.id)).forks_count).toBe(1);

    await kept(fork.body.id);
    expect((await as(fan.token).delete(`/projects/${fork.body.id}`)).status).toBe(202);
    expect((await anon(fork.body.id)).status).toBe(404);
    expect((await kept(source.id)).forks_count).toBe(0);
  });

  it("drops what a group's or a user's change shows in their projects' answers", async () => {
    const parent = await createGroup(t, { visibility: 'public' });
    const group = await createGroup(t, { visibility: 'public', parent_id: parent.id });
    const p = await publicProject({ namespace_id: group.id }, t.rootToken);
    await kept(p.id);
    const s = unique();
    expect(
      (
        await as(t.rootToken)
          .put(`/groups/${parent.id}`)
          .send({ name: `Top ${s}`, path: `top-${s}` })
      ).status,
    ).toBe(200);
    const renamed = await kept(p.id);
    expect(renamed.path_with_namespace).toBe(`top-${s}/${group.path}/${p.path}`);
    expect(renamed.name_with_namespace).toBe(`Top ${s} / ${group.name} / ${p.name}`);

    const elsewhere = await createGroup(t, { visibility: 'public' });
    expect((await as(t.rootToken).post(`/groups/${group.id}/transfer`).send({ group_id: elsewhere.id })).status).toBe(
      201,
    );
    expect((await kept(p.id)).path_with_namespace).toBe(`${elsewhere.full_path}/${group.path}/${p.path}`);

    const mine = await publicProject({}, owner.token);
    await kept(mine.id);
    const username = `renamed${unique()}`;
    const put = await as(t.rootToken).put(`/users/${owner.id}`).send({ name: 'Renamed Owner', username });
    expect(put.status).toBe(200);
    const moved = await kept(mine.id);
    expect(moved.path_with_namespace).toBe(`${username}/${mine.path}`);
    expect(moved.name_with_namespace).toBe(`Renamed Owner / ${mine.name}`);
  });

  it('keeps no more bytes than LODE_PROJECT_CACHE_BYTES, the least recently used out first', async () => {
    const limit = t.config.projectCacheBytes;
    const bytes = () => metric(t.app, 'lode_project_cache_bytes');
    try {
      t.config.projectCacheBytes = 20_000;
      const made = [];
      for (let i = 0; i < 30; i += 1) made.push(await publicProject());
      for (const p of made) expect((await anon(p.id)).status).toBe(200);
      expect(await bytes()).toBeGreaterThan(10_000);
      expect(await bytes()).toBeLessThanOrEqual(20_000);
      // The newest is kept; the oldest was pushed out.
      await kept(made[29].id);
      const before = await hits();
      await anon(made[0].id);
      expect(await hits()).toBe(before);
      t.config.projectCacheBytes = 0;
      const p = await publicProject();
      await anon(p.id);
      const off = await hits();
      await anon(p.id);
      expect(await hits()).toBe(off);
    } finally {
      t.config.projectCacheBytes = limit;
    }
  });

  // Two applications on one database share nothing but it (as security.e2e-spec.ts's second API process).
  describeOnServers('a second Lode on the same database', () => {
    const other = secondAppFor(() => t);
    const otherHttp = other.http;

    it('never shows a project made private through the first, nor its old name', async () => {
      const p = await publicProject();
      for (let round = 0; round < 5; round += 1) {
        await kept(p.id, other.app(), otherHttp);
        expect((await as(owner.token).put(`/projects/${p.id}`).send({ visibility: 'private' })).status).toBe(200);
        expect((await anon(p.id, otherHttp)).status).toBe(404);
        const name = `Round ${round} ${unique()}`;
        expect((await as(owner.token).put(`/projects/${p.id}`).send({ visibility: 'public', name })).status).toBe(200);
        expect((await anon(p.id, otherHttp)).body.name).toBe(name);
      }
    });

    it('never shows a project deleted through the first', async () => {
      const p = await publicProject();
      await kept(p.id, other.app(), otherHttp);
      expect((await as(owner.token).delete(`/projects/${p.id}`)).status).toBe(202);
      expect((await anon(p.id, otherHttp)).status).toBe(404);
    });
  });
});
