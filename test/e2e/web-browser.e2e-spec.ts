import type { Browser } from 'puppeteer-core';
import { describeInBrowser, launchBrowser, screenshot, watchedPage } from '../support/browser';
import { createUser, type SeededUser } from '../support/seed';
import { freePort, startTestApp, type TestApp } from '../support/test-app';

/**
 * The web pages in headless Chromium: an anonymous visitor browses a public project to a file, a
 * commit and back; a hostile README, SVG and file name run no script (checked by the browser: no
 * dialog, no page error); signing in through the form shows a private project; blocking the user
 * ends the session. Each page is photographed at 360 px and on a desktop under test-artifacts/web/.
 */
describeInBrowser('web pages in a browser', () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;
  let owner: SeededUser;
  let priv: { web_url: string };
  let sha: string;
  const root = () => ({ 'PRIVATE-TOKEN': t.rootToken });

  beforeAll(async () => {
    t = await startTestApp();
    const port = await freePort();
    await t.app.listen(port, '127.0.0.1');
    base = `http://127.0.0.1:${port}`;
    owner = await createUser(t, { username: 'ada' });
    const pub = (
      await t
        .http()
        .post('/api/v4/projects')
        .set('PRIVATE-TOKEN', owner.token)
        .send({ name: 'Engine', path: 'engine', visibility: 'public', description: 'The analytical engine' })
    ).body;
    const commit = await t
      .http()
      .post(`/api/v4/projects/${pub.id}/repository/commits`)
      .set('PRIVATE-TOKEN', owner.token)
      .send({
        branch: 'main',
        commit_message: 'Notes on the engine',
        actions: [
          {
            action: 'create',
            file_path: 'README.md',
            content: [
              '# Engine <script>alert("readme")</script>',
              '',
              '<img src=x onerror="alert(1)"> <iframe src="javascript:alert(2)"></iframe>',
              '',
              '[run](javascript:alert(3)) and the [notes](notes/bernoulli.md).',
              '',
              '| step | value |',
              '| --- | --- |',
              '| 1 | B1 |',
            ].join('\n'),
          },
          { action: 'create', file_path: 'notes/bernoulli.md', content: '# Note G\n\nBernoulli numbers.' },
          {
            action: 'create',
            file_path: 'src/engine.ts',
            content: 'export function add(a: number, b: number) {\n  return a + b;\n}\n',
          },
          {
            action: 'create',
            file_path: 'diagram.svg',
            content: '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(4)"><script>alert(5)</script></svg>',
          },
          { action: 'create', file_path: '<img src=x onerror=alert(6)>.md', content: '<script>alert(7)</script>' },
        ],
      });
    sha = commit.body.id;
    priv = (
      await t
        .http()
        .post('/api/v4/projects')
        .set('PRIVATE-TOKEN', owner.token)
        .send({ name: 'Ledger', path: 'ledger', visibility: 'private', initialize_with_readme: true })
    ).body;
    browser = await launchBrowser();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('lets an anonymous visitor browse a project to a file, a commit and back, running no hostile script', async () => {
    for (const [width, label] of [
      [1280, 'desktop'],
      [360, 'mobile'],
    ] as const) {
      const { page, dialogs, errors } = await watchedPage(browser, width);
      await page.goto(`${base}/`);
      await screenshot(page, `home-${label}`);
      await Promise.all([page.waitForNavigation(), page.click('a[href="/ada/engine"]')]);
      expect(await page.title()).toBe('Engine · Lode');
      expect(await page.$eval('.readme h1', (h) => h.textContent)).toBe('Engine <script>alert("readme")</script>');
      expect(await page.$$eval('.readme table td', (cells) => cells.map((c) => c.textContent))).toEqual(['1', 'B1']);
      // The copy script ran (it shows the buttons), from Lode's own origin.
      expect(await page.$eval('button[data-copy="clone-http"]', (b) => (b as HTMLButtonElement).hidden)).toBe(false);
      expect(await page.$$eval('.readme a', (as) => as.map((a) => a.getAttribute('href')))).toEqual([
        '/ada/engine/-/blob/main/notes/bernoulli.md',
      ]);
      await screenshot(page, `project-${label}`);
      await Promise.all([page.waitForNavigation(), page.click('a[href="/ada/engine/-/tree/main/src"]')]);
      await Promise.all([page.waitForNavigation(), page.click('a[href="/ada/engine/-/blob/main/src/engine.ts"]')]);
      expect(await page.$eval('pre code', (c) => c.textContent)).toContain('return a + b;');
      expect(await page.$$eval('pre code .hljs-keyword', (k) => k.length)).toBeGreaterThan(0);
      await screenshot(page, `blob-${label}`);
      await page.goto(`${base}/ada/engine/-/blob/main/diagram.svg`);
      expect(await page.$$eval('svg', (s) => s.length)).toBe(0);
      await Promise.all([page.waitForNavigation(), page.click('nav.tabs a[href="/ada/engine/-/commits/main"]')]);
      await screenshot(page, `commits-${label}`);
      await Promise.all([page.waitForNavigation(), page.click(`a[href="/ada/engine/-/commit/${sha}"]`)]);
      expect(await page.$eval('h2', (h) => h.textContent)).toBe('Notes on the engine');
      expect(await page.$$eval('.diff', (d) => d.length)).toBe(5);
      await screenshot(page, `commit-${label}`);
      await page.goBack();
      await page.goBack();
      expect(page.url()).toBe(`${base}/ada/engine/-/blob/main/diagram.svg`);
      await page.goto(`${base}/ada/engine/-/blob/main/${encodeURIComponent('<img src=x onerror=alert(6)>.md')}`);
      await page.goto(`${base}/ada/engine/-/blob/main/notes/bernoulli.md`);
      expect(await page.$eval('.readme h1', (h) => h.textContent)).toBe('Note G');
      await page.goto(`${base}/ada/engine/-/raw/main/diagram.svg`);
      await page.goto(`${base}/ada`);
      await screenshot(page, `user-${label}`);
      const missing = await page.goto(`${base}${new URL(priv.web_url).pathname}`);
      expect(missing?.status()).toBe(404);
      await screenshot(page, `not-found-${label}`);
      expect(dialogs).toEqual([]);
      expect(errors).toEqual([]);
      await page.close();
    }
  }, 120_000);

  it('signs in through the form to see a private project; blocking the user ends the session', async () => {
    const { page, dialogs } = await watchedPage(browser, 360);
    await page.goto(`${base}${new URL(priv.web_url).pathname}`);
    await Promise.all([page.waitForNavigation(), page.click('header a[href^="/users/sign_in"]')]);
    await screenshot(page, 'sign-in-mobile');
    await page.type('#login', 'ada');
    await page.type('#password', 'secret-password');
    await Promise.all([page.waitForNavigation(), page.click('form.signin button[type="submit"]')]);
    expect(page.url()).toBe(`${base}/ada/ledger`);
    expect(await page.title()).toBe('Ledger · Lode');
    const cookies = await browser.cookies();
    const session = cookies.find((c) => c.name === 'lode_session');
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
    await screenshot(page, 'private-project-mobile');
    expect((await t.http().post(`/api/v4/users/${owner.id}/block`).set(root())).status).toBe(201);
    const after = await page.reload();
    expect(after?.status()).toBe(404);
    expect(await page.$eval('header', (h) => h.textContent)).toContain('Sign in');
    expect(dialogs).toEqual([]);
    await page.close();
  }, 60_000);
});
