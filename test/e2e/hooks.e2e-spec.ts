import { expectShape } from '../contract/shape';
import { createUser, type SeededUser } from '../support/seed';
import { startTestApp, type TestApp } from '../support/test-app';

describe('project hooks', () => {
  let t: TestApp;
  let owner: SeededUser;
  let developer: SeededUser;
  let stranger: SeededUser;
  let projectId: number;
  let privateId: number;

  const as = (token: string) => ({
    get: (path: string) => t.http().get(`/api/v4${path}`).set('PRIVATE-TOKEN', token),
    post: (path: string) => t.http().post(`/api/v4${path}`).set('PRIVATE-TOKEN', token),
    put: (path: string) => t.http().put(`/api/v4${path}`).set('PRIVATE-TOKEN', token),
    delete: (path: string) => t.http().delete(`/api/v4${path}`).set('PRIVATE-TOKEN', token),
  });

  beforeAll(async () => {
    t = await startTestApp();
    owner = await createUser(t);
    developer = await createUser(t);
    stranger = await createUser(t);
    const project = await as(owner.token).post('/projects').send({ name: 'hooked', visibility: 'internal' });
    expect(project.status).toBe(201);
    projectId = project.body.id;
    expect(
      (await as(owner.token).post(`/projects/${projectId}/members`).send({ user_id: developer.id, access_level: 30 }))
        .status,
    ).toBe(201);
    privateId = (await as(owner.token).post('/projects').send({ name: 'secret' })).body.id;
  });
  afterAll(async () => {
    await t.close();
  });

  it('adds a hook with GitLab defaults, takes wiki_events as wiki_page_events, and never shows the token', async () => {
    const res = await as(owner.token)
      .post(`/projects/${projectId}/hooks`)
      .send({ url: 'https://hooks.example.com/x', token: 's3cret', wiki_events: true });
    expect(res.status).toBe(201);
    expectShape(res.body, 'project-hook');
    expect(res.body).toMatchObject({
      url: 'https://hooks.example.com/x',
      project_id: projectId,
      push_events: true,
      tag_push_events: false,
      issues_events: false,
      wiki_page_events: true,
      enable_ssl_verification: true,
    });
    expect(JSON.stringify(res.body)).not.toContain('s3cret');
    const list = await as(owner.token).get(`/projects/${projectId}/hooks`);
    expect(list.status).toBe(200);
    expect(list.headers['x-total']).toBe('1');
    expect(JSON.stringify(list.body)).not.toContain('s3cret');
    const one = await as(owner.token).get(`/projects/${projectId}/hooks/${res.body.id}`);
    expectShape(one.body, 'project-hook');
  });

  it('takes form bodies with string booleans', async () => {
    const res = await as(owner.token).post(`/projects/${projectId}/hooks`).type('form').send({
      url: 'http://93.184.216.34/hook',
      push_events: 'false',
      tag_push_events: 'True',
      enable_ssl_verification: 'false',
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ push_events: false, tag_push_events: true, enable_ssl_verification: false });
  });

  it('replaces a hook with PUT (url required) and deletes it with 204, then 404', async () => {
    const hook = (await as(owner.token).post(`/projects/${projectId}/hooks`).send({ url: 'https://a.example.com/' }))
      .body;
    expect(
      (await as(owner.token).put(`/projects/${projectId}/hooks/${hook.id}`).send({ push_events: false })).body,
    ).toEqual({ error: 'url is missing' });
    const put = await as(owner.token)
      .put(`/projects/${projectId}/hooks/${hook.id}`)
      .send({ url: 'https://b.example.com/', note_events: true });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({
      id: hook.id,
      url: 'https://b.example.com/',
      note_events: true,
      push_events: true,
    });
    const del = await as(owner.token).delete(`/projects/${projectId}/hooks/${hook.id}`);
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expect((await as(owner.token).delete(`/projects/${projectId}/hooks/${hook.id}`)).status).toBe(404);
    expect((await as(owner.token).get(`/projects/${projectId}/hooks/${hook.id}`)).body).toEqual({
      message: '404 Not found',
    });
    expect(
      (await as(owner.token).put(`/projects/${projectId}/hooks/999999`).send({ url: 'https://c.example.com/' })).status,
    ).toBe(404);
    expect((await as(owner.token).get(`/projects/${projectId}/hooks/abc`)).body).toEqual({
      error: 'hook_id is invalid',
    });
  });

  it('is for maintainers and owners: developers 403, strangers to a private project 404, anonymous 401', async () => {
    expect((await as(developer.token).get(`/projects/${projectId}/hooks`)).status).toBe(403);
    expect(
      (await as(developer.token).post(`/projects/${projectId}/hooks`).send({ url: 'https://x.example.com' })).status,
    ).toBe(403);
    expect((await as(stranger.token).get(`/projects/${privateId}/hooks`)).body).toEqual({
      message: '404 Project Not Found',
    });
    expect((await t.http().get(`/api/v4/projects/${projectId}/hooks`)).status).toBe(401);
    expect((await as(t.rootToken).get(`/projects/${projectId}/hooks`)).status).toBe(200);
  });

  it('requires a url', async () => {
    expect((await as(owner.token).post(`/projects/${projectId}/hooks`).send({})).body).toEqual({
      error: 'url is missing',
    });
  });

  it.each([
    'ftp://example.com/x',
    'not a url',
    'http://127.0.0.1/',
    'http://localhost:8080/',
    'http://0177.0.0.1/',
    'http://0x7f.1/',
    'http://2130706433/',
    'http://[::ffff:127.0.0.1]/',
    'http://[::1]/',
    'http://10.1.2.3/',
    'http://192.168.0.1/',
    'http://169.254.169.254/latest/meta-data',
    'http://metadata.google.internal/',
    'http://0/',
  ])('refuses %s with 422 Invalid url given', async (url) => {
    const before = Number((await t.db.query(`select count(*) from events where type = 'ProjectHookAdded'`))[0].count);
    const res = await as(owner.token).post(`/projects/${projectId}/hooks`).send({ url });
    expect(res.status).toBe(422);
    // GitLab's one line, with the UrlBlocker's reason beside it as `message`.
    expect(res.body).toEqual({ error: 'Invalid url given', message: expect.stringMatching(/^Url is blocked: /) });
    expect(Number((await t.db.query(`select count(*) from events where type = 'ProjectHookAdded'`))[0].count)).toBe(
      before,
    );
  });

  it.each([
    ['http://10.1.2.3/', 'Url is blocked: Requests to the local network are not allowed'],
    ['http://192.168.0.1/', 'Url is blocked: Requests to the local network are not allowed'],
    ['http://127.0.0.1/', 'Url is blocked: Requests to localhost are not allowed'],
    ['ftp://example.com/x', 'Url is blocked: Only allowed schemes are http, https'],
  ])('says why %s is refused', async (url, message) => {
    const res = await as(owner.token).post(`/projects/${projectId}/hooks`).send({ url });
    expect(res.body).toEqual({ error: 'Invalid url given', message });
  });

  it('refuses a local URL on update too', async () => {
    const hook = (await as(owner.token).post(`/projects/${projectId}/hooks`).send({ url: 'https://ok.example.com/' }))
      .body;
    const res = await as(owner.token)
      .put(`/projects/${projectId}/hooks/${hook.id}`)
      .send({ url: 'http://127.0.0.1:9/' });
    expect(res.status).toBe(422);
    expect((await as(owner.token).get(`/projects/${projectId}/hooks/${hook.id}`)).body.url).toBe(
      'https://ok.example.com/',
    );
  });

  it('allows local URLs when LODE_ALLOW_LOCAL_WEBHOOKS is on', async () => {
    const local = await startTestApp({ allowLocalWebhooks: true });
    try {
      const project = await local
        .http()
        .post('/api/v4/projects')
        .set('PRIVATE-TOKEN', local.rootToken)
        .send({ name: 'local' });
      const res = await local
        .http()
        .post(`/api/v4/projects/${project.body.id}/hooks`)
        .set('PRIVATE-TOKEN', local.rootToken)
        .send({ url: 'http://127.0.0.1:9999/hook' });
      expect(res.status).toBe(201);
      // Other schemes stay refused.
      const ftp = await local
        .http()
        .post(`/api/v4/projects/${project.body.id}/hooks`)
        .set('PRIVATE-TOKEN', local.rootToken)
        .send({ url: 'ftp://127.0.0.1/' });
      expect(ftp.status).toBe(422);
    } finally {
      await local.close();
    }
  });

  it("removes a project's hooks with the project", async () => {
    const p = (await as(owner.token).post('/projects').send({ name: 'short-lived' })).body;
    expect(
      (await as(owner.token).post(`/projects/${p.id}/hooks`).send({ url: 'https://gone.example.com/' })).status,
    ).toBe(201);
    expect((await as(owner.token).delete(`/projects/${p.id}`)).status).toBe(202);
    expect(
      Number((await t.db.query(`select count(*) from project_hooks where project_id = $1`, [p.id]))[0].count),
    ).toBe(0);
  });
});
