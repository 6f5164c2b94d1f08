import { repositoryPath } from '@app/git';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { git, gitOk } from '../support/git';
import { createToken, createUser, type SeededUser } from '../support/seed';
import { startTestApp, type TestApp } from '../support/test-app';

describe('git over smart HTTP', () => {
  let t: TestApp;
  let base: string;
  let owner: SeededUser;
  let developer: SeededUser;
  let reporter: SeededUser;
  let stranger: SeededUser;
  let pub: { id: number; path_with_namespace: string };
  let priv: { id: number; path_with_namespace: string };
  const dirs: string[] = [];
  const tmp = () => {
    const d = mkdtempSync(join(tmpdir(), 'lode-git-'));
    dirs.push(d);
    return d;
  };
  const url = (path: string, token?: string) => `http://${token ? `git:${token}@` : ''}${base}/${path}.git`;
  const api = (token: string) => ({
    post: (path: string) => t.http().post(`/api/v4${path}`).set('PRIVATE-TOKEN', token),
  });

  /** A fresh clone of `remote` with one more commit on `branch`, pushed; returns the new HEAD. */
  async function commitAndPush(remote: string, file: string, branch = 'master'): Promise<string> {
    const dir = tmp();
    await gitOk(['clone', '--quiet', remote, dir]);
    await gitOk(['checkout', '-q', '-B', branch], dir);
    writeFileSync(join(dir, file), `${file} ${Date.now()}\n`);
    await gitOk(['add', '.'], dir);
    await gitOk(['commit', '-q', '-m', `add ${file}`], dir);
    await gitOk(['push', '-q', 'origin', branch], dir);
    return (await gitOk(['rev-parse', 'HEAD'], dir)).trim();
  }

  beforeAll(async () => {
    // Developers push first into empty projects here: GitLab's default protection (2) would refuse
    // that; the protected-branch suites cover it, and the gate over HTTP below.
    t = await startTestApp({ defaultBranchProtection: 0 });
    await t.app.listen(0, '127.0.0.1');
    const address = t.app.getHttpServer().address() as AddressInfo;
    base = `127.0.0.1:${address.port}`;
    owner = await createUser(t);
    developer = await createUser(t);
    reporter = await createUser(t);
    stranger = await createUser(t);
    pub = (await api(owner.token).post('/projects').send({ name: 'Open', visibility: 'public' })).body;
    priv = (await api(owner.token).post('/projects').send({ name: 'Closed', visibility: 'private' })).body;
    for (const p of [pub, priv]) {
      for (const [u, level] of [
        [developer, 30],
        [reporter, 20],
      ] as const) {
        const res = await api(owner.token)
          .post(`/projects/${p.id}/members`)
          .send({ user_id: u.id, access_level: level });
        expect(res.status).toBe(201);
      }
    }
  });
  afterAll(async () => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    await t.close();
  });

  it('clones an empty public repository anonymously', async () => {
    const r = await git(['clone', url(pub.path_with_namespace), join(tmp(), 'c')]);
    expect(r.status).toBe(0);
    expect(r.out).toMatch(/empty repository/);
  });

  it('pushes with a developer token, and the clone has the same HEAD (also without .git)', async () => {
    const head = await commitAndPush(url(pub.path_with_namespace, developer.token), 'README.md');
    const dir = join(tmp(), 'c');
    await gitOk(['clone', '--quiet', `http://${base}/${pub.path_with_namespace}`, dir]);
    expect((await gitOk(['rev-parse', 'HEAD'], dir)).trim()).toBe(head);
    // Protocol v2 is spoken (GIT_PROTOCOL is passed to the CGI).
    expect(await gitOk(['-c', 'protocol.version=2', 'ls-remote', url(pub.path_with_namespace)])).toContain(head);
  });

  it('refuses an anonymous push with 401 and the Basic challenge', async () => {
    const dir = join(tmp(), 'c');
    await gitOk(['clone', '--quiet', url(pub.path_with_namespace), dir]);
    const r = await git(['push', url(pub.path_with_namespace), 'HEAD:refs/heads/x'], dir);
    expect(r.status).not.toBe(0);
    expect(r.out).toMatch(/could not read Username|Authentication failed|401/);
    const res = await fetch(`http://${base}/${pub.path_with_namespace}.git/info/refs?service=git-receive-pack`);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Basic realm="Lode"');
  });

  it('challenges anonymous clones of private projects, lets members clone and hides it from others', async () => {
    const res = await fetch(`http://${base}/${priv.path_with_namespace}.git/info/refs?service=git-upload-pack`);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Basic realm="Lode"');
    expect((await git(['clone', url(priv.path_with_namespace), join(tmp(), 'c')])).status).not.toBe(0);

    const head = await commitAndPush(url(priv.path_with_namespace, developer.token), 'secret.txt');
    const dir = join(tmp(), 'c');
    await gitOk(['clone', '--quiet', url(priv.path_with_namespace, reporter.token), dir]);
    expect((await gitOk(['rev-parse', 'HEAD'], dir)).trim()).toBe(head);

    const other = await fetch(`http://${base}/${priv.path_with_namespace}.git/info/refs?service=git-upload-pack`, {
      headers: { authorization: `Basic ${Buffer.from(`x:${stranger.token}`).toString('base64')}` },
    });
    expect(other.status).toBe(404);
    const r = await git(['clone', url(priv.path_with_namespace, stranger.token), join(tmp(), 'c')]);
    expect(r.status).not.toBe(0);
    expect(r.out).toMatch(/not found/i);
  });

  it('answers 401 for a wrong token', async () => {
    const res = await fetch(`http://${base}/${pub.path_with_namespace}.git/info/refs?service=git-upload-pack`, {
      headers: { authorization: `Basic ${Buffer.from('x:nope').toString('base64')}` },
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Basic realm="Lode"');
  });

  it('refuses pushes from reporters and into archived projects (403), and tokens without the api scope (401)', async () => {
    const pushAs = async (token: string, path = pub.path_with_namespace) => {
      const dir = join(tmp(), 'c');
      await gitOk(['clone', '--quiet', url(path), dir]);
      writeFileSync(join(dir, 'f.txt'), 'x\n');
      await gitOk(['add', '.'], dir);
      await gitOk(['commit', '-q', '-m', 'f'], dir);
      return await git(['push', url(path, token), 'HEAD:refs/heads/master'], dir);
    };
    const byReporter = await pushAs(reporter.token);
    expect(byReporter.status).not.toBe(0);
    expect(byReporter.out).toMatch(/403/);

    const readUser = await createToken(t, developer.id, ['read_user']);
    const byScope = await pushAs(readUser);
    expect(byScope.status).not.toBe(0);
    expect(byScope.out).toMatch(/Authentication failed|401/);
    // Cloning with it is refused the same way: GitLab treats the token as no credentials (401, challenge).
    const res = await fetch(`http://${base}/${priv.path_with_namespace}.git/info/refs?service=git-upload-pack`, {
      headers: { authorization: `Basic ${Buffer.from(`x:${readUser}`).toString('base64')}` },
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Basic realm="Lode"');

    const archived = (await api(owner.token).post('/projects').send({ name: 'Old', visibility: 'public' })).body;
    await commitAndPush(url(archived.path_with_namespace, owner.token), 'a.txt');
    expect((await api(owner.token).post(`/projects/${archived.id}/archive`)).status).toBe(201);
    const intoArchived = await pushAs(owner.token, archived.path_with_namespace);
    expect(intoArchived.status).not.toBe(0);
    expect(intoArchived.out).toMatch(/403/);
    // Cloning an archived project still works.
    await gitOk(['clone', '--quiet', url(archived.path_with_namespace), join(tmp(), 'c')]);
  });

  it('serves shallow clones', async () => {
    await commitAndPush(url(pub.path_with_namespace, developer.token), 'second.txt');
    const dir = join(tmp(), 'c');
    await gitOk(['clone', '--quiet', '--depth', '1', url(pub.path_with_namespace), dir]);
    expect((await gitOk(['rev-list', '--count', 'HEAD'], dir)).trim()).toBe('1');
    expect((await gitOk(['rev-parse', '--is-shallow-repository'], dir)).trim()).toBe('true');
  });

  it('creates and deletes a branch, and pushes tags', async () => {
    const remote = url(pub.path_with_namespace, developer.token);
    const head = await commitAndPush(remote, 'feature.txt', 'feature');
    expect(await gitOk(['ls-remote', '--heads', remote])).toContain(`${head}\trefs/heads/feature`);
    const dir = join(tmp(), 'c');
    await gitOk(['clone', '--quiet', remote, dir]);
    await gitOk(['push', '-q', 'origin', '--delete', 'feature'], dir);
    expect(await gitOk(['ls-remote', '--heads', remote])).not.toContain('refs/heads/feature');

    await gitOk(['tag', 'v1.0'], dir);
    await gitOk(['tag', '-a', 'v1.1', '-m', 'release'], dir);
    await gitOk(['push', '-q', 'origin', '--tags'], dir);
    const tags = await gitOk(['ls-remote', '--tags', remote]);
    expect(tags).toContain('refs/tags/v1.0');
    expect(tags).toContain('refs/tags/v1.1');
  });

  /**
   * What `git http-backend` itself answers (run as the CGI it is, on the same repository): its
   * headers and body. Lode starts the services without it and must answer the same.
   */
  function httpBackend(
    projectId: number,
    method: 'GET' | 'POST',
    pathInfo: string,
    query: string,
    protocol = '',
    body?: Buffer,
  ): { headers: Record<string, string>; body: Buffer } {
    const repo = repositoryPath(t.config.dataDir, projectId);
    const out = spawnSync('/usr/lib/git-core/git-http-backend', [], {
      input: body,
      env: {
        PATH: process.env.PATH,
        GIT_PROJECT_ROOT: dirname(repo),
        PATH_INFO: `/${basename(repo)}/${pathInfo}`,
        GIT_HTTP_EXPORT_ALL: '1',
        QUERY_STRING: query,
        REQUEST_METHOD: method,
        REMOTE_USER: 'git',
        GIT_PROTOCOL: protocol,
        ...(body ? { CONTENT_TYPE: 'application/x-git-upload-pack-request', CONTENT_LENGTH: String(body.length) } : {}),
      },
    }).stdout;
    const end = out.indexOf('\r\n\r\n');
    const headers: Record<string, string> = {};
    for (const line of out.subarray(0, end).toString().split('\r\n')) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
    }
    return { headers, body: out.subarray(end + 4) };
  }

  it('answers the advertisements and an upload-pack request byte for byte as git http-backend does, with its headers', async () => {
    await commitAndPush(url(pub.path_with_namespace, developer.token), 'advertised.txt');
    const auth = { Authorization: `Basic ${Buffer.from(`git:${developer.token}`).toString('base64')}` };
    for (const [service, protocol] of [
      ['git-upload-pack', ''],
      ['git-upload-pack', 'version=2'],
      ['git-receive-pack', ''],
    ] as const) {
      const query = `service=${service}`;
      const res = await fetch(`http://${base}/${pub.path_with_namespace}.git/info/refs?${query}`, {
        headers: { ...auth, ...(protocol ? { 'Git-Protocol': protocol } : {}) },
      });
      const git = httpBackend(pub.id, 'GET', 'info/refs', query, protocol);
      expect(res.status).toBe(200);
      for (const h of ['content-type', 'cache-control', 'pragma', 'expires'])
        expect([h, res.headers.get(h)]).toEqual([h, git.headers[h]]);
      const body = Buffer.from(await res.arrayBuffer());
      expect(body.toString()).toBe(git.body.toString());
      // v0 starts with the service's name; v2 with its version line.
      expect(body.toString()).toMatch(
        protocol ? /^000eversion 2\n/ : new RegExp(`^[0-9a-f]{4}# service=${service}\n0000`),
      );
    }
    // A protocol v2 ls-refs request, plain and gzipped (git gzips its larger requests).
    const lsRefs = Buffer.from('0014command=ls-refs\n00010009peel\n0000');
    const git = httpBackend(pub.id, 'POST', 'git-upload-pack', '', 'version=2', lsRefs);
    expect(git.body.toString()).toContain(' refs/heads/master\n');
    for (const gzipped of [false, true]) {
      const res = await fetch(`http://${base}/${pub.path_with_namespace}.git/git-upload-pack`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/x-git-upload-pack-request',
          'Git-Protocol': 'version=2',
          ...(gzipped ? { 'Content-Encoding': 'gzip' } : {}),
        },
        body: gzipped ? gzipSync(lsRefs) : lsRefs,
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe(git.headers['content-type']);
      expect(res.headers.get('cache-control')).toBe(git.headers['cache-control']);
      expect(Buffer.from(await res.arrayBuffer()).toString()).toBe(git.body.toString());
    }
  });

  it("refuses a service request of the wrong content type (415, git http-backend's words) and a body that is not gzip (400)", async () => {
    const wrongType = await fetch(`http://${base}/${pub.path_with_namespace}.git/git-upload-pack`, {
      method: 'POST',
      headers: { 'Content-Type': 'text/plain' },
      body: '0000',
    });
    expect(wrongType.status).toBe(415);
    expect(await wrongType.text()).toBe(
      "Expected POST with Content-Type 'application/x-git-upload-pack-request', but received 'text/plain' instead.\n",
    );
    const notGzip = await fetch(`http://${base}/${pub.path_with_namespace}.git/git-upload-pack`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-git-upload-pack-request', 'Content-Encoding': 'gzip' },
      body: 'not gzip at all',
    });
    expect(notGzip.status).toBe(400);
    // The server goes on serving.
    await gitOk(['ls-remote', url(pub.path_with_namespace)]);
  });

  it('leaves the API alone', async () => {
    const res = await t.http().get(`/api/v4/projects/${pub.id}`);
    expect(res.status).toBe(200);
    // The dumb protocol is not served.
    expect((await fetch(`http://${base}/${pub.path_with_namespace}.git/info/refs`)).status).toBe(403);
  });
});
