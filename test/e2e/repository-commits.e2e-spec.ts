import { repositoryPath } from '@app/git';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { expectShape } from '../contract/shape';
import { gitOk, tempDirs } from '../support/git';
import { buildSampleHistory, pushSampleHistory, type SampleHistory } from '../support/sample-history';
import { createUser, type SeededUser } from '../support/seed';
import { startTestApp, type TestApp } from '../support/test-app';

describe('repository commits, files, branches and tags (GitLab 10.x reads)', () => {
  let t: TestApp;
  let owner: SeededUser;
  let guest: SeededUser;
  let reporter: SeededUser;
  let stranger: SeededUser;
  let pub: { id: number };
  let priv: { id: number };
  let empty: { id: number };
  let h: SampleHistory;
  const tmp = tempDirs();

  const as = (token?: string) => ({
    get: (path: string) => {
      const r = t.http().get(`/api/v4${path}`);
      return token ? r.set('PRIVATE-TOKEN', token) : r;
    },
    head: (path: string) => {
      const r = t.http().head(`/api/v4${path}`);
      return token ? r.set('PRIVATE-TOKEN', token) : r;
    },
  });
  const ids = (body: { id: string }[]) => body.map((c) => c.id);
  const rawBody = (path: string) =>
    as()
      .get(path)
      .buffer(true)
      .parse((res, cb) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => cb(null, Buffer.concat(chunks)));
      });

  beforeAll(async () => {
    t = await startTestApp();
    owner = await createUser(t);
    guest = await createUser(t);
    reporter = await createUser(t);
    stranger = await createUser(t);
    const post = (path: string, body: object) =>
      t.http().post(`/api/v4${path}`).set('PRIVATE-TOKEN', owner.token).send(body);
    pub = (await post('/projects', { name: 'History', visibility: 'public' })).body;
    priv = (await post('/projects', { name: 'Secret history', visibility: 'private' })).body;
    empty = (await post('/projects', { name: 'No history', visibility: 'public' })).body;
    await post(`/projects/${priv.id}/members`, { user_id: guest.id, access_level: 10 });
    await post(`/projects/${priv.id}/members`, { user_id: reporter.id, access_level: 20 });
    h = await buildSampleHistory(tmp.make());
    for (const p of [pub, priv]) await pushSampleHistory(h, repositoryPath(t.config.dataDir, p.id));
  });
  afterAll(async () => {
    tmp.removeAll();
    await t.close();
  });

  describe('commits', () => {
    it('lists the default branch newest first, paginated with GitLab headers', async () => {
      const res = await as().get(`/projects/${pub.id}/repository/commits`);
      expect(res.status).toBe(200);
      expect(ids(res.body)).toEqual([h.sha.c3, h.sha.c2, h.sha.c1]);
      for (const c of res.body) expectShape(c, 'commit');
      expect(res.body[1]).toMatchObject({
        short_id: h.sha.c2.slice(0, 8),
        title: 'second',
        message: 'second\n\nwith a body\n',
        parent_ids: [h.sha.c1],
        author_name: 'Bob',
        author_email: 'bob@example.com',
        authored_date: '2020-02-01T10:00:00+02:00',
        committed_date: '2020-02-01T10:00:00+02:00',
        created_at: '2020-02-01T10:00:00+02:00',
      });
      expect(res.headers['x-total']).toBe('3');
      expect(res.headers['x-total-pages']).toBe('1');

      const second = await as().get(`/projects/${pub.id}/repository/commits?per_page=2&page=2`);
      expect(ids(second.body)).toEqual([h.sha.c1]);
      expect(second.headers).toMatchObject({
        'x-total': '3',
        'x-total-pages': '2',
        'x-page': '2',
        'x-per-page': '2',
        'x-prev-page': '1',
        'x-next-page': '',
      });
      expect(second.headers.link).toContain('rel="first"');
      const first = await as().get(`/projects/${pub.id}/repository/commits?per_page=2`);
      expect(ids(first.body)).toEqual([h.sha.c3, h.sha.c2]);
      expect(first.headers['x-next-page']).toBe('2');
      expect(first.headers.link).toContain('per_page=2&page=2>; rel="next"');
    });

    it('filters by ref_name, path, since, until and all, and adds stats on request', async () => {
      const list = async (query: string) => {
        const res = await as().get(`/projects/${pub.id}/repository/commits?${query}`);
        expect(res.status).toBe(200);
        return { ids: ids(res.body), total: res.headers['x-total'], body: res.body as Record<string, unknown>[] };
      };
      expect(await list('ref_name=feature%2Fx')).toMatchObject({ ids: [h.sha.cf, h.sha.c1], total: '2' });
      expect(await list('ref_name=v1.2')).toMatchObject({ ids: [h.sha.c2, h.sha.c1], total: '2' });
      expect(await list(`ref_name=${h.sha.c2.slice(0, 10)}`)).toMatchObject({ ids: [h.sha.c2, h.sha.c1] });
      expect(await list('path=src/a.txt')).toMatchObject({ ids: [h.sha.c2, h.sha.c1], total: '2' });
      expect(await list('path=docs')).toMatchObject({ ids: [h.sha.c2], total: '1' });
      expect(await list('path=*.md')).toMatchObject({ ids: [], total: '0' });
      expect(await list('path=%2Fsrc%2Fa.txt')).toMatchObject({ ids: [h.sha.c2, h.sha.c1], total: '2' });
      expect(await list('path=..')).toMatchObject({ ids: [], total: '0' });
      expect(await list('all=true&path=src%2F..%2F..')).toMatchObject({ ids: [], total: '0' });
      expect(await list('since=2020-01-15T00:00:00Z')).toMatchObject({ ids: [h.sha.c3, h.sha.c2], total: '2' });
      expect(await list('until=2020-01-15')).toMatchObject({ ids: [h.sha.c1], total: '1' });
      expect(await list('since=2020-01-15T00:00:00Z&until=2020-02-20T00:00:00Z&path=src%2Fa.txt')).toMatchObject({
        ids: [h.sha.c2],
        total: '1',
      });
      const all = await list('all=true');
      expect(all.total).toBe('4');
      expect(all.ids).toEqual([h.sha.c3, h.sha.cf, h.sha.c2, h.sha.c1]);
      expect(await list('all=true&per_page=1&page=2')).toMatchObject({ ids: [h.sha.cf], total: '4' });
      // GitLab 10.x: an unknown ref lists nothing rather than a 404.
      expect(await list('ref_name=nope')).toMatchObject({ ids: [], total: '0' });

      const stats = await list('with_stats=true');
      for (const c of stats.body) {
        expectShape(c, 'commit-with-stats');
        expectShape(c.stats, 'commit-stats');
      }
      expect(stats.body.map((c) => c.stats)).toEqual([
        { additions: 1, deletions: 0, total: 1 },
        { additions: 2, deletions: 1, total: 3 },
        { additions: 4, deletions: 0, total: 4 },
      ]);

      // Past the last page: nothing, and git is never asked to skip more than it can count.
      expect(await list('page=2147483647&per_page=100')).toMatchObject({ ids: [], total: '3' });
      for (const bad of ['since=yesterday-ish', 'until=2020-13-45', 'since=%2B275760-09-14T00:00:00Z']) {
        const res = await as().get(`/projects/${pub.id}/repository/commits?${bad}`);
        expect(res.status).toBe(400);
        expect([bad, res.body]).toEqual([bad, { error: `${bad.split('=')[0]} is invalid` }]);
      }
      const emptyList = await as().get(`/projects/${empty.id}/repository/commits`);
      expect(emptyList.status).toBe(200);
      expect(emptyList.body).toEqual([]);
      expect(emptyList.headers['x-total']).toBe('0');
    });

    it('gets one commit by sha, short sha, branch or tag, with stats unless stats=false', async () => {
      const one = await as().get(`/projects/${pub.id}/repository/commits/${h.sha.c2}`);
      expect(one.status).toBe(200);
      expectShape(one.body, 'commit-detail');
      expect(one.body).toMatchObject({
        id: h.sha.c2,
        parent_ids: [h.sha.c1],
        stats: { additions: 2, deletions: 1, total: 3 },
        status: null,
        last_pipeline: null,
        project_id: pub.id,
      });
      for (const name of [h.sha.c2.slice(0, 8), 'v1.2'])
        expect((await as().get(`/projects/${pub.id}/repository/commits/${name}`)).body.id).toBe(h.sha.c2);
      expect((await as().get(`/projects/${pub.id}/repository/commits/feature%2Fx`)).body.id).toBe(h.sha.cf);
      const root = await as().get(`/projects/${pub.id}/repository/commits/${h.sha.c1}`);
      expect(root.body).toMatchObject({ parent_ids: [], stats: { additions: 4, deletions: 0, total: 4 } });
      const bare = await as().get(`/projects/${pub.id}/repository/commits/master?stats=false`);
      expect(bare.body.id).toBe(h.sha.c3);
      expect(bare.body).not.toHaveProperty('stats');
      for (const name of ['nope', '0'.repeat(40), 'master..v1.0', '-x']) {
        const res = await as().get(`/projects/${pub.id}/repository/commits/${encodeURIComponent(name)}`);
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ message: '404 Commit Not Found' });
      }
    });

    it("answers a commit's diff against its first parent, and a root commit's against nothing", async () => {
      const res = await as().get(`/projects/${pub.id}/repository/commits/${h.sha.c2}/diff`);
      expect(res.status).toBe(200);
      for (const d of res.body) expectShape(d, 'diff');
      expect(res.body).toEqual([
        {
          old_path: 'docs/naïve.md',
          new_path: 'docs/naïve.md',
          a_mode: '0',
          b_mode: '100644',
          new_file: true,
          renamed_file: false,
          deleted_file: false,
          diff: '@@ -0,0 +1 @@\n+naïve\n',
        },
        {
          old_path: 'src/a.txt',
          new_path: 'src/a.txt',
          a_mode: '100644',
          b_mode: '100644',
          new_file: false,
          renamed_file: false,
          deleted_file: false,
          diff: '@@ -1,3 +1,3 @@\n a1\n-a2\n+B2\n a3\n',
        },
      ]);
      const root = await as().get(`/projects/${pub.id}/repository/commits/v1.0/diff`);
      expect(root.body.map((d: { new_path: string; new_file: boolean }) => [d.new_path, d.new_file])).toEqual([
        ['README.md', true],
        ['src/a.txt', true],
      ]);
      const none = await as().get(`/projects/${pub.id}/repository/commits/nope/diff`);
      expect(none.status).toBe(404);
      expect(none.body).toEqual({ message: '404 Commit Not Found' });
    });

    it('lists the branches, then the tags, that contain a commit, by type', async () => {
      const res = await as().get(`/projects/${pub.id}/repository/commits/${h.sha.c1}/refs`);
      expect(res.status).toBe(200);
      for (const r of res.body) expectShape(r, 'commit-ref');
      expect(res.body).toEqual([
        { type: 'branch', name: 'feature/x' },
        { type: 'branch', name: 'level' },
        { type: 'branch', name: 'master' },
        { type: 'branch', name: 'old' },
        { type: 'tag', name: 'v1.0' },
        { type: 'tag', name: 'v1.10' },
        { type: 'tag', name: 'v1.2' },
      ]);
      expect(res.headers['x-total']).toBe('7');
      const branches = await as().get(`/projects/${pub.id}/repository/commits/${h.sha.c2}/refs?type=branch`);
      expect(branches.body).toEqual([
        { type: 'branch', name: 'level' },
        { type: 'branch', name: 'master' },
      ]);
      const tags = await as().get(`/projects/${pub.id}/repository/commits/${h.sha.c2}/refs?type=tag&per_page=1`);
      expect(tags.body).toEqual([{ type: 'tag', name: 'v1.10' }]);
      expect(tags.headers).toMatchObject({ 'x-total': '2', 'x-next-page': '2' });
      const bad = await as().get(`/projects/${pub.id}/repository/commits/${h.sha.c2}/refs?type=remote`);
      expect(bad.status).toBe(400);
      expect(bad.body).toEqual({ error: 'type does not have a valid value' });
      expect((await as().get(`/projects/${pub.id}/repository/commits/nope/refs`)).body).toEqual({
        message: '404 Commit Not Found',
      });
    });
  });

  describe('files', () => {
    const blobId = (spec: string) => gitOk(['rev-parse', spec], h.work).then((s) => s.trim());

    it('answers a file at a ref as base64 with its metadata, also in X-Gitlab-* headers', async () => {
      const res = await as().get(`/projects/${pub.id}/repository/files/src%2Fa.txt?ref=master`);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/json');
      expectShape(res.body, 'repository-file');
      const content = 'a1\nB2\na3\n';
      expect(res.body).toEqual({
        file_name: 'a.txt',
        file_path: 'src/a.txt',
        size: 9,
        encoding: 'base64',
        content: Buffer.from(content).toString('base64'),
        content_sha256: createHash('sha256').update(content).digest('hex'),
        ref: 'master',
        blob_id: await blobId('master:src/a.txt'),
        commit_id: h.sha.c3,
        last_commit_id: h.sha.c2,
      });
      expect(res.headers).toMatchObject({
        'x-gitlab-file-name': 'a.txt',
        'x-gitlab-file-path': 'src/a.txt',
        'x-gitlab-size': '9',
        'x-gitlab-encoding': 'base64',
        'x-gitlab-ref': 'master',
        'x-gitlab-blob-id': res.body.blob_id,
        'x-gitlab-commit-id': h.sha.c3,
        'x-gitlab-last-commit-id': h.sha.c2,
        'x-gitlab-content-sha256': res.body.content_sha256,
      });
      const old = await as().get(`/projects/${pub.id}/repository/files/src%2Fa.txt?ref=v1.0`);
      expect(Buffer.from(old.body.content, 'base64').toString()).toBe('a1\na2\na3\n');
      expect(old.body).toMatchObject({ ref: 'v1.0', commit_id: h.sha.c1, last_commit_id: h.sha.c1 });
      // Header values are ASCII: a UTF-8 name is percent-encoded there (GitLab sends raw bytes).
      const named = await as().get(`/projects/${pub.id}/repository/files/docs%2Fna%C3%AFve.md?ref=${h.sha.c2}`);
      expect(named.body).toMatchObject({ file_name: 'naïve.md', file_path: 'docs/naïve.md', ref: h.sha.c2 });
      expect(named.headers['x-gitlab-file-name']).toBe('na%C3%AFve.md');
      const head = await as().head(`/projects/${pub.id}/repository/files/docs%2Fna%C3%AFve.md?ref=${h.sha.c2}`);
      expect(head.headers['x-gitlab-file-path']).toBe('docs/na%C3%AFve.md');
    });

    it('refuses a missing ref (400), an unknown ref (404 Commit) and a path that is no file (404 File)', async () => {
      const missing = await as().get(`/projects/${pub.id}/repository/files/README.md`);
      expect(missing.status).toBe(400);
      expect(missing.body).toEqual({ error: 'ref is missing' });
      const ref = await as().get(`/projects/${pub.id}/repository/files/README.md?ref=nope`);
      expect(ref.status).toBe(404);
      expect(ref.body).toEqual({ message: '404 Commit Not Found' });
      for (const path of ['nope.md', 'src', 'src%2Fnope', '..%2FREADME.md', 'NEW.md%3Fref%3Dmaster']) {
        const res = await as().get(`/projects/${pub.id}/repository/files/${path}?ref=v1.2`);
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ message: '404 File Not Found' });
      }
      expect((await as().get(`/projects/${empty.id}/repository/files/README.md?ref=master`)).body).toEqual({
        message: '404 Commit Not Found',
      });
    });

    it('answers HEAD with the X-Gitlab-* headers and no body', async () => {
      const res = await as().head(`/projects/${pub.id}/repository/files/README.md?ref=master`);
      expect(res.status).toBe(200);
      expect(res.text ?? '').toBe('');
      expect(res.headers).toMatchObject({
        'x-gitlab-file-name': 'README.md',
        'x-gitlab-file-path': 'README.md',
        'x-gitlab-size': '9',
        'x-gitlab-ref': 'master',
        'x-gitlab-blob-id': await blobId('master:README.md'),
        'x-gitlab-commit-id': h.sha.c3,
        'x-gitlab-last-commit-id': h.sha.c1,
        'x-gitlab-content-sha256': createHash('sha256').update('# Sample\n').digest('hex'),
      });
      expect((await as().head(`/projects/${pub.id}/repository/files/nope?ref=master`)).status).toBe(404);
      expect((await as().head(`/projects/${pub.id}/repository/files/README.md?ref=nope`)).status).toBe(404);
      expect((await as().head(`/projects/${pub.id}/repository/files/README.md`)).status).toBe(400);
    });

    it("serves a file's raw bytes with the raw blob's safety headers", async () => {
      const res = await rawBody(`/projects/${pub.id}/repository/files/src%2Fa.txt/raw?ref=v1.0`);
      expect(res.status).toBe(200);
      expect((res.body as Buffer).toString()).toBe('a1\na2\na3\n');
      expect(res.headers).toMatchObject({
        'content-type': 'text/plain; charset=utf-8',
        'content-length': '9',
        'x-content-type-options': 'nosniff',
        'content-security-policy': "sandbox; default-src 'none'",
        'x-gitlab-blob-id': await blobId('v1.0:src/a.txt'),
        'x-gitlab-commit-id': h.sha.c1,
      });
      expect((await as().get(`/projects/${pub.id}/repository/files/nope/raw?ref=master`)).body).toEqual({
        message: '404 File Not Found',
      });
      expect((await as().get(`/projects/${pub.id}/repository/files/README.md/raw`)).body).toEqual({
        error: 'ref is missing',
      });
    });

    it('blames a file as ranges of consecutive lines from one commit', async () => {
      const res = await as().get(`/projects/${pub.id}/repository/files/src%2Fa.txt/blame?ref=master`);
      expect(res.status).toBe(200);
      for (const r of res.body) {
        expectShape(r, 'blame-range');
        expectShape(r.commit, 'blame-range-commit');
      }
      expect(res.body.map((r: { commit: { id: string }; lines: string[] }) => [r.commit.id, r.lines])).toEqual([
        [h.sha.c1, ['a1']],
        [h.sha.c2, ['B2']],
        [h.sha.c1, ['a3']],
      ]);
      expect(res.body[1].commit).toEqual({
        id: h.sha.c2,
        parent_ids: [h.sha.c1],
        message: 'second\n\nwith a body\n',
        authored_date: '2020-02-01T10:00:00+02:00',
        author_name: 'Bob',
        author_email: 'bob@example.com',
        committed_date: '2020-02-01T10:00:00+02:00',
        committer_name: 'Tester',
        committer_email: 'tester@example.com',
      });
      const old = await as().get(`/projects/${pub.id}/repository/files/src%2Fa.txt/blame?ref=v1.0`);
      expect(old.body).toHaveLength(1);
      expect(old.body[0].lines).toEqual(['a1', 'a2', 'a3']);
      expect((await as().get(`/projects/${pub.id}/repository/files/src/blame?ref=master`)).body).toEqual({
        message: '404 File Not Found',
      });
    });
  });

  describe('branches', () => {
    it('answers protected, developers_can_*, merged and default as GitLab computes them', async () => {
      const res = await as().get(`/projects/${pub.id}/repository/branches`);
      expect(res.status).toBe(200);
      for (const b of res.body) {
        expectShape(b, 'branch');
        expectShape(b.commit, 'commit');
      }
      const summary = res.body.map((b: Record<string, unknown>) => [b.name, b.merged, b.default, b.protected]);
      // `merged`: the default branch's tip descends from the branch's tip and is not that tip.
      expect(summary).toEqual([
        ['feature/x', false, false, false],
        ['level', false, false, false],
        ['master', false, true, false],
        ['old', true, false, false],
      ]);
      expect(res.body[2]).toMatchObject({ developers_can_push: false, developers_can_merge: false });
      const one = await as().get(`/projects/${pub.id}/repository/branches/old`);
      expectShape(one.body, 'branch');
      expect(one.body).toMatchObject({ name: 'old', merged: true, default: false, commit: { id: h.sha.c1 } });
      const none = await as().get(`/projects/${pub.id}/repository/branches/nope`);
      expect(none.status).toBe(404);
      expect(none.body).toEqual({ message: '404 Branch Not Found' });
    });

    it('filters by search (a case-insensitive part of the name)', async () => {
      const names = async (q: string) =>
        (await as().get(`/projects/${pub.id}/repository/branches?search=${q}`)).body.map(
          (b: { name: string }) => b.name,
        );
      expect(await names('E')).toEqual(['feature/x', 'level', 'master']);
      expect(await names('ature%2F')).toEqual(['feature/x']);
      expect(await names('zzz')).toEqual([]);
    });
  });

  describe('tags', () => {
    it('lists tags newest first by default, by name in version order, ascending, and by search', async () => {
      const names = async (q = '') => {
        const res = await as().get(`/projects/${pub.id}/repository/tags${q}`);
        expect(res.status).toBe(200);
        return res.body.map((tag: { name: string }) => tag.name);
      };
      const res = await as().get(`/projects/${pub.id}/repository/tags`);
      for (const tag of res.body) {
        expectShape(tag, 'tag');
        expectShape(tag.commit, 'commit');
      }
      expect(res.headers['x-total']).toBe('3');
      expect(await names()).toEqual(['v1.10', 'v1.2', 'v1.0']);
      expect(await names('?sort=asc')).toEqual(['v1.0', 'v1.2', 'v1.10']);
      expect(await names('?order_by=name')).toEqual(['v1.10', 'v1.2', 'v1.0']);
      expect(await names('?order_by=name&sort=asc')).toEqual(['v1.0', 'v1.2', 'v1.10']);
      expect(await names('?search=1.1')).toEqual(['v1.10']);
      expect(await names('?search=%5Ev1.')).toEqual(['v1.10', 'v1.2', 'v1.0']);
      expect(await names('?search=0%24')).toEqual(['v1.10', 'v1.0']);
      expect(await names('?search=.0%24')).toEqual(['v1.0']);
      expect(await names('?per_page=1&page=2')).toEqual(['v1.2']);
      for (const bad of ['order_by=date', 'sort=up']) {
        const r = await as().get(`/projects/${pub.id}/repository/tags?${bad}`);
        expect(r.status).toBe(400);
        expect(r.body).toEqual({ error: `${bad.split('=')[0]} does not have a valid value` });
      }
      expect((await as().get(`/projects/${empty.id}/repository/tags`)).body).toEqual([]);
    });

    it("gets one tag: an annotated tag's message and tag object, a lightweight tag's commit", async () => {
      const annotated = await as().get(`/projects/${pub.id}/repository/tags/v1.2`);
      expect(annotated.status).toBe(200);
      expectShape(annotated.body, 'tag');
      expect(annotated.body).toMatchObject({
        name: 'v1.2',
        message: 'Release 1.2',
        target: h.annotatedTag,
        commit: { id: h.sha.c2 },
        release: null,
      });
      expect(h.annotatedTag).not.toBe(h.sha.c2);
      const light = await as().get(`/projects/${pub.id}/repository/tags/v1.0`);
      expect(light.body).toMatchObject({ name: 'v1.0', message: null, target: h.sha.c1, commit: { id: h.sha.c1 } });
      for (const name of ['v9', 'v1', 'v*', 'v1.%3F', '..', '-v1.0']) {
        const none = await as().get(`/projects/${pub.id}/repository/tags/${name}`);
        expect([name, none.status, none.body]).toEqual([name, 404, { message: '404 Tag Not Found' }]);
      }
    });
  });

  describe('a long history', () => {
    const COMMITS = 5000;
    let long: { id: number };
    let bare: string;

    /** 5,000 commits written by `git fast-import` straight into the project's repository, one a minute. */
    beforeAll(async () => {
      long = (
        await t
          .http()
          .post('/api/v4/projects')
          .set('PRIVATE-TOKEN', owner.token)
          .send({ name: 'Long history', visibility: 'public' })
      ).body;
      bare = repositoryPath(t.config.dataDir, long.id);
      let stream = '';
      for (let i = 1; i <= COMMITS; i++) {
        const message = `commit ${i}\n`;
        const content = `line ${i}\n`;
        stream +=
          `commit refs/heads/master\ncommitter Tester <tester@example.com> ${1_600_000_000 + i * 60} +0000\n` +
          `data ${Buffer.byteLength(message)}\n${message}M 100644 inline f${i % 50}.txt\ndata ${content.length}\n${content}\n`;
      }
      await new Promise<void>((resolve, reject) => {
        const child = execFile('git', ['fast-import', '--quiet'], { cwd: bare }, (err) =>
          err ? reject(err) : resolve(),
        );
        child.stdin!.end(stream);
      });
      // fast-import of 5,000 commits takes a few seconds, far more on a loaded machine.
    }, 180_000);

    it('pages 5,000 commits by position: page 40 is the 3,901st to 4,000th commit, and cheap', async () => {
      const expected = async (skip: number, extra: string[] = []) =>
        (await gitOk(['rev-list', `--skip=${skip}`, '--max-count=100', 'master', '--', ...extra], bare))
          .split('\n')
          .filter(Boolean);
      const timed = async (query: string) => {
        const started = performance.now();
        const res = await as().get(`/projects/${long.id}/repository/commits?${query}`);
        expect(res.status).toBe(200);
        return { res, ms: performance.now() - started };
      };
      const first = await timed('per_page=100');
      expect(ids(first.res.body)).toEqual(await expected(0));
      expect(first.res.headers).toMatchObject({
        'x-total': String(COMMITS),
        'x-total-pages': '50',
        'x-next-page': '2',
      });
      const fortieth = await timed('per_page=100&page=40');
      expect(ids(fortieth.res.body)).toEqual(await expected(3900));
      expect(fortieth.res.body[0].title).toBe(`commit ${COMMITS - 3900}`);
      expect(fortieth.res.headers).toMatchObject({ 'x-total': String(COMMITS), 'x-page': '40', 'x-next-page': '41' });
      const last = await timed('per_page=100&page=50');
      expect(ids(last.res.body)).toEqual(await expected(4900));
      expect(last.res.headers['x-next-page']).toBe('');
      const beyond = await timed('per_page=100&page=51');
      expect(beyond.res.body).toEqual([]);
      // A path-limited walk counts and pages the same way: f7.txt changed in every 50th commit.
      const byPath = await timed('per_page=100&path=f7.txt');
      expect(byPath.res.headers['x-total']).toBe(String(COMMITS / 50));
      expect(ids(byPath.res.body)).toEqual(await expected(0, ['f7.txt']));
      // Generous bounds for a shared machine: a walk of the whole history per page would still pass
      // these, the position-sized walk (bench numbers in the README) is far below them.
      for (const { ms } of [first, fortieth, last, byPath]) expect(ms).toBeLessThan(3000);
    });

    /** Commits appended to `ref` by fast-import (from its tip), each changing f7.txt; answers the new tip. */
    const append = async (ref: string, from: string, n: number, tag: string) => {
      let stream = `reset ${ref}\nfrom ${from}\n`;
      for (let i = 1; i <= n; i++) {
        const message = `${tag} ${i}\n`;
        const content = `${tag} ${i}\n`;
        stream +=
          `commit ${ref}\ncommitter Tester <tester@example.com> ${1_700_000_000 + i * 60} +0000\n` +
          `data ${Buffer.byteLength(message)}\n${message}M 100644 inline f7.txt\ndata ${content.length}\n${content}\n`;
      }
      await new Promise<void>((resolve, reject) => {
        const child = execFile('git', ['fast-import', '--quiet', '--force'], { cwd: bare }, (err) =>
          err ? reject(err) : resolve(),
        );
        child.stdin!.end(stream);
      });
      return (await gitOk(['rev-parse', ref], bare)).trim();
    };

    it('pages from a list kept per tip: a push, a rewrite and a new branch each answer the new history', async () => {
      const page = (query: string) => as().get(`/projects/${long.id}/repository/commits?${query}`);
      const expected = async (skip: number, tip: string, extra: string[] = []) =>
        (await gitOk(['rev-list', `--skip=${skip}`, '--max-count=100', tip, '--', ...extra], bare))
          .split('\n')
          .filter(Boolean);
      const before = (await gitOk(['rev-parse', 'master'], bare)).trim();
      // Kept: the same answers again (page 40 and the path-limited list).
      expect(ids((await page('per_page=100&page=40')).body)).toEqual(await expected(3900, before));
      expect((await page('per_page=100&path=f7.txt')).headers['x-total']).toBe(String(COMMITS / 50));

      // A push of 3 commits: the total and every page move by 3.
      const pushed = await append('refs/heads/master', before, 3, 'pushed');
      const after = await page('per_page=100&page=40');
      expect(after.headers).toMatchObject({ 'x-total': String(COMMITS + 3), 'x-total-pages': '51' });
      expect(ids(after.body)).toEqual(await expected(3900, pushed));
      expect(ids((await page('per_page=2')).body)).toEqual(await expected(0, pushed).then((l) => l.slice(0, 2)));
      const byPath = await page('per_page=100&path=f7.txt');
      expect(byPath.headers['x-total']).toBe(String(COMMITS / 50 + 3));
      expect(ids(byPath.body)).toEqual(await expected(0, pushed, ['f7.txt']));

      // A rewrite (a forced push back to the old tip, then one other commit): the rewritten history.
      const rewritten = await append('refs/heads/master', before, 1, 'rewritten');
      const again = await page('per_page=100');
      expect(again.headers['x-total']).toBe(String(COMMITS + 1));
      expect(again.body[0]).toMatchObject({ id: rewritten, title: 'rewritten 1' });
      expect(ids((await page('per_page=100&page=40')).body)).toEqual(await expected(3900, rewritten));

      // A new branch: `all` lists it too; its own ref_name lists its history.
      const side = await append('refs/heads/side', before, 2, 'side');
      const all = await page('per_page=100&all=true');
      expect(all.headers['x-total']).toBe(String(COMMITS + 3));
      expect(ids(all.body)).toEqual(
        (await gitOk(['rev-list', '--max-count=100', '--all'], bare)).split('\n').filter(Boolean),
      );
      expect((await page('per_page=100&ref_name=side')).body[0].id).toBe(side);
      // with_stats pages through git with the same total.
      const stats = await page('per_page=100&page=2&with_stats=true');
      expect(stats.headers['x-total']).toBe(String(COMMITS + 1));
      expect(ids(stats.body)).toEqual(await expected(100, rewritten));
      expect(stats.body[0].stats).toEqual({ additions: 1, deletions: 1, total: 2 });
    });

    it("reads a file at a ref through the raw reads' process, and sees each push at once", async () => {
      // Signed in: the history here is written straight into the repository (`git fast-import`), with no
      // event, and an anonymous answer of a public project is kept until an event names the project
      // (public-project-cache.e2e-spec.ts holds real pushes and API writes to that).
      const file = (path: string, ref: string) =>
        as(owner.token).get(`/projects/${long.id}/repository/files/${path}?ref=${ref}`);
      const tip = (await gitOk(['rev-parse', 'master'], bare)).trim();
      const first = await file('f7.txt', 'master');
      expect(first.body).toMatchObject({ file_path: 'f7.txt', commit_id: tip, last_commit_id: tip });
      const moved = await append('refs/heads/master', tip, 1, 'moved');
      const next = await file('f7.txt', 'master');
      expect(next.body).toMatchObject({ commit_id: moved, last_commit_id: moved, size: 'moved 1\n'.length });
      expect(Buffer.from(next.body.content, 'base64').toString()).toBe('moved 1\n');
      expect(next.body.blob_id).toBe((await gitOk(['rev-parse', 'master:f7.txt'], bare)).trim());
      // Spellings git's cat-file reads otherwise, or dies on, answer as libgit2 reads them, and the
      // process keeps serving: a ref relative to another, a reflog or upstream name, `./` and `//` paths.
      expect((await file('f7.txt', 'master~1')).body).toMatchObject({ commit_id: tip });
      for (const ref of ['master@%7Bupstream%7D', '%40%7B-1%7D', 'master..side'])
        expect([ref, (await file('f7.txt', ref)).body]).toEqual([ref, { message: '404 Commit Not Found' }]);
      for (const path of ['.%2Ff7.txt', 'docs%2F..%2Ff7.txt', '%2F%2Ff7.txt', 'f7.txt%0A'])
        expect([path, (await file(path, 'master')).status]).toEqual([path, path === '%2F%2Ff7.txt' ? 200 : 404]);
      expect((await file('f7.txt', 'master')).body).toMatchObject({ commit_id: moved });
      expect((await file('nope.txt', moved)).body).toEqual({ message: '404 File Not Found' });
      expect((await file('f7.txt', 'a'.repeat(40))).body).toEqual({ message: '404 Commit Not Found' });
    });
  });

  it('hides private code from strangers (404) and guests (403), and serves reporters', async () => {
    const paths = [
      'repository/commits',
      `repository/commits/${h.sha.c1}`,
      `repository/commits/${h.sha.c1}/diff`,
      `repository/commits/${h.sha.c1}/refs`,
      'repository/files/README.md?ref=master',
      'repository/files/README.md/raw?ref=master',
      'repository/files/README.md/blame?ref=master',
      'repository/branches',
      'repository/branches/master',
      'repository/tags',
      'repository/tags/v1.0',
    ];
    for (const path of paths) {
      const url = `/projects/${priv.id}/${path}`;
      const anonymous = await as().get(url);
      expect([path, anonymous.status, anonymous.body]).toEqual([path, 404, { message: '404 Project Not Found' }]);
      expect([path, (await as(stranger.token).get(url)).status]).toEqual([path, 404]);
      const refused = await as(guest.token).get(url);
      expect([path, refused.status, refused.body]).toEqual([path, 403, { message: '403 Forbidden' }]);
      expect([path, (await as(reporter.token).get(url)).status]).toEqual([path, 200]);
    }
    expect((await as().head(`/projects/${priv.id}/repository/files/README.md?ref=master`)).status).toBe(404);
    expect((await as(guest.token).head(`/projects/${priv.id}/repository/files/README.md?ref=master`)).status).toBe(403);
  });
});
