import { Metrics } from '@app/platform';
import { createUser, type SeededUser } from '../support/seed';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * The read-only web pages (libs/web) over HTTP: every `web_url` the API writes answers a page, for
 * the roles the API shows it to; what one may not see is the same 404 as what does not exist; the
 * pages carry their CSP and never let a README, an SVG or a file name inject markup; sign-in makes a
 * session that a block or a token's revocation ends. The browser's view is in web-browser.e2e-spec.ts.
 */

const HTML = { Accept: 'text/html,application/xhtml+xml' };
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);
const HOSTILE_README = [
  '# Hello <script>alert("readme")</script>',
  '',
  '<img src=x onerror="alert(1)">',
  '',
  '[click](javascript:alert(2)) [data](data:text/html,<script>alert(3)</script>) [ok](docs/guide.md) [web](https://example.com/a)',
  '',
  '![logo](img/logo.png) ![remote](https://evil.example/x.png)',
  '',
  '```js',
  'const x = "<b>bold</b>";',
  '```',
].join('\n');
const HOSTILE_SVG = '<svg xmlns="http://www.w3.org/2000/svg"><script>alert("svg")</script></svg>';
const HOSTILE_NAME = '"><img src=x onerror=alert(4)>.txt';

describe('web pages', () => {
  let t: TestApp;
  let owner: SeededUser;
  let outsider: SeededUser;
  let pub: {
    id: number;
    web_url: string;
    path_with_namespace: string;
    default_branch: string;
    ssh_url_to_repo: string;
  };
  let priv: { id: number; web_url: string; path_with_namespace: string; default_branch: string };
  let internal: { id: number; web_url: string };
  let group: { id: number; web_url: string; full_path: string };
  let sha: string;
  const root = () => ({ 'PRIVATE-TOKEN': t.rootToken });
  const as = (u: SeededUser) => ({ 'PRIVATE-TOKEN': u.token });
  const local = (url: string) => url.replace('http://lode.test', '');

  beforeAll(async () => {
    t = await startTestApp();
    owner = await createUser(t);
    outsider = await createUser(t);
    const g = await t
      .http()
      .post('/api/v4/groups')
      .set(root())
      .send({ name: 'Acme', path: 'acme', visibility: 'public' });
    group = g.body;
    await t.http().post(`/api/v4/groups/${group.id}/members`).set(root()).send({ user_id: owner.id, access_level: 50 });
    const created = await t.http().post('/api/v4/projects').set(as(owner)).send({
      name: 'Tools',
      path: 'tools',
      namespace_id: group.id,
      visibility: 'public',
      description: 'Tools <b>for</b> all',
    });
    expect(created.status).toBe(201);
    pub = created.body;
    const commit = await t
      .http()
      .post(`/api/v4/projects/${pub.id}/repository/commits`)
      .set(as(owner))
      .send({
        branch: 'main',
        commit_message: 'First <script>alert(5)</script>\n\nThe body.',
        actions: [
          { action: 'create', file_path: 'README.md', content: HOSTILE_README },
          { action: 'create', file_path: 'src/main.ts', content: 'export const answer = 42; // <b>not bold</b>\n' },
          { action: 'create', file_path: 'img/logo.png', content: PNG.toString('base64'), encoding: 'base64' },
          { action: 'create', file_path: 'evil.svg', content: HOSTILE_SVG },
          { action: 'create', file_path: 'page.html', content: '<script>alert(6)</script>' },
          { action: 'create', file_path: HOSTILE_NAME, content: 'x' },
          { action: 'create', file_path: 'docs/guide.md', content: '# Guide\n\n[back](../README.md)' },
        ],
      });
    expect(commit.status).toBe(201);
    sha = commit.body.id;
    pub = (await t.http().get(`/api/v4/projects/${pub.id}`).set(root())).body;
    await t
      .http()
      .post(`/api/v4/projects/${pub.id}/repository/tags`)
      .set(as(owner))
      .send({ tag_name: 'v1.0', ref: 'main' });
    await t
      .http()
      .post(`/api/v4/projects/${pub.id}/releases`)
      .set(as(owner))
      .send({ tag_name: 'v1.0', name: 'One', description: 'First <script>alert(7)</script> release' });
    priv = (
      await t
        .http()
        .post('/api/v4/projects')
        .set(as(owner))
        .send({ name: 'Secret', path: 'secret', visibility: 'private', initialize_with_readme: true })
    ).body;
    internal = (
      await t
        .http()
        .post('/api/v4/projects')
        .set(as(owner))
        .send({ name: 'Inside', path: 'inside', visibility: 'internal' })
    ).body;
  }, 240_000);

  afterAll(() => t.close());

  const page = (path: string, cookie?: string) => {
    const req = t.http().get(path).set(HTML);
    return cookie ? req.set('Cookie', cookie) : req;
  };
  /** Each path's page is a 404 (the path named in a failure). */
  async function expectNotFound(paths: string[]): Promise<void> {
    const statuses = [];
    for (const path of paths) statuses.push([path, (await page(path)).status]);
    expect(statuses).toEqual(paths.map((path) => [path, 404]));
  }

  async function signIn(login: string, password: string): Promise<string> {
    const res = await t
      .http()
      .post('/users/sign_in')
      .set('Origin', 'http://lode.test')
      .type('form')
      .send({ login, password, return_to: '/' });
    expect(res.status).toBe(303);
    const cookie = String(res.headers['set-cookie']);
    return cookie.split(';')[0];
  }

  it('shows a public project to an anonymous visitor, with its CSP, clone URLs, tree and README', async () => {
    const res = await page(local(pub.web_url));
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['content-security-policy']).toBe(
      "default-src 'none'; style-src 'self'; img-src 'self'; script-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    );
    expect(res.text).toContain('http://lode.test/acme/tools.git');
    expect(res.text).toContain(`value="${pub.ssh_url_to_repo}"`);
    expect(res.text).toContain('Tools &lt;b&gt;for&lt;/b&gt; all');
    expect(res.text).toContain('href="/acme/tools/-/tree/main/src"');
    expect(res.text).toContain('href="/acme/tools/-/blob/main/README.md"');
    // No inline script and no inline style anywhere in the page.
    expect(res.text).not.toMatch(/<script(?![^>]*\bsrc=)/);
    expect(res.text).not.toMatch(/<[^>]*\son[a-z]+=/i);
    expect(res.text).not.toMatch(/style=/);
  });

  it('renders a hostile README without markup of its own, links only to safe places', async () => {
    const res = await page(local(pub.web_url));
    const readme = res.text.slice(res.text.indexOf('class="readme"'));
    expect(readme).not.toContain('<script');
    expect(readme).not.toContain('<img src="x"');
    expect(readme).toContain('&lt;script&gt;alert(&quot;readme&quot;)&lt;/script&gt;');
    expect(readme).not.toMatch(/href="(javascript|data):/i);
    expect(readme).toContain('href="/acme/tools/-/blob/main/docs/guide.md"');
    expect(readme).toContain('src="/acme/tools/-/raw/main/img/logo.png"');
    expect(readme).toContain('rel="nofollow noreferrer noopener"');
  });

  it('browses a tree, a highlighted file, an image, a hostile SVG and file name, and their raw bytes', async () => {
    const tree = await page('/acme/tools/-/tree/main/src');
    expect(tree.status).toBe(200);
    expect(tree.text).toContain('href="/acme/tools/-/blob/main/src/main.ts"');
    const blob = await page('/acme/tools/-/blob/main/src/main.ts');
    expect(blob.status).toBe(200);
    expect(blob.text).toContain('hljs-');
    expect(blob.text).toContain('&lt;b&gt;not bold&lt;/b&gt;');
    const image = await page('/acme/tools/-/blob/main/img/logo.png');
    expect(image.text).toContain('<img src="/acme/tools/-/raw/main/img/logo.png"');
    const raw = await page('/acme/tools/-/raw/main/img/logo.png');
    expect(raw.status).toBe(200);
    expect(raw.headers['content-type']).toBe('image/png');
    expect(Buffer.from(raw.body as Buffer).equals(PNG)).toBe(true);
    const svg = await page('/acme/tools/-/blob/main/evil.svg');
    expect(svg.text).not.toContain('<svg');
    expect(svg.text).toContain('&lt;<span class="hljs-name">script</span>&gt;');
    for (const path of ['/acme/tools/-/raw/main/evil.svg', '/acme/tools/-/raw/main/page.html']) {
      const r = await page(path);
      expect([path, r.headers['content-type']]).toEqual([path, 'text/plain; charset=utf-8']);
      expect(r.headers['content-security-policy']).toBe("sandbox; default-src 'none'");
    }
    const root = await page('/acme/tools');
    expect(root.text).not.toContain('<img src=x');
    expect(root.text).toContain('&quot;&gt;&lt;img src=x onerror=alert(4)&gt;.txt');
    expect(root.text).toContain(`href="/acme/tools/-/blob/main/${encodeURIComponent(HOSTILE_NAME)}"`);
    const named = await page(`/acme/tools/-/blob/main/${encodeURIComponent(HOSTILE_NAME)}`);
    expect(named.status).toBe(200);
  });

  it('shows commits, a commit with its diff, branches, tags and releases', async () => {
    const commits = await page('/acme/tools/-/commits/main');
    expect(commits.status).toBe(200);
    expect(commits.text).toContain(`href="/acme/tools/-/commit/${sha}"`);
    expect(commits.text).toContain('First &lt;script&gt;');
    const commit = await page(`/acme/tools/-/commit/${sha}`);
    expect(commit.status).toBe(200);
    expect(commit.text).toContain('src/main.ts');
    expect(commit.text).toContain('class="add"');
    for (const [path, text] of [
      ['/acme/tools/-/branches', 'href="/acme/tools/-/tree/main"'],
      ['/acme/tools/-/tags', 'href="/acme/tools/-/tree/v1.0"'],
      ['/acme/tools/-/releases', 'First &lt;script&gt;alert(7)&lt;/script&gt; release'],
      ['/acme/tools/-/releases/v1.0', '>One<'],
      ['/acme/tools/-/commits/main/src', `/-/commit/${sha}`],
    ]) {
      const res = await page(path);
      expect([path, res.status]).toEqual([path, 200]);
      expect(res.text).toContain(text);
    }
  });

  it("answers the web_url forms the API and push hooks write, and GitLab's old paths by redirect", async () => {
    const oldCommit = await page(`/acme/tools/commit/${sha}`);
    expect(oldCommit.status).toBe(301);
    expect(oldCommit.headers.location).toBe(`/acme/tools/-/commit/${sha}`);
    const oldTree = await page('/acme/tools/tree/main/src?x=1');
    expect(oldTree.headers.location).toBe('/acme/tools/-/tree/main/src?x=1');
    const g = await page(local(group.web_url));
    expect(g.status).toBe(200);
    expect(g.text).toContain('href="/acme/tools"');
    expect((await page('/acme')).headers.location).toBe('/groups/acme');
    const user = (await t.http().get(`/api/v4/users/${owner.id}`).set(root())).body;
    const u = await page(local(user.web_url));
    expect(u.status).toBe(200);
    expect(u.text).toContain(owner.username);
    expect(u.text).not.toContain('Secret');
    const release = (await t.http().get(`/api/v4/projects/${pub.id}/releases/v1.0`).set(root())).body;
    expect((await page(local(release.commit.web_url))).status).toBe(200);
    expect((await page(local(release._links.self))).status).toBe(200);
  });

  it('lists public projects on the home page, newest activity first, with search', async () => {
    const home = await page('/');
    expect(home.status).toBe(200);
    expect(home.text).toContain('href="/acme/tools"');
    expect(home.text).not.toContain('Secret');
    expect(home.text).not.toContain('Inside');
    expect(home.text).toContain('/api/docs');
    const none = await page('/?search=nothing-like-this');
    expect(none.text).not.toContain('href="/acme/tools"');
  });

  it('answers what a visitor may not see with the same 404 page as what does not exist', async () => {
    const normalize = (text: string, path: string) => text.split(encodeURIComponent(path)).join('PATH');
    const hidden = await page(local(priv.web_url));
    const missing = await page(`/${owner.username}/no-such-project`);
    expect(hidden.status).toBe(404);
    expect(missing.status).toBe(404);
    expect(hidden.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(normalize(hidden.text, new URL(priv.web_url).pathname)).toBe(
      normalize(missing.text, `/${owner.username}/no-such-project`),
    );
    await expectNotFound([
      `${new URL(priv.web_url).pathname}/-/tree/${priv.default_branch}`,
      `${new URL(priv.web_url).pathname}/-/raw/${priv.default_branch}/README.md`,
      `${new URL(internal.web_url).pathname}`,
      '/acme/tools/-/blob/main/nothing.txt',
      '/acme/tools/-/tree/no-such-ref',
      '/acme/tools/-/nothing',
    ]);
  });

  it("keeps the API's JSON 404 for clients that do not ask for HTML, and never shadows the API or health", async () => {
    const res = await t.http().get('/nothing').set('Accept', 'application/json');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: '404 Not Found' });
    expect((await t.http().get('/api/v4/nothing').set(HTML)).headers['content-type']).toBe('application/json');
    expect((await t.http().get('/-/health').set(HTML)).status).toBe(200);
    expect((await t.http().get('/api/v4/projects/acme%2Ftools').set(HTML)).body.id).toBe(pub.id);
  });

  it('signs in with a password: an HttpOnly SameSite=Strict cookie, private and internal projects shown, a block ends it', async () => {
    const res = await t
      .http()
      .post('/users/sign_in')
      .set('Origin', 'http://lode.test')
      .type('form')
      .send({ login: owner.username, password: 'secret-password', return_to: '/acme/tools' });
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/acme/tools');
    const setCookie = String(res.headers['set-cookie']);
    expect(setCookie).toMatch(/^lode_session=[\w-]{40,}; Path=\/; Max-Age=28800; HttpOnly; SameSite=Strict$/);
    const cookie = setCookie.split(';')[0];
    const secret = await page(local(priv.web_url), cookie);
    expect(secret.status).toBe(200);
    expect(secret.headers['cache-control']).toBe('private, no-store');
    expect((await page(local(internal.web_url), cookie)).status).toBe(200);
    expect((await page('/', cookie)).text).toContain('Inside');
    expect(
      (await page(`${new URL(priv.web_url).pathname}/-/blob/${priv.default_branch}/README.md`, cookie)).status,
    ).toBe(200);
    // The outsider sees the internal project, not the private one.
    const other = await signIn(outsider.email, 'secret-password');
    expect((await page(local(internal.web_url), other)).status).toBe(200);
    expect((await page(local(priv.web_url), other)).status).toBe(404);
    expect((await t.http().post(`/api/v4/users/${owner.id}/block`).set(root())).status).toBe(201);
    const blocked = await page(local(priv.web_url), cookie);
    expect(blocked.status).toBe(404);
    expect(String(blocked.headers['set-cookie'])).toContain('lode_session=; Path=/; Max-Age=0');
    await t.http().post(`/api/v4/users/${owner.id}/unblock`).set(root());
    // Unblocking does not bring the session back: the cookie was cleared, and the browser signs in again.
    expect((await page(local(priv.web_url), await signIn(owner.username, 'secret-password'))).status).toBe(200);
  });

  it('reads a page as the owner of a PRIVATE-TOKEN or Bearer token sent instead of a cookie', async () => {
    const path = local(priv.web_url);
    expect((await page(path).set('PRIVATE-TOKEN', owner.token)).status).toBe(200);
    expect((await page(path).set('Authorization', `Bearer ${owner.token}`)).status).toBe(200);
    expect((await page(path).set('PRIVATE-TOKEN', outsider.token)).status).toBe(404);
    expect((await page(path).set('PRIVATE-TOKEN', 'not-a-token')).status).toBe(404);
    expect((await page(`${path}?private_token=${owner.token}`)).status).toBe(404);
  });

  it('signs in with a token; revoking the token ends the session; sign-out ends it too', async () => {
    const token = await t
      .http()
      .post(`/api/v4/users/${owner.id}/impersonation_tokens`)
      .set(root())
      .send({ name: 'web', scopes: ['api'] });
    const cookie = await signIn('', token.body.token);
    expect((await page(local(priv.web_url), cookie)).status).toBe(200);
    await t.http().delete(`/api/v4/users/${owner.id}/impersonation_tokens/${token.body.id}`).set(root());
    expect((await page(local(priv.web_url), cookie)).status).toBe(404);
    const again = await signIn(owner.username, 'secret-password');
    const out = await t.http().post('/users/sign_out').set('Origin', 'http://lode.test').set('Cookie', again);
    expect(out.status).toBe(303);
    expect((await page(local(priv.web_url), again)).status).toBe(404);
  });

  it('refuses a wrong password, a token without api scope, and a form from another origin', async () => {
    const wrong = await t
      .http()
      .post('/users/sign_in')
      .set('Origin', 'http://lode.test')
      .type('form')
      .send({ login: owner.username, password: 'wrong-password' });
    expect(wrong.status).toBe(401);
    expect(wrong.headers['set-cookie']).toBeUndefined();
    expect(wrong.text).toContain('Invalid login or password.');
    const readUser = await t
      .http()
      .post(`/api/v4/users/${owner.id}/impersonation_tokens`)
      .set(root())
      .send({ name: 'ru', scopes: ['read_user'] });
    const scoped = await t
      .http()
      .post('/users/sign_in')
      .set('Origin', 'http://lode.test')
      .type('form')
      .send({ password: readUser.body.token });
    expect(scoped.status).toBe(401);
    for (const origin of ['http://evil.example', undefined]) {
      const req = t.http().post('/users/sign_in').type('form');
      const res = await (origin ? req.set('Origin', origin) : req).send({
        login: owner.username,
        password: 'secret-password',
      });
      expect(res.status).toBe(403);
      expect(res.headers['set-cookie']).toBeUndefined();
    }
  });

  /** A download as bytes, the way curl asks (no HTML in Accept). */
  const download = (path: string, headers: Record<string, string> = {}) =>
    t
      .http()
      .get(path)
      .set(headers)
      .buffer(true)
      .parse((res, cb) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => cb(null, Buffer.concat(chunks)));
      });

  it("serves a release's sources at GitLab's /-/archive/ path, the top directory as GitLab names it", async () => {
    await t
      .http()
      .post(`/api/v4/projects/${pub.id}/repository/tags`)
      .set(as(owner))
      .send({ tag_name: 'rel/2', ref: 'main' });
    await t.http().post(`/api/v4/projects/${pub.id}/releases`).set(as(owner)).send({ tag_name: 'rel/2', name: 'Two' });
    const magic: Record<string, string> = { zip: '504b0304', 'tar.gz': '1f8b', 'tar.bz2': '425a68' };
    for (const tag of ['v1.0', 'rel/2']) {
      const release = (
        await t
          .http()
          .get(`/api/v4/projects/${pub.id}/releases/${encodeURIComponent(tag)}`)
          .set(root())
      ).body;
      const sources = release.assets.sources as { format: string; url: string }[];
      expect(sources.map((s) => s.format)).toEqual(['zip', 'tar.gz', 'tar.bz2', 'tar']);
      for (const { format, url } of sources) {
        const res = await download(local(url));
        expect([url, res.status]).toEqual([url, 200]);
        expect(res.headers['content-type']).toBe('application/octet-stream');
        const name = `tools-${tag.replace('/', '-')}`;
        expect(res.headers['content-disposition']).toBe(`attachment; filename="${name}.${format}"`);
        const body = res.body as Buffer;
        expect(Number(res.headers['content-length'])).toBe(body.length);
        // The file name is the release's short name, so the top directory has no commit id (GitLab's append_sha false).
        if (format === 'tar') expect(body.includes(`${name}/README.md`)).toBe(true);
        else expect(body.subarray(0, magic[format].length / 2).toString('hex')).toBe(magic[format]);
      }
    }
    // Any other file name keeps the commit id in the top directory; GitLab's other format names are served too.
    const other = await download('/acme/tools/-/archive/main/anything.tar');
    expect(other.status).toBe(200);
    expect((other.body as Buffer).includes(`tools-main-${sha}/README.md`)).toBe(true);
    const tbz = await download('/acme/tools/-/archive/v1.0/tools-v1.0.tbz2');
    expect((tbz.body as Buffer).subarray(0, 3).toString('latin1')).toBe('BZh');
    expect(tbz.headers['content-disposition']).toBe('attachment; filename="tools-v1.0.tar.bz2"');
    // The archive's ETag answers 304, as the API's archive does.
    const zip = await download('/acme/tools/-/archive/v1.0/tools-v1.0.zip');
    expect(zip.headers.etag).toMatch(/^"[0-9a-f]{32}"$/);
    const again = await download('/acme/tools/-/archive/v1.0/tools-v1.0.zip', { 'If-None-Match': zip.headers.etag });
    expect(again.status).toBe(304);
    // A private project's archive: the owner gets it, anyone else the same 404 as for what does not exist.
    const privPath = new URL(priv.web_url).pathname;
    const privArchive = `${privPath}/-/archive/${priv.default_branch}/secret-${priv.default_branch}.zip`;
    expect((await download(privArchive, as(owner))).status).toBe(200);
    const hidden = await page(privArchive);
    const missing = await page(`/${owner.username}/no-such-project/-/archive/main/x.zip`);
    expect([hidden.status, missing.status]).toEqual([404, 404]);
    expect(hidden.text.length).toBeGreaterThan(0);
    await expectNotFound([
      '/acme/tools/-/archive/v1.0/tools-v1.0.rar',
      '/acme/tools/-/archive/no-such-ref/tools-no-such-ref.zip',
      '/acme/tools/-/archive/v1.0',
      '/acme/tools/-/archive/v1.0/.zip',
    ]);
  });

  it("redirects a release asset's direct URL to its link (302), and 404s for any other file path", async () => {
    const created = await t
      .http()
      .post(`/api/v4/projects/${pub.id}/releases/v1.0/assets/links`)
      .set(as(owner))
      .send({ name: 'Linux', url: 'https://example.com/dl/tool-linux?x=1', filepath: '/bin/tool-linux' });
    expect(created.status).toBe(201);
    expect(created.body.direct_asset_url).toBe('http://lode.test/acme/tools/-/releases/v1.0/downloads/bin/tool-linux');
    const res = await page(local(created.body.direct_asset_url));
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('https://example.com/dl/tool-linux?x=1');
    expect((await download(local(created.body.direct_asset_url))).status).toBe(302);
    await expectNotFound([
      '/acme/tools/-/releases/v1.0/downloads/bin/other',
      '/acme/tools/-/releases/v1.0/downloads/bin',
      '/acme/tools/-/releases/v9/downloads/bin/tool-linux',
      '/acme/tools/-/releases/v1.0/downloads',
    ]);
    // A private project's asset: the same 404 as for what does not exist.
    await t
      .http()
      .post(`/api/v4/projects/${priv.id}/repository/tags`)
      .set(as(owner))
      .send({ tag_name: 'p1', ref: priv.default_branch });
    const hiddenLink = await t
      .http()
      .post(`/api/v4/projects/${priv.id}/releases`)
      .set(as(owner))
      .send({ tag_name: 'p1', assets: { links: [{ name: 'a', url: 'https://example.com/a', filepath: '/a' }] } });
    expect(hiddenLink.status).toBe(201);
    const direct = local(hiddenLink.body.assets.links[0].direct_asset_url);
    expect((await page(direct)).status).toBe(404);
    expect((await page(direct).set(as(owner))).status).toBe(302);
  });

  it('counts page requests under their route template, never under their URL', async () => {
    await page('/acme/tools/-/blob/main/src/main.ts');
    await page('/acme/tools/-/tree/main/src');
    await page(`/acme/tools/-/commit/${sha}`);
    await page('/acme/tools/-/releases/v1.0');
    await page('/acme/tools');
    await page(`/${owner.username}`);
    await page('/acme/tools/-/archive/v1.0/tools-v1.0.zip');
    const values = (await t.app.get(Metrics).httpDuration.get()).values.filter(
      (v) => v.metricName === 'lode_http_request_duration_seconds_count',
    );
    const routes = new Set(values.map((v) => String(v.labels.route)));
    for (const route of [
      '/*project/-/blob/*ref_path',
      '/*project/-/tree/*ref_path',
      '/*project/-/commit/:sha',
      '/*project/-/releases/:tag',
      '/*project/-/archive/*ref/:filename',
      '/*project',
      '/:username',
    ])
      expect([route, routes.has(route)]).toEqual([route, true]);
    for (const route of routes) expect(route).not.toMatch(/acme|tools|v1\.0/);
  });

  it('answers a page addressed by a full commit id with a strong ETag per viewer, and 304 when the viewer has it', async () => {
    const paths = [
      `/acme/tools/-/blob/${sha}/src/main.ts`,
      `/acme/tools/-/tree/${sha}/src`,
      `/acme/tools/-/commit/${sha}`,
    ];
    const tags = new Set<string>();
    for (const path of paths) {
      const first = await page(path);
      expect([path, first.status]).toEqual([path, 200]);
      const etag = String(first.headers.etag);
      expect(etag).toMatch(/^"[0-9a-f]{32}"$/);
      tags.add(etag);
      const again = await page(path).set('If-None-Match', etag);
      expect([path, again.status, again.text]).toEqual([path, 304, '']);
      expect(again.headers.etag).toBe(etag);
      expect(again.headers['cache-control']).toBe('no-cache');
      expect((await page(path).set('If-None-Match', `"other", W/${etag}`)).status).toBe(304);
      expect((await page(path).set('If-None-Match', '"other"')).status).toBe(200);
      // A signed-in viewer's page (it names them) has its own tag: neither answers 304 for the other's.
      const mine = await page(path).set(as(owner));
      expect(mine.headers.etag).toMatch(/^"[0-9a-f]{32}"$/);
      expect(mine.headers.etag).not.toBe(etag);
      expect(mine.headers['cache-control']).toBe('private, no-store');
      expect((await page(path).set(as(owner)).set('If-None-Match', etag)).status).toBe(200);
      expect((await page(path).set('If-None-Match', String(mine.headers.etag))).status).toBe(200);
      expect((await page(path).set(as(owner)).set('If-None-Match', String(mine.headers.etag))).status).toBe(304);
      expect((await page(path).set(as(outsider)).set('If-None-Match', String(mine.headers.etag))).status).toBe(200);
    }
    expect(tags.size).toBe(paths.length);
    // A page addressed by a branch or a tag may change: no ETag.
    for (const path of [
      '/acme/tools/-/blob/main/src/main.ts',
      '/acme/tools/-/tree/v1.0/src',
      '/acme/tools/-/commit/main',
    ])
      expect([path, (await page(path)).headers.etag]).toEqual([path, undefined]);
    // A private project's page: its owner's tag gets anyone else the same 404 as ever, never a 304.
    const privSha = (
      await t.http().get(`/api/v4/projects/${priv.id}/repository/commits/${priv.default_branch}`).set(as(owner))
    ).body.id;
    const privPath = `${new URL(priv.web_url).pathname}/-/blob/${privSha}/README.md`;
    const owned = await page(privPath).set(as(owner));
    expect(owned.status).toBe(200);
    const tag = String(owned.headers.etag);
    expect((await page(privPath).set(as(owner)).set('If-None-Match', tag)).status).toBe(304);
    expect((await page(privPath).set('If-None-Match', tag)).status).toBe(404);
    expect((await page(privPath).set('If-None-Match', '*')).status).toBe(404);
    expect((await page(privPath).set(as(outsider)).set('If-None-Match', tag)).status).toBe(404);
  });

  it('serves the stylesheet and script from Lode with long cache headers', async () => {
    const home = await page('/');
    const css = /href="(\/-\/assets\/lode-[0-9a-f]+\.css)"/.exec(home.text)![1];
    const js = /src="(\/-\/assets\/copy-[0-9a-f]+\.js)"/.exec(home.text)![1];
    const style = await t.http().get(css);
    expect(style.status).toBe(200);
    expect(style.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(style.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect((await t.http().get(js)).headers['content-type']).toBe('text/javascript; charset=utf-8');
  });
});
