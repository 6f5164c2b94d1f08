import { repositoryPath } from '@app/git';
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gitOk, tempDirs } from '../support/git';
import { createUser, type SeededUser } from '../support/seed';
import { startTestApp, type TestApp } from '../support/test-app';
import { bytes } from '../support/bytes';

describe('repository reads (tree, blobs, raw, compare, contributors, branches)', () => {
  let t: TestApp;
  let owner: SeededUser;
  let guest: SeededUser;
  let reporter: SeededUser;
  let pub: { id: number };
  let priv: { id: number };
  let empty: { id: number };
  const tmp = tempDirs();
  const sha: Record<string, string> = {};
  const binary = Buffer.from([0, 1, 2, 3, 255, 254, 0, 10, 13, 0x89, 0x50]);
  let work: string;

  const as = (token?: string) => ({
    get: (path: string) => {
      const r = t.http().get(`/api/v4${path}`);
      return token ? r.set('PRIVATE-TOKEN', token) : r;
    },
  });
  const commit = async (message: string, env: Record<string, string> = {}) => {
    await gitOk(['add', '-A'], work);
    await gitOk(['commit', '-q', '-m', message], work, env);
    return (await gitOk(['rev-parse', 'HEAD'], work)).trim();
  };

  beforeAll(async () => {
    t = await startTestApp({ compareMaxFiles: 1000 });
    owner = await createUser(t);
    guest = await createUser(t);
    reporter = await createUser(t);
    const post = (path: string, body: object) =>
      t.http().post(`/api/v4${path}`).set('PRIVATE-TOKEN', owner.token).send(body);
    pub = (await post('/projects', { name: 'Readable', visibility: 'public' })).body;
    priv = (await post('/projects', { name: 'Hidden', visibility: 'private' })).body;
    empty = (await post('/projects', { name: 'Nothing', visibility: 'public' })).body;
    await post(`/projects/${priv.id}/members`, { user_id: guest.id, access_level: 10 });
    await post(`/projects/${priv.id}/members`, { user_id: reporter.id, access_level: 20 });

    work = tmp.make();
    await gitOk(['init', '-q', '-b', 'master', work]);
    mkdirSync(join(work, 'src/lib'), { recursive: true });
    writeFileSync(join(work, 'README.md'), '# Readable\n');
    writeFileSync(join(work, 'src/main.ts'), 'console.log(1);\n');
    writeFileSync(join(work, 'src/lib/util.ts'), 'export const a = 1;\nexport const b = 2;\n');
    writeFileSync(join(work, 'logo.bin'), binary);
    writeFileSync(join(work, 'run.sh'), '#!/bin/sh\necho hi\n');
    chmodSync(join(work, 'run.sh'), 0o755);
    symlinkSync('README.md', join(work, 'link'));
    writeFileSync(join(work, 'page.html'), '<script>alert(1)</script>\n');
    sha.first = await commit('first', { GIT_AUTHOR_NAME: 'Ann', GIT_AUTHOR_EMAIL: 'ann@example.com' });
    writeFileSync(join(work, 'src/lib/util.ts'), 'export const a = 1;\nexport const b = 3;\nexport const c = 4;\n');
    renameSync(join(work, 'src/main.ts'), join(work, 'src/index.ts'));
    rmSync(join(work, 'page.html'));
    writeFileSync(join(work, 'NEW.md'), 'new\n');
    sha.second = await commit('second\n\nwith a body', { GIT_AUTHOR_NAME: 'Bob', GIT_AUTHOR_EMAIL: 'bob@example.com' });
    await gitOk(['checkout', '-q', '-b', 'feature/x', sha.first], work);
    writeFileSync(join(work, 'feature.txt'), 'f\n');
    sha.feature = await commit('feature', { GIT_AUTHOR_NAME: 'Ann', GIT_AUTHOR_EMAIL: 'ann@example.com' });
    await gitOk(['checkout', '-q', 'master'], work);
    await gitOk(['branch', 'merged-one', sha.first], work);
    for (const p of [pub, priv])
      await gitOk(['push', '-q', repositoryPath(t.config.dataDir, p.id), 'master', 'feature/x', 'merged-one'], work);
  });
  afterAll(async () => {
    tmp.removeAll();
    await t.close();
  });

  it('lists the root tree: trees first, six-digit modes, paginated with GitLab headers', async () => {
    const res = await as().get(`/projects/${pub.id}/repository/tree`);
    expect(res.status).toBe(200);
    expect(res.body.map((e: { path: string }) => e.path)).toEqual([
      'src',
      'NEW.md',
      'README.md',
      'link',
      'logo.bin',
      'run.sh',
    ]);
    const byName = Object.fromEntries(res.body.map((e: { name: string }) => [e.name, e]));
    expect(byName.src).toMatchObject({ type: 'tree', mode: '040000' });
    expect(byName['README.md']).toMatchObject({
      type: 'blob',
      mode: '100644',
      id: expect.stringMatching(/^[0-9a-f]{40}$/),
    });
    expect(byName['run.sh'].mode).toBe('100755');
    expect(byName.link.mode).toBe('120000');
    expect(Object.keys(res.body[0]).sort()).toEqual(['id', 'mode', 'name', 'path', 'type']);
    expect(res.headers['x-total']).toBe('6');
    const page = await as().get(`/projects/${pub.id}/repository/tree?per_page=2&page=2`);
    expect(page.body.map((e: { name: string }) => e.name)).toEqual(['README.md', 'link']);
    expect(page.headers['x-next-page']).toBe('3');
  });

  it('lists a subdirectory, recursively, at another ref; 404 Tree Not Found for unknown refs and paths', async () => {
    const sub = await as().get(`/projects/${pub.id}/repository/tree?path=src`);
    expect(sub.body.map((e: { path: string }) => e.path)).toEqual(['src/lib', 'src/index.ts']);
    const all = await as().get(`/projects/${pub.id}/repository/tree?recursive=true&per_page=100`);
    expect(all.body.map((e: { path: string }) => e.path)).toEqual([
      'src',
      'src/lib',
      'NEW.md',
      'README.md',
      'link',
      'logo.bin',
      'run.sh',
      'src/index.ts',
      'src/lib/util.ts',
    ]);
    const feature = await as().get(`/projects/${pub.id}/repository/tree?ref=feature/x`);
    expect(feature.body.map((e: { name: string }) => e.name)).toContain('feature.txt');
    const old = await as().get(`/projects/${pub.id}/repository/tree?ref=${sha.first}&path=src`);
    expect(old.body.map((e: { name: string }) => e.name)).toEqual(['lib', 'main.ts']);
    for (const q of ['ref=nope', 'path=missing', 'path=README.md', 'ref=--output=x']) {
      const res = await as().get(`/projects/${pub.id}/repository/tree?${q}`);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ message: '404 Tree Not Found' });
    }
    expect((await as().get(`/projects/${empty.id}/repository/tree`)).status).toBe(404);
  });

  it('answers blobs as base64 and raw bytes that never run in a browser', async () => {
    const tree = (await as().get(`/projects/${pub.id}/repository/tree`)).body;
    const logo = tree.find((e: { name: string }) => e.name === 'logo.bin').id;
    const readme = tree.find((e: { name: string }) => e.name === 'README.md').id;
    const res = await as().get(`/projects/${pub.id}/repository/blobs/${readme}`);
    expect(res.body).toEqual({
      size: 11,
      encoding: 'base64',
      content: Buffer.from('# Readable\n').toString('base64'),
      sha: readme,
    });
    const raw = await as().get(`/projects/${pub.id}/repository/blobs/${logo}/raw`).buffer(true).parse(bytes);
    expect(raw.status).toBe(200);
    expect(Buffer.compare(raw.body as Buffer, binary)).toBe(0);
    expect(raw.headers).toMatchObject({
      'content-type': 'application/octet-stream',
      'x-content-type-options': 'nosniff',
      'content-security-policy': "sandbox; default-src 'none'",
    });
    const html = (await as().get(`/projects/${pub.id}/repository/tree?ref=${sha.first}`)).body.find(
      (e: { name: string }) => e.name === 'page.html',
    ).id;
    const page = await as().get(`/projects/${pub.id}/repository/blobs/${html}/raw`);
    expect(page.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(page.text).toBe('<script>alert(1)</script>\n');
    for (const bad of ['0000000000000000000000000000000000000000', 'zzz', sha.first]) {
      const r = await as().get(`/projects/${pub.id}/repository/blobs/${bad}`);
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ message: '404 Blob Not Found' });
    }
  });

  it('compares with merge-base semantics, oldest commit first, with rename and mode flags', async () => {
    const res = await as().get(`/projects/${pub.id}/repository/compare?from=${sha.first}&to=master`);
    expect(res.status).toBe(200);
    expect(res.body.commits.map((c: { id: string }) => c.id)).toEqual([sha.second]);
    expect(res.body.commit).toMatchObject({
      id: sha.second,
      short_id: sha.second.slice(0, 8),
      title: 'second',
      author_name: 'Bob',
      author_email: 'bob@example.com',
    });
    expect(res.body).toMatchObject({ compare_timeout: false, compare_same_ref: false });
    const diffs = Object.fromEntries(res.body.diffs.map((d: { new_path: string }) => [d.new_path, d]));
    expect(diffs['NEW.md']).toMatchObject({
      old_path: 'NEW.md',
      new_file: true,
      deleted_file: false,
      renamed_file: false,
      a_mode: '0',
      b_mode: '100644',
    });
    expect(diffs['NEW.md'].diff).toBe('@@ -0,0 +1 @@\n+new\n');
    expect(diffs['src/index.ts']).toMatchObject({
      old_path: 'src/main.ts',
      renamed_file: true,
      a_mode: '100644',
      b_mode: '100644',
    });
    expect(diffs['page.html']).toMatchObject({ deleted_file: true, b_mode: '0' });
    expect(diffs['src/lib/util.ts'].diff).toContain(
      '-export const b = 2;\n+export const b = 3;\n+export const c = 4;\n',
    );
    // Three dots: from the feature branch to master shows what master added since they forked.
    const across = await as().get(`/projects/${pub.id}/repository/compare?from=feature/x&to=master`);
    expect(across.body.commits.map((c: { id: string }) => c.id)).toEqual([sha.second]);
    expect(across.body.diffs.map((d: { new_path: string }) => d.new_path)).not.toContain('feature.txt');
    // Backwards: nothing.
    const back = await as().get(`/projects/${pub.id}/repository/compare?from=master&to=${sha.first}`);
    expect(back.body).toMatchObject({ commit: null, commits: [], diffs: [], compare_same_ref: false });
    const same = await as().get(`/projects/${pub.id}/repository/compare?from=master&to=${sha.second}`);
    expect(same.body).toMatchObject({ commits: [], diffs: [], compare_same_ref: true });
    // GitLab 10.x: an unknown ref is an empty comparison.
    expect((await as().get(`/projects/${pub.id}/repository/compare?from=nope&to=master`)).body).toMatchObject({
      commits: [],
      diffs: [],
    });
    const missing = await as().get(`/projects/${pub.id}/repository/compare?from=master`);
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ error: 'to is missing' });
  });

  it("prints each file's diff as git does: binary, mode change, no newline at the end, bytes not UTF-8", async () => {
    const edges = (
      await t
        .http()
        .post('/api/v4/projects')
        .set('PRIVATE-TOKEN', owner.token)
        .send({ name: 'Edges', visibility: 'public' })
    ).body;
    await gitOk(['checkout', '-q', '-b', 'edges', 'master'], work);
    try {
      writeFileSync(join(work, 'logo.bin'), Buffer.concat([binary, binary]));
      chmodSync(join(work, 'run.sh'), 0o644);
      writeFileSync(join(work, 'README.md'), '# Readable\nno newline at the end');
      writeFileSync(join(work, 'latin1.txt'), Buffer.from('caf\xe9\nsecond\n', 'latin1'));
      // A lone carriage return is inside a line: what follows it is content, however it reads.
      writeFileSync(join(work, 'cr.txt'), 'one\rdiff --git a/x b/x\ntwo\n');
      writeFileSync(join(work, 'src/lib/util.ts'), 'export const a = 1;\nexport const b = 3;\nexport const c = 5;\n');
      await commit('edges');
      await gitOk(['push', '-q', repositoryPath(t.config.dataDir, edges.id), 'master', 'edges'], work);
      const res = await as().get(`/projects/${edges.id}/repository/compare?from=master&to=edges`);
      expect(res.status).toBe(200);
      const diffs = Object.fromEntries(res.body.diffs.map((d: { new_path: string }) => [d.new_path, d]));
      expect(Object.keys(diffs).sort()).toEqual([
        'README.md',
        'cr.txt',
        'latin1.txt',
        'logo.bin',
        'run.sh',
        'src/lib/util.ts',
      ]);
      // GitLab's `diff` is git's patch from the first hunk on: what stock git prints for the file.
      for (const file of ['README.md', 'cr.txt', 'latin1.txt', 'src/lib/util.ts']) {
        const printed = await gitOk(['diff', '-M', 'master', 'edges', '--', file], work);
        expect(diffs[file].diff).toBe(printed.slice(printed.indexOf('\n@@') + 1));
      }
      expect(diffs['README.md'].diff).toBe(
        '@@ -1 +1,2 @@\n # Readable\n+no newline at the end\n\\ No newline at end of file\n',
      );
      expect(diffs['latin1.txt'].diff).toBe('@@ -0,0 +1,2 @@\n+caf\ufffd\n+second\n');
      expect(diffs['cr.txt'].diff).toBe('@@ -0,0 +1,2 @@\n+one\rdiff --git a/x b/x\n+two\n');
      // No hunk: a binary file's change and a mode change alone have an empty diff.
      expect(diffs['logo.bin']).toMatchObject({ diff: '', a_mode: '100644', b_mode: '100644' });
      expect(diffs['run.sh']).toMatchObject({ diff: '', a_mode: '100755', b_mode: '100644' });
      const commitDiff = await as().get(`/projects/${edges.id}/repository/commits/edges/diff`);
      expect(commitDiff.body.find((d: { new_path: string }) => d.new_path === 'README.md').diff).toBe(
        diffs['README.md'].diff,
      );
    } finally {
      await gitOk(['checkout', '-q', 'master'], work);
    }
  });

  it('cuts a compare at the configured limits and says so', async () => {
    const limited = await startTestApp({ compareMaxFiles: 2 });
    try {
      const root = (path: string) => limited.http().post(`/api/v4${path}`).set('PRIVATE-TOKEN', limited.rootToken);
      const p = (await root('/projects').send({ name: 'Limited', visibility: 'public' })).body;
      await gitOk(['push', '-q', repositoryPath(limited.config.dataDir, p.id), 'master'], work);
      const res = await limited.http().get(`/api/v4/projects/${p.id}/repository/compare?from=${sha.first}&to=master`);
      expect(res.status).toBe(200);
      expect(res.body.compare_timeout).toBe(true);
      expect(res.body.diffs).toHaveLength(2);
      expect(res.body.commits).toHaveLength(1);
    } finally {
      await limited.close();
    }
  });

  it('counts contributors with their real additions and deletions', async () => {
    const res = await as().get(`/projects/${pub.id}/repository/contributors`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      { name: 'Bob', email: 'bob@example.com', commits: 1, additions: 3, deletions: 2 },
      { name: 'Ann', email: 'ann@example.com', commits: 1, additions: 8, deletions: 0 },
    ]);
    expect(res.headers['x-total']).toBe('2');
    expect((await as().get(`/projects/${empty.id}/repository/contributors`)).body).toEqual([]);
  });

  it('lists branches and finds one by an encoded name with a slash', async () => {
    const res = await as().get(`/projects/${pub.id}/repository/branches`);
    expect(res.body.map((b: { name: string }) => b.name)).toEqual(['feature/x', 'master', 'merged-one']);
    const byName = Object.fromEntries(res.body.map((b: { name: string }) => [b.name, b]));
    expect(byName['merged-one'].merged).toBe(true);
    expect(byName['feature/x'].merged).toBe(false);
    expect(byName.master).toMatchObject({
      merged: false,
      protected: false,
      developers_can_push: false,
      developers_can_merge: false,
    });
    expect(byName.master.commit).toMatchObject({
      id: sha.second,
      parent_ids: [sha.first],
      message: 'second\n\nwith a body\n',
    });
    const one = await as().get(`/projects/${pub.id}/repository/branches/feature%2Fx`);
    expect(one.status).toBe(200);
    expect(one.body.commit.id).toBe(sha.feature);
    const none = await as().get(`/projects/${pub.id}/repository/branches/nope`);
    expect(none.status).toBe(404);
    expect(none.body).toEqual({ message: '404 Branch Not Found' });
    expect((await as().get(`/projects/${empty.id}/repository/branches`)).body).toEqual([]);
  });

  it('hides private repositories from strangers (404) and guests (403), and serves reporters', async () => {
    const anonymous = await as().get(`/projects/${priv.id}/repository/tree`);
    expect(anonymous.status).toBe(404);
    expect(anonymous.body).toEqual({ message: '404 Project Not Found' });
    expect((await as(guest.token).get(`/projects/${priv.id}/repository/tree`)).status).toBe(403);
    expect((await as(guest.token).get(`/projects/${priv.id}/repository/contributors`)).status).toBe(403);
    expect((await as(reporter.token).get(`/projects/${priv.id}/repository/tree`)).status).toBe(200);
    expect((await as(reporter.token).get(`/projects/${priv.id}/repository/branches`)).body).toHaveLength(3);
  });

  it('streams a blob over 1 MB, reads small ones beside it, and shows a later push in trees and raw reads', async () => {
    const grow = (
      await t
        .http()
        .post('/api/v4/projects')
        .set('PRIVATE-TOKEN', owner.token)
        .send({ name: 'Growing', visibility: 'public' })
    ).body;
    const dir = tmp.make();
    await gitOk(['init', '-q', '-b', 'master', dir]);
    mkdirSync(join(dir, 'docs'));
    const large = Buffer.alloc(1536 * 1024);
    for (let i = 0; i < large.length; i++) large[i] = (i * 7919) % 251;
    writeFileSync(join(dir, 'large.bin'), large);
    writeFileSync(join(dir, 'docs/a.md'), 'a\n');
    await gitOk(['add', '-A'], dir);
    await gitOk(['commit', '-q', '-m', 'one'], dir);
    const target = repositoryPath(t.config.dataDir, grow.id);
    await gitOk(['push', '-q', target, 'master'], dir);
    const read = (path: string) => as().get(path).buffer(true).parse(bytes);
    const first = (await as().get(`/projects/${grow.id}/repository/tree?path=docs`)).body;
    expect(first.map((e: { name: string }) => e.name)).toEqual(['a.md']);
    const root = (await as().get(`/projects/${grow.id}/repository/tree`)).body;
    const largeId = root.find((e: { name: string }) => e.name === 'large.bin').id;
    const [big, ...small] = await Promise.all([
      read(`/projects/${grow.id}/repository/blobs/${largeId}/raw`),
      ...Array.from({ length: 5 }, () => read(`/projects/${grow.id}/repository/blobs/${first[0].id}/raw`)),
    ]);
    expect(big.headers['content-length']).toBe(String(large.length));
    expect(Buffer.compare(big.body as Buffer, large)).toBe(0);
    for (const s of small) expect((s.body as Buffer).toString()).toBe('a\n');

    // A second push changes docs/: the listing follows (it is kept by tree id, never by path), and
    // the new blob is read through the repository's already running cat-file.
    writeFileSync(join(dir, 'docs/b.md'), 'b\n');
    await gitOk(['add', '-A'], dir);
    await gitOk(['commit', '-q', '-m', 'two'], dir);
    await gitOk(['push', '-q', target, 'master'], dir);
    const second = (await as().get(`/projects/${grow.id}/repository/tree?path=docs`)).body;
    expect(second.map((e: { name: string }) => e.name)).toEqual(['a.md', 'b.md']);
    expect((await read(`/projects/${grow.id}/repository/blobs/${second[1].id}/raw`)).body.toString()).toBe('b\n');
    const older = (await as().get(`/projects/${grow.id}/repository/tree?path=docs&ref=master~1`)).body;
    expect(older.map((e: { name: string }) => e.name)).toEqual(['a.md']);
    expect((await as().get(`/projects/${grow.id}/repository/blobs/${second[0].id.slice(0, 10)}`)).body.sha).toBe(
      second[0].id,
    );
    const tree = await as().get(
      `/projects/${grow.id}/repository/blobs/${root.find((e: { name: string }) => e.name === 'docs').id}/raw`,
    );
    expect(tree.status).toBe(404);
  });

  describe('archive', () => {
    const download = (path: string, headers: Record<string, string> = {}) =>
      t.http().get(`/api/v4${path}`).set(headers).buffer(true).parse(bytes);
    const list = async (bytes: Buffer, args: string[], file: string) => {
      const dir = tmp.make();
      writeFileSync(join(dir, file), bytes);
      const [command, ...rest] = args;
      const out = await new Promise<string>((resolve, reject) =>
        execFile(command, [...rest, join(dir, file)], { encoding: 'utf8' }, (err, stdout) =>
          err ? reject(err) : resolve(stdout),
        ),
      );
      return out.split('\n').filter(Boolean).sort();
    };

    it('serves tar.gz by default with one top directory <project>-<ref>-<sha>, cached with an ETag', async () => {
      const res = await download(`/projects/${pub.id}/repository/archive`);
      expect(res.status).toBe(200);
      const top = `readable-master-${sha.second}`;
      expect(res.headers['content-disposition']).toBe(`attachment; filename="${top}.tar.gz"`);
      const names = await list(res.body as Buffer, ['tar', '-tzf'], 'a.tar.gz');
      expect(names).toContain(`${top}/src/lib/util.ts`);
      expect(names.every((n) => n.startsWith(`${top}/`))).toBe(true);
      const etag = res.headers.etag;
      expect(etag).toMatch(/^"[0-9a-f]{32}"$/);
      const again = await download(`/projects/${pub.id}/repository/archive`);
      expect(again.headers.etag).toBe(etag);
      expect(again.headers['content-length']).toBe(String((res.body as Buffer).length));
      expect(Buffer.compare(again.body as Buffer, res.body as Buffer)).toBe(0);
      const notModified = await download(`/projects/${pub.id}/repository/archive`, { 'If-None-Match': etag });
      expect(notModified.status).toBe(304);
    });

    it('serves zip, tar and tar.bz2 for a branch with a slash, a tag-like sha and a commit', async () => {
      const zip = await download(`/projects/${pub.id}/repository/archive.zip?sha=feature/x`);
      expect(zip.status).toBe(200);
      const zipNames = await list(zip.body as Buffer, ['unzip', '-Z1'], 'a.zip');
      expect(zipNames).toContain(`readable-feature-x-${sha.feature}/feature.txt`);
      const tar = await download(`/projects/${pub.id}/repository/archive.tar?sha=${sha.first}`);
      expect(tar.status).toBe(200);
      expect(await list(tar.body as Buffer, ['tar', '-tf'], 'a.tar')).toContain(
        `readable-${sha.first}-${sha.first}/page.html`,
      );
      const bz2 = await download(`/projects/${pub.id}/repository/archive.tar.bz2?sha=master`);
      expect(bz2.status).toBe(200);
      expect(await list(bz2.body as Buffer, ['tar', '-tjf'], 'a.tar.bz2')).toContain(
        `readable-master-${sha.second}/NEW.md`,
      );
    });

    it('answers 404 File Not Found for unknown refs and empty repositories, 404 for unknown formats, and keeps private code private', async () => {
      const unknown = await download(`/projects/${pub.id}/repository/archive?sha=nope`);
      expect(unknown.status).toBe(404);
      expect(JSON.parse((unknown.body as Buffer).toString())).toEqual({ message: '404 File Not Found' });
      expect((await download(`/projects/${empty.id}/repository/archive`)).status).toBe(404);
      expect((await download(`/projects/${pub.id}/repository/archive.rar`)).status).toBe(404);
      expect((await download(`/projects/${priv.id}/repository/archive`)).status).toBe(404);
      expect(
        (await t.http().get(`/api/v4/projects/${priv.id}/repository/archive`).set('PRIVATE-TOKEN', guest.token)).status,
      ).toBe(403);
      expect(
        (await t.http().get(`/api/v4/projects/${priv.id}/repository/archive`).set('PRIVATE-TOKEN', reporter.token))
          .status,
      ).toBe(200);
    });
  });
});
