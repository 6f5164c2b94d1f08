import { Metrics } from '@app/platform';
import { type INestApplication } from '@nestjs/common';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import request from 'supertest';
import { gitOk, tempDirs } from '../support/git';
import { client, createGroup, createProject, unique } from '../support/groups';
import { createUser, type SeededUser } from '../support/seed';
import { describeOnServers, eventually, freePort, secondAppFor, startTestApp, type TestApp } from '../support/test-app';

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

  /** A public project with one small file, and that file's blob id. */
  async function projectWithBlob(
    content = `kept blob ${unique()}\n`,
  ): Promise<{ id: number; blob: string; content: string }> {
    const p = await publicProject();
    const made = await as(owner.token)
      .post(`/projects/${p.id}/repository/files/notes.txt`)
      .send({ branch: 'master', commit_message: 'notes', content });
    expect(made.status).toBe(201);
    const tree = await as(owner.token).get(`/projects/${p.id}/repository/tree?ref=master`);
    const blob = (tree.body as Json[]).find((e) => e.name === 'notes.txt')!.id as string;
    return { id: p.id, blob, content };
  }
  const rawUrl = (id: number, blob: string) => `/api/v4/projects/${id}/repository/blobs/${blob}/raw`;
  const raw = (id: number, blob: string, http: Http = t.http) => http().get(rawUrl(id, blob));
  const fastBlobs = (app: INestApplication = t.app) => metric(app, 'lode_public_blob_answers_total');

  /** Reads a blob anonymously until the answer comes from before the route (the counter moves), and returns it. */
  async function servedFast(id: number, blob: string, app: INestApplication = t.app, http: Http = t.http) {
    for (let attempt = 0; attempt < 10; attempt += 1) {
      const before = await fastBlobs(app);
      const res = await raw(id, blob, http);
      expect(res.status).toBe(200);
      if ((await fastBlobs(app)) === before + 1) return res;
    }
    throw new Error(`project ${id}: no raw read came from memory`);
  }

  it("answers an anonymous raw read of a public project's kept blob from memory, as the route does", async () => {
    const { id, blob, content } = await projectWithBlob();
    const routed = await raw(id, blob);
    expect(routed.status).toBe(200);
    const fast = await servedFast(id, blob);
    expect(fast.text).toBe(content);
    for (const h of [
      'content-type',
      'content-length',
      'content-disposition',
      'x-content-type-options',
      'content-security-policy',
      'x-frame-options',
    ])
      expect(fast.headers[h]).toBe(routed.headers[h]);
    expect(fast.headers['x-request-id']).toMatch(/\S/);
    expect(await metric(t.app, 'lode_blob_cache_hits_total')).toBeGreaterThan(0);
    expect(await metric(t.app, 'lode_blob_cache_bytes')).toBeGreaterThan(0);

    // What the fast path never answers: credentials (a bad token is still refused), a parameter, an
    // abbreviated id, another project's id for the same blob, a missing blob.
    const before = await fastBlobs();
    expect((await raw(id, blob).set('PRIVATE-TOKEN', 'nope')).status).toBe(401);
    expect((await t.http().get(`${rawUrl(id, blob)}?private_token=nope`)).status).toBe(401);
    expect((await as(fan.token).get(`/projects/${id}/repository/blobs/${blob}/raw`)).text).toBe(content);
    expect((await raw(id, blob.slice(0, 12))).text).toBe(content);
    const other = await publicProject();
    const elsewhere = await raw(other.id, blob);
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.body).toEqual({ message: '404 Blob Not Found' });
    expect(await fastBlobs()).toBe(before);
  });

  it('never answers a raw read of a project made private, deleted, or never public', async () => {
    const { id, blob, content } = await projectWithBlob();
    await servedFast(id, blob);
    expect((await as(owner.token).put(`/projects/${id}`).send({ visibility: 'private' })).status).toBe(200);
    expect((await raw(id, blob)).status).toBe(404);
    expect((await as(owner.token).get(`/projects/${id}/repository/blobs/${blob}/raw`)).text).toBe(content);
    expect((await as(owner.token).put(`/projects/${id}`).send({ visibility: 'public' })).status).toBe(200);
    expect((await servedFast(id, blob)).text).toBe(content);
    // A change to another project leaves this one remembered: the very next read is answered from memory.
    const neighbour = await publicProject();
    expect((await as(owner.token).put(`/projects/${neighbour.id}`).send({ description: 'elsewhere' })).status).toBe(
      200,
    );
    const before = await fastBlobs();
    expect((await raw(id, blob)).text).toBe(content);
    expect(await fastBlobs()).toBe(before + 1);
    expect((await as(owner.token).delete(`/projects/${id}`)).status).toBe(202);
    expect((await raw(id, blob)).status).toBe(404);

    const hidden = await createProject(t, { visibility: 'private' }, owner.token);
    const made = await as(owner.token)
      .post(`/projects/${hidden.id}/repository/files/secret.txt`)
      .send({ branch: 'master', commit_message: 'secret', content: 'secret\n' });
    expect(made.status).toBe(201);
    const secret = (await as(owner.token).get(`/projects/${hidden.id}/repository/tree`)).body[0].id as string;
    // The blob is kept (the owner read it) but the project was never found public.
    expect((await as(owner.token).get(`/projects/${hidden.id}/repository/blobs/${secret}/raw`)).status).toBe(200);
    expect((await raw(hidden.id, secret)).status).toBe(404);
    expect((await raw(hidden.id, secret)).status).toBe(404);
  });

  const fileUrl = (id: number, ref = 'master', path = 'notes.txt') =>
    `/api/v4/projects/${id}/repository/files/${encodeURIComponent(path)}?ref=${ref}`;
  const file = (id: number, http: Http = t.http, ref = 'master') => http().get(fileUrl(id, ref));
  const fastFiles = (app: INestApplication = t.app) => metric(app, 'lode_public_file_answers_total');
  const text = (res: { body: Json }) => Buffer.from(res.body.content as string, 'base64').toString();

  /** Reads a file anonymously until the answer comes from before the route, and returns it. */
  async function fileFast(id: number, app: INestApplication = t.app, http: Http = t.http, ref = 'master') {
    for (let attempt = 0; attempt < 10; attempt += 1) {
      const before = await fastFiles(app);
      const res = await file(id, http, ref);
      expect(res.status).toBe(200);
      if ((await fastFiles(app)) === before + 1) return res;
    }
    throw new Error(`project ${id}: no files API read came from memory`);
  }
  const update = (id: number, content: string, branch = 'master') =>
    as(owner.token).put(`/projects/${id}/repository/files/notes.txt`).send({ branch, commit_message: 'edit', content });

  it('answers an anonymous files API read of a public project from memory, as the route does', async () => {
    const { id, content } = await projectWithBlob();
    const routed = await file(id);
    expect(routed.status).toBe(200);
    const fast = await fileFast(id);
    expect(fast.text).toBe(routed.text);
    expect(text(fast)).toBe(content);
    const gitlabHeaders = Object.keys(routed.headers).filter((h) => h.startsWith('x-gitlab-'));
    expect(gitlabHeaders).toEqual(expect.arrayContaining(['x-gitlab-blob-id', 'x-gitlab-commit-id', 'x-gitlab-ref']));
    for (const h of [...gitlabHeaders, 'content-type', 'content-length', 'x-content-type-options', 'x-frame-options'])
      expect(fast.headers[h]).toBe(routed.headers[h]);

    // Never for credentials, another parameter, or a signed-in caller's read.
    const before = await fastFiles();
    expect((await file(id).set('PRIVATE-TOKEN', 'nope')).status).toBe(401);
    expect((await t.http().get(`${fileUrl(id)}&private_token=nope`)).status).toBe(401);
    expect(text(await as(fan.token).get(`/projects/${id}/repository/files/notes.txt?ref=master`))).toBe(content);
    expect((await t.http().get(`${fileUrl(id)}&unused=1`)).status).toBe(200);
    expect(await fastFiles()).toBe(before);
  });

  it('never answers a file read stale after the branch moved, was deleted, or the project turned private', async () => {
    const { id } = await projectWithBlob();
    await fileFast(id);
    expect((await update(id, 'second\n')).status).toBe(200);
    expect(text(await file(id))).toBe('second\n');
    expect(text(await fileFast(id))).toBe('second\n');
    // Another branch's read is its own answer; deleting the branch ends it.
    expect((await as(owner.token).post(`/projects/${id}/repository/branches?branch=side&ref=master`)).status).toBe(201);
    expect(text(await fileFast(id, t.app, t.http, 'side'))).toBe('second\n');
    expect((await as(owner.token).delete(`/projects/${id}/repository/branches/side`)).status).toBe(204);
    expect((await file(id, t.http, 'side')).status).toBe(404);
    await fileFast(id);
    expect((await as(owner.token).put(`/projects/${id}`).send({ visibility: 'private' })).status).toBe(200);
    expect((await file(id)).status).toBe(404);
  });

  it('never answers a file read at a tag stale after the tag was deleted and made again elsewhere', async () => {
    const { id, content } = await projectWithBlob();
    const tag = (ref: string) => as(owner.token).post(`/projects/${id}/repository/tags`).send({ tag_name: 'v1', ref });
    expect((await tag('master')).status).toBe(201);
    expect(text(await fileFast(id, t.app, t.http, 'v1'))).toBe(content);
    expect((await update(id, 'after the tag\n')).status).toBe(200);
    // The branch moved, the tag did not: still the tagged content (read anew: the project's event evicted it).
    expect(text(await file(id, t.http, 'v1'))).toBe(content);
    await fileFast(id, t.app, t.http, 'v1');
    expect((await as(owner.token).delete(`/projects/${id}/repository/tags/v1`)).status).toBe(204);
    expect((await file(id, t.http, 'v1')).status).toBe(404);
    expect((await tag('master')).status).toBe(201);
    expect(text(await file(id, t.http, 'v1'))).toBe('after the tag\n');
  });

  it("never keeps an answer a GET's body chose (a body's parameters are laid over the query's)", async () => {
    const { id, content } = await projectWithBlob();
    expect((await as(owner.token).post(`/projects/${id}/repository/branches?branch=other&ref=master`)).status).toBe(
      201,
    );
    expect((await update(id, 'other\n', 'other')).status).toBe(200);
    for (let round = 0; round < 3; round += 1) {
      const chosen = await t.http().get(fileUrl(id)).send({ ref: 'other' });
      expect(chosen.status).toBe(200);
      expect(text(chosen)).toBe('other\n');
    }
    expect(text(await file(id))).toBe(content);
    expect(text(await fileFast(id))).toBe(content);
  });

  it('never answers a file read stale after a git push over HTTP', async () => {
    const tmp = tempDirs();
    try {
      const { id } = await projectWithBlob();
      const project = (await as(owner.token).get(`/projects/${id}`)).body as Json;
      if (!t.app.getHttpServer().listening) await t.app.listen(0, '127.0.0.1');
      const port = (t.app.getHttpServer().address() as AddressInfo).port;
      const remote = `http://git:${owner.token}@127.0.0.1:${port}/${project.path_with_namespace}.git`;
      const dir = tmp.make();
      await gitOk(['clone', '-q', remote, dir]);
      for (const round of [1, 2]) {
        await fileFast(id);
        writeFileSync(join(dir, 'notes.txt'), `pushed ${round}\n`);
        await gitOk(['commit', '-q', '-am', `push ${round}`], dir);
        await gitOk(['push', '-q', 'origin', 'master'], dir);
        // The push's answer came after its record, whose event evicted the kept answer.
        expect(text(await file(id))).toBe(`pushed ${round}\n`);
      }
    } finally {
      tmp.removeAll();
    }
  });

  /** The id of a branch's tip, as its owner reads it. */
  const tip = async (id: number, branch: string) =>
    (await as(owner.token).get(`/projects/${id}/repository/branches/${branch}`)).body.commit.id as string;

  it('never answers a file read stale after a cherry-pick or a revert onto the branch through the API', async () => {
    const { id, content } = await projectWithBlob();
    expect((await as(owner.token).post(`/projects/${id}/repository/branches?branch=side&ref=master`)).status).toBe(201);
    expect((await update(id, 'picked\n', 'side')).status).toBe(200);
    const picked = await tip(id, 'side');

    expect(text(await fileFast(id))).toBe(content);
    const pick = await as(owner.token).post(`/projects/${id}/repository/commits/${picked}/cherry_pick`).send({
      branch: 'master',
    });
    expect(pick.status).toBe(201);
    expect(pick.body.id).toBe(await tip(id, 'master'));
    expect(text(await file(id))).toBe('picked\n');
    expect(text(await fileFast(id))).toBe('picked\n');

    const revert = await as(owner.token).post(`/projects/${id}/repository/commits/${pick.body.id}/revert`).send({
      branch: 'master',
    });
    expect(revert.status).toBe(201);
    expect(revert.body.id).toBe(await tip(id, 'master'));
    expect(text(await file(id))).toBe(content);
    expect(text(await fileFast(id))).toBe(content);
  });

  it("never answers a fork's file read stale, before its copy finished or after a change, nor its source's", async () => {
    const source = await projectWithBlob();
    expect(text(await fileFast(source.id))).toBe(source.content);
    const forked = await as(fan.token).post(`/projects/${source.id}/fork`);
    expect(forked.status).toBe(201);
    const forkId = forked.body.id as number;
    // Until the background job has copied the repository the fork has no file to answer (its
    // repository reads as an empty one: 404, as GitLab answers while it imports), and nothing
    // answered then is kept: every read up to the first 200 went to the route (none was answered from
    // memory), and that 200 is the copy's content.
    const fastBefore = await fastFiles();
    const early: number[] = [];
    await eventually(
      async () => {
        const res = await file(forkId);
        early.push(res.status);
        expect(res.status).toBe(200);
        expect(text(res)).toBe(source.content);
      },
      20_000,
      50,
    );
    for (const status of early.slice(0, -1)) expect(status).toBe(404);
    expect(await fastFiles()).toBe(fastBefore);
    await eventually(
      async () => (await as(fan.token).get(`/projects/${forkId}`)).body.import_status === 'finished',
      20_000,
    );
    expect(text(await fileFast(forkId))).toBe(source.content);
    expect(text(await fileFast(source.id))).toBe(source.content);

    const changed = await as(fan.token)
      .put(`/projects/${forkId}/repository/files/notes.txt`)
      .send({ branch: 'master', commit_message: 'fork edit', content: 'changed in the fork\n' });
    expect(changed.status).toBe(200);
    expect(text(await file(forkId))).toBe('changed in the fork\n');
    expect(text(await fileFast(forkId))).toBe('changed in the fork\n');
    // The fork's push names the fork only: the source's kept answer is still its own, and still kept.
    const before = await fastFiles();
    expect(text(await file(source.id))).toBe(source.content);
    expect(await fastFiles()).toBe(before + 1);
  });

  // Git over SSH needs the SSH server, which this file's app does not start (and a second app on its
  // configuration would contend for the port): an app of its own.
  describe('over SSH', () => {
    let s: TestApp;
    let pusher: SeededUser;
    let sshPort: number;
    const keys = tempDirs();
    let key: string;

    beforeAll(async () => {
      sshPort = await freePort();
      s = await startTestApp({ sshPort, sshHost: '127.0.0.1' });
      pusher = await createUser(s);
      key = join(keys.make(), 'pusher');
      execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', key]);
      const added = await client(s, pusher.token)
        .post('/user/keys')
        .send({ title: 'pusher', key: readFileSync(`${key}.pub`, 'utf8').trim() });
      expect(added.status).toBe(201);
    }, 60_000);
    afterAll(async () => {
      keys.removeAll();
      await s?.close();
    });

    it('never answers a file read stale after a git push over SSH', async () => {
      const p = await createProject(s, { visibility: 'public' }, pusher.token);
      const made = await client(s, pusher.token)
        .post(`/projects/${p.id}/repository/files/notes.txt`)
        .send({ branch: 'master', commit_message: 'notes', content: 'over ssh 0\n' });
      expect(made.status).toBe(201);
      const sshEnv = {
        GIT_SSH_COMMAND: `ssh -F /dev/null -i ${key} -p ${sshPort} -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR`,
      };
      const dir = keys.make();
      await gitOk(
        ['clone', '-q', `ssh://git@127.0.0.1:${sshPort}/${p.path_with_namespace}.git`, dir],
        undefined,
        sshEnv,
      );
      expect(text(await fileFast(p.id, s.app, s.http))).toBe('over ssh 0\n');
      for (const round of [1, 2]) {
        writeFileSync(join(dir, 'notes.txt'), `over ssh ${round}\n`);
        await gitOk(['commit', '-q', '-am', `push ${round}`], dir);
        await gitOk(['push', '-q', 'origin', 'master'], dir, sshEnv);
        // The push was recorded (its event evicting the kept answer) before the session's exit status.
        expect(text(await file(p.id, s.http))).toBe(`over ssh ${round}\n`);
        expect(text(await fileFast(p.id, s.app, s.http))).toBe(`over ssh ${round}\n`);
      }
    });
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

    it("never answers a raw read of a project's blob after the first made it private", async () => {
      const { id, blob, content } = await projectWithBlob();
      for (let round = 0; round < 3; round += 1) {
        expect((await servedFast(id, blob, other.app(), otherHttp)).text).toBe(content);
        expect((await as(owner.token).put(`/projects/${id}`).send({ visibility: 'private' })).status).toBe(200);
        expect((await raw(id, blob, otherHttp)).status).toBe(404);
        expect((await as(owner.token).put(`/projects/${id}`).send({ visibility: 'public' })).status).toBe(200);
      }
    });

    it('never answers a file read of a project the first made private or deleted', async () => {
      const { id } = await projectWithBlob();
      await fileFast(id, other.app(), otherHttp);
      expect((await as(owner.token).put(`/projects/${id}`).send({ visibility: 'private' })).status).toBe(200);
      expect((await file(id, otherHttp)).status).toBe(404);
      expect((await as(owner.token).put(`/projects/${id}`).send({ visibility: 'public' })).status).toBe(200);
      await fileFast(id, other.app(), otherHttp);
      expect((await as(owner.token).delete(`/projects/${id}`)).status).toBe(202);
      expect((await file(id, otherHttp)).status).toBe(404);
    });

    it('never answers a raw read of a project the first deleted', async () => {
      const { id, blob } = await projectWithBlob();
      await servedFast(id, blob, other.app(), otherHttp);
      expect((await as(owner.token).delete(`/projects/${id}`)).status).toBe(202);
      expect((await raw(id, blob, otherHttp)).status).toBe(404);
    });

    it('never answers a file read stale after the first moved its branch', async () => {
      const { id } = await projectWithBlob();
      for (let round = 0; round < 3; round += 1) {
        await fileFast(id, other.app(), otherHttp);
        expect((await update(id, `round ${round}\n`)).status).toBe(200);
        expect(text(await file(id, otherHttp))).toBe(`round ${round}\n`);
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
