import { createUser, type SeededUser } from '../support/seed';
import { startTestApp, type TestApp } from '../support/test-app';

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

describe('project uploads', () => {
  let t: TestApp;
  let owner: SeededUser;
  let stranger: SeededUser;
  let publicProject: { id: number; path_with_namespace: string; web_url: string };
  let privateProject: { id: number; path_with_namespace: string };

  beforeAll(async () => {
    t = await startTestApp({ maxUploadBytes: 64 * 1024 });
    owner = await createUser(t);
    stranger = await createUser(t);
    publicProject = (
      await t
        .http()
        .post('/api/v4/projects')
        .set('PRIVATE-TOKEN', owner.token)
        .send({ name: 'pub', visibility: 'public' })
    ).body;
    privateProject = (await t.http().post('/api/v4/projects').set('PRIVATE-TOKEN', owner.token).send({ name: 'priv' }))
      .body;
  });
  afterAll(async () => {
    await t.close();
  });

  const upload = (projectId: number | string, token: string) =>
    t.http().post(`/api/v4/projects/${projectId}/uploads`).set('PRIVATE-TOKEN', token);

  it('stores an image and answers GitLab markdown with alt without the extension', async () => {
    const res = await upload(publicProject.id, owner.token).attach('file', PNG, 'screen shot.png');
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      alt: 'screen shot',
      url: expect.stringMatching(/^\/uploads\/[0-9a-f]{32}\/screen%20shot\.png$/),
      markdown: expect.stringMatching(/^!\[screen shot\]\(\/uploads\/[0-9a-f]{32}\/screen%20shot\.png\)$/),
    });
    // Served under the project's web URL, inline, never sniffed.
    const served = await t.http().get(`/${publicProject.path_with_namespace}${res.body.url}`);
    expect(served.status).toBe(200);
    expect(served.headers['content-type']).toBe('image/png');
    expect(served.headers['x-content-type-options']).toBe('nosniff');
    expect(served.headers['content-disposition']).toMatch(/^inline/);
    expect(Buffer.compare(served.body, PNG)).toBe(0);
  });

  it('answers other files with a plain link and serves HTML and SVG only as attachments', async () => {
    for (const name of ['page.html', 'logo.svg']) {
      const res = await upload(publicProject.id, owner.token).attach(
        'file',
        Buffer.from('<script>alert(1)</script>'),
        name,
      );
      expect(res.status).toBe(201);
      expect(res.body.alt).toBe(name);
      expect(res.body.markdown).toBe(`[${name}](${res.body.url})`);
      const served = await t.http().get(`/${publicProject.path_with_namespace}${res.body.url}`);
      expect(served.headers['content-disposition']).toMatch(/^attachment/);
      expect(served.headers['content-type']).not.toMatch(/html|svg/);
      expect(served.headers['content-security-policy']).toContain("default-src 'none'");
    }
  });

  it('cleans file names of paths and traversal', async () => {
    const res = await upload(publicProject.id, owner.token).attach('file', Buffer.from('x'), '../../etc/passwd');
    expect(res.status).toBe(201);
    expect(res.body.url).toMatch(/\/passwd$/);
  });

  it('refuses a file over LODE_MAX_UPLOAD_BYTES with 413 and keeps nothing', async () => {
    const res = await upload(publicProject.id, owner.token).attach('file', Buffer.alloc(64 * 1024 + 1), 'big.bin');
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ message: '413 Request Entity Too Large' });
  });

  it('wants a file: 400 file is missing', async () => {
    expect((await upload(publicProject.id, owner.token).field('other', 'x')).body).toEqual({
      error: 'file is missing',
    });
    expect((await upload(publicProject.id, owner.token).send({ file: 'not a file' })).body).toEqual({
      error: 'file is missing',
    });
  });

  it('keeps private projects private: 404 to strangers, for upload and for download', async () => {
    expect((await upload(privateProject.id, stranger.token).attach('file', PNG, 'a.png')).status).toBe(404);
    const mine = await upload(privateProject.id, owner.token).attach('file', PNG, 'a.png');
    expect(mine.status).toBe(201);
    expect((await t.http().get(`/${privateProject.path_with_namespace}${mine.body.url}`)).status).toBe(404);
    const withToken = await t
      .http()
      .get(`/${privateProject.path_with_namespace}${mine.body.url}`)
      .set('PRIVATE-TOKEN', owner.token);
    expect(withToken.status).toBe(200);
    expect(
      (await t.http().post(`/api/v4/projects/${publicProject.id}/uploads`).attach('file', PNG, 'a.png')).status,
    ).toBe(401);
  });

  it('answers 404 for unknown secrets and files', async () => {
    expect(
      (await t.http().get(`/${publicProject.path_with_namespace}/uploads/${'0'.repeat(32)}/nope.png`)).status,
    ).toBe(404);
    expect((await t.http().get(`/${publicProject.path_with_namespace}/uploads/not-a-secret/nope.png`)).status).toBe(
      404,
    );
  });
});
