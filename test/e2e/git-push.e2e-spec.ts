import { writeFileSync, mkdirSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { git, gitOk, tempDirs } from '../support/git';
import { createUser, type SeededUser } from '../support/seed';
import { startTestApp, type TestApp } from '../support/test-app';
import { bytes } from '../support/bytes';

const ZERO = '0'.repeat(40);

interface PushedEvent {
  projectId: number;
  userId: number;
  defaultBranch: string | null;
  statistics: { commitCount: number; repositorySize: number };
  updates: {
    ref: string;
    before: string;
    after: string;
    checkoutSha: string | null;
    totalCommitsCount: number;
    message: string | null;
    commits: {
      id: string;
      message: string;
      timestamp: string;
      author: { name: string; email: string };
      added: string[];
      modified: string[];
      removed: string[];
    }[];
  }[];
}

describe('pushes recorded as RepositoryPushed', () => {
  let t: TestApp;
  let base: string;
  let owner: SeededUser;
  const tmp = tempDirs();
  const url = (path: string, token: string) => `http://git:${token}@${base}/${path}.git`;

  async function project(
    name: string,
    extra: Record<string, unknown> = {},
  ): Promise<{ id: number; path_with_namespace: string }> {
    const res = await t
      .http()
      .post('/api/v4/projects')
      .set('PRIVATE-TOKEN', owner.token)
      .send({ name, visibility: 'public', ...extra });
    expect(res.status).toBe(201);
    return res.body;
  }

  async function pushes(projectId: number): Promise<(PushedEvent & { metadata: Record<string, unknown> })[]> {
    const rows = await t.db.query(
      `select data, metadata from events where type = 'RepositoryPushed' and (data->>'projectId')::int = $1 order by global_position`,
      [projectId],
    );
    return rows.map((r: { data: PushedEvent; metadata: Record<string, unknown> }) => ({
      ...r.data,
      metadata: r.metadata,
    }));
  }

  /** A working copy with `n` commits on `branch`, each adding a file `<prefix><i>.txt`. */
  async function workingCopy(n: number, branch = 'master', prefix = 'f'): Promise<string> {
    const dir = tmp.make();
    await gitOk(['init', '-q', '-b', branch, dir]);
    for (let i = 1; i <= n; i++) {
      writeFileSync(join(dir, `${prefix}${i}.txt`), `${i}\n`);
      await gitOk(['add', '.'], dir);
      await gitOk(['commit', '-q', '-m', `commit ${i}\n\nbody ${i}`], dir);
    }
    return dir;
  }
  const rev = async (dir: string, what = 'HEAD') => (await gitOk(['rev-parse', what], dir)).trim();

  beforeAll(async () => {
    t = await startTestApp();
    await t.app.listen(0, '127.0.0.1');
    base = `127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    owner = await createUser(t);
  });
  afterAll(async () => {
    tmp.removeAll();
    await t.close();
  });

  it('records the first push: new branch, commits oldest first with their files, default branch, statistics, last_activity_at', async () => {
    const p = await project('First');
    const before = (await t.http().get(`/api/v4/projects/${p.id}`)).body;
    expect(before.default_branch).toBeNull();
    const dir = await workingCopy(3);
    const head = await rev(dir);
    await gitOk(['push', '-q', url(p.path_with_namespace, owner.token), 'master'], dir);

    // Recorded before git's client got the end of its answer: no waiting needed.
    const [e] = await pushes(p.id);
    expect(e.userId).toBe(owner.id);
    expect(e.metadata).toMatchObject({ actorId: owner.id, origin: 'git' });
    expect(e.defaultBranch).toBe('master');
    expect(e.updates).toHaveLength(1);
    const u = e.updates[0];
    expect(u).toMatchObject({
      ref: 'refs/heads/master',
      before: ZERO,
      after: head,
      checkoutSha: head,
      totalCommitsCount: 3,
      message: null,
    });
    expect(u.commits.map((c) => c.message)).toEqual([
      'commit 1\n\nbody 1\n',
      'commit 2\n\nbody 2\n',
      'commit 3\n\nbody 3\n',
    ]);
    expect(u.commits[2].id).toBe(head);
    expect(u.commits[0]).toMatchObject({
      author: { name: 'Tester', email: 'tester@example.com' },
      added: ['f1.txt'],
      modified: [],
      removed: [],
    });
    expect(u.commits[0].timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(Z|[+-]\d\d:\d\d)$/);
    expect(e.statistics.commitCount).toBe(3);
    expect(e.statistics.repositorySize).toBeGreaterThan(0);

    const after = (await t.http().get(`/api/v4/projects/${p.id}?statistics=true`).set('PRIVATE-TOKEN', owner.token))
      .body;
    expect(after.default_branch).toBe('master');
    expect(new Date(after.last_activity_at).getTime()).toBeGreaterThan(new Date(before.last_activity_at).getTime());
    expect(after.statistics).toMatchObject({ commit_count: 3, repository_size: e.statistics.repositorySize });
  });

  it('names the default branch after the first branch pushed when HEAD names another, and clones check it out', async () => {
    const p = await project('Mainline');
    const dir = await workingCopy(1, 'main');
    await gitOk(['push', '-q', url(p.path_with_namespace, owner.token), 'main'], dir);
    expect((await t.http().get(`/api/v4/projects/${p.id}`)).body.default_branch).toBe('main');
    const clone = join(tmp.make(), 'c');
    await gitOk(['clone', '-q', url(p.path_with_namespace, owner.token), clone]);
    expect((await gitOk(['rev-parse', '--abbrev-ref', 'HEAD'], clone)).trim()).toBe('main');
    // A later branch does not change it.
    await gitOk(['push', '-q', url(p.path_with_namespace, owner.token), 'main:other'], dir);
    const [, second] = await pushes(p.id);
    expect(second.defaultBranch).toBeNull();
    expect((await t.http().get(`/api/v4/projects/${p.id}`)).body.default_branch).toBe('main');
  });

  it('records fast-forwards, modifications and removals, new branches against the default branch, force pushes and deletions', async () => {
    const p = await project('Flow');
    const remote = url(p.path_with_namespace, owner.token);
    const dir = await workingCopy(2);
    await gitOk(['push', '-q', remote, 'master'], dir);
    const first = await rev(dir);

    writeFileSync(join(dir, 'f1.txt'), 'changed\n');
    rmSync(join(dir, 'f2.txt'));
    await gitOk(['commit', '-q', '-am', 'change and remove'], dir);
    await gitOk(['push', '-q', remote, 'master'], dir);
    const second = await rev(dir);

    // A new branch: only the commits master lacks.
    await gitOk(['checkout', '-q', '-b', 'topic'], dir);
    writeFileSync(join(dir, 't.txt'), 't\n');
    await gitOk(['add', '.'], dir);
    await gitOk(['commit', '-q', '-m', 'topic work'], dir);
    await gitOk(['push', '-q', remote, 'topic'], dir);
    const topic = await rev(dir);

    // A force push replacing the topic commit.
    await gitOk(['commit', '-q', '--amend', '-m', 'topic work, amended'], dir);
    await gitOk(['push', '-q', '--force', remote, 'topic'], dir);
    const amended = await rev(dir);

    await gitOk(['push', '-q', remote, '--delete', 'topic'], dir);

    const [, ff, created, forced, deleted] = await pushes(p.id);
    expect(ff.updates[0]).toMatchObject({ before: first, after: second, totalCommitsCount: 1 });
    expect(ff.updates[0].commits[0]).toMatchObject({
      id: second,
      added: [],
      modified: ['f1.txt'],
      removed: ['f2.txt'],
    });
    expect(created.updates[0]).toMatchObject({
      ref: 'refs/heads/topic',
      before: ZERO,
      after: topic,
      totalCommitsCount: 1,
    });
    expect(created.updates[0].commits.map((c) => c.id)).toEqual([topic]);
    expect(forced.updates[0]).toMatchObject({ before: topic, after: amended, totalCommitsCount: 1 });
    expect(deleted.updates[0]).toEqual({
      ref: 'refs/heads/topic',
      before: amended,
      after: ZERO,
      checkoutSha: null,
      commits: [],
      totalCommitsCount: 0,
      message: null,
    });
  });

  it("counts the default branch's commits in each push's statistics, through fast-forwards and a rewrite", async () => {
    const p = await project('Counted');
    const dir = await workingCopy(3);
    const remote = url(p.path_with_namespace, owner.token);
    const commit = (m: string) => gitOk(['commit', '-q', '--allow-empty', '-m', m], dir);
    await gitOk(['push', '-q', remote, 'master'], dir);
    // The first push protected master; the force push below needs it unprotected.
    const unprotected = await t
      .http()
      .delete(`/api/v4/projects/${p.id}/protected_branches/master`)
      .set('PRIVATE-TOKEN', owner.token);
    expect(unprotected.status).toBe(204);
    await commit('four');
    await commit('five');
    await gitOk(['push', '-q', remote, 'master'], dir);
    // Rewritten to two commits fewer than the last push, then moved forward again by one.
    await gitOk(['reset', '-q', '--hard', 'HEAD~3'], dir);
    await commit('rewritten');
    await gitOk(['push', '-q', '--force', remote, 'master'], dir);
    await commit('after the rewrite');
    await gitOk(['push', '-q', remote, 'master'], dir);
    // A push of another branch keeps counting the default branch.
    await gitOk(['push', '-q', remote, 'master:topic'], dir);
    expect((await pushes(p.id)).map((e) => e.statistics.commitCount)).toEqual([3, 5, 3, 4, 4]);
  });

  it('keeps the newest 20 commits of a long push and counts them all', async () => {
    const p = await project('Long');
    const dir = await workingCopy(25);
    await gitOk(['push', '-q', url(p.path_with_namespace, owner.token), 'master'], dir);
    const [e] = await pushes(p.id);
    expect(e.updates[0].totalCommitsCount).toBe(25);
    expect(e.updates[0].commits).toHaveLength(20);
    expect(e.updates[0].commits[0].message).toMatch(/^commit 6\n/);
    expect(e.updates[0].commits[19].id).toBe(await rev(dir));
  });

  it('records tags with the tagged commit and an annotated tag message, and several refs in one push', async () => {
    const p = await project('Tags');
    const dir = await workingCopy(2);
    const head = await rev(dir);
    await gitOk(['tag', 'v1'], dir);
    await gitOk(['tag', '-a', 'v2', '-m', 'Release two'], dir);
    await gitOk(['push', '-q', url(p.path_with_namespace, owner.token), 'master', 'v1', 'v2'], dir);
    const [e] = await pushes(p.id);
    const byRef = Object.fromEntries(e.updates.map((u) => [u.ref, u]));
    expect(Object.keys(byRef).sort()).toEqual(['refs/heads/master', 'refs/tags/v1', 'refs/tags/v2']);
    expect(byRef['refs/tags/v1']).toMatchObject({
      before: ZERO,
      after: head,
      checkoutSha: head,
      totalCommitsCount: 1,
      message: null,
    });
    expect(byRef['refs/tags/v1'].commits.map((c) => c.id)).toEqual([head]);
    expect(byRef['refs/tags/v2'].after).toBe(await rev(dir, 'v2'));
    expect(byRef['refs/tags/v2']).toMatchObject({ checkoutSha: head, message: 'Release two' });
  });

  it('records nothing for a rejected push', async () => {
    const p = await project('Rejected');
    const remote = url(p.path_with_namespace, owner.token);
    const dir = await workingCopy(2);
    await gitOk(['push', '-q', remote, 'master'], dir);
    await gitOk(['reset', '-q', '--hard', 'HEAD~1'], dir);
    writeFileSync(join(dir, 'other.txt'), 'x\n');
    await gitOk(['add', '.'], dir);
    await gitOk(['commit', '-q', '-m', 'diverged'], dir);
    const r = await git(['push', remote, 'master'], dir);
    expect(r.status).not.toBe(0);
    expect(r.out).toMatch(/rejected|non-fast-forward/);
    expect(await pushes(p.id)).toHaveLength(1);
  });

  it("counts a clone and a push as the user's activity of the day", async () => {
    const dev = await createUser(t);
    // Private: git sends credentials only when challenged, so a public clone is anonymous (as with GitLab).
    const p = await project('Activity', { visibility: 'private' });
    const member = await t
      .http()
      .post(`/api/v4/projects/${p.id}/members`)
      .set('PRIVATE-TOKEN', owner.token)
      .send({ user_id: dev.id, access_level: 20 });
    expect(member.status).toBe(201);
    const dir = await workingCopy(1);
    await gitOk(['push', '-q', url(p.path_with_namespace, owner.token), 'master'], dir);
    const activity = async () =>
      (await t.http().get(`/api/v4/users/${dev.id}`).set('PRIVATE-TOKEN', t.rootToken)).body.last_activity_on;
    expect(await activity()).toBeNull();
    await gitOk(['clone', '-q', url(p.path_with_namespace, dev.token), join(tmp.make(), 'c')]);
    const today = new Date().toISOString().slice(0, 10);
    // Recorded beside the clone, not in its way.
    for (let i = 0; i < 50 && (await activity()) !== today; i++) await new Promise((r) => setTimeout(r, 100));
    expect(
      await t.db.query(`select type from events where stream_id = $1`, [`user-activity-${dev.id}-${today}`]),
    ).toEqual([{ type: 'UserActivityRecorded' }]);
    expect(await activity()).toBe(today);
  });

  it('accepts gzip request bodies (upload-pack as git sends large negotiations)', async () => {
    const p = await project('Gzip');
    const dir = await workingCopy(1);
    await gitOk(['push', '-q', url(p.path_with_namespace, owner.token), 'master'], dir);
    const head = await rev(dir);
    const pkt = (s: string) => `${(s.length + 4).toString(16).padStart(4, '0')}${s}`;
    const body = gzipSync(Buffer.from(`${pkt(`want ${head} ofs-delta\n`)}0000${pkt('done\n')}`));
    const res = await fetch(`http://${base}/${p.path_with_namespace}.git/git-upload-pack`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/x-git-upload-pack-request', 'content-encoding': 'gzip' },
    });
    expect(res.status).toBe(200);
    const answer = Buffer.from(await res.arrayBuffer());
    expect(answer.includes(Buffer.from('PACK'))).toBe(true);
  });

  it('records a push whose body arrives gzipped', async () => {
    const p = await project('GzipPush');
    const dir = await workingCopy(1);
    const head = await rev(dir);
    // A pack of the one commit, as git sends it after the command list.
    const pack = tmp.make();
    mkdirSync(pack, { recursive: true });
    const packFile = join(pack, 'p');
    const packBytes = await new Promise<Buffer>((resolve, reject) => {
      import('node:child_process').then(({ execFile }) => {
        const child = execFile(
          'git',
          ['pack-objects', '--revs', '--stdout', '-q'],
          { cwd: dir, encoding: 'buffer', maxBuffer: 1 << 26 },
          (err, out) => (err ? reject(err) : resolve(out as Buffer)),
        );
        child.stdin!.end(`${head}\n`);
      });
    });
    writeFileSync(packFile, packBytes);
    const pkt = (s: string) => `${(Buffer.byteLength(s) + 4).toString(16).padStart(4, '0')}${s}`;
    const commands = `${pkt(`${ZERO} ${head} refs/heads/master\0report-status\n`)}0000`;
    const body = gzipSync(Buffer.concat([Buffer.from(commands), packBytes]));
    const res = await fetch(`http://${base}/${p.path_with_namespace}.git/git-receive-pack`, {
      method: 'POST',
      body,
      headers: {
        'content-type': 'application/x-git-receive-pack-request',
        'content-encoding': 'gzip',
        authorization: `Basic ${Buffer.from(`git:${owner.token}`).toString('base64')}`,
      },
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('ok refs/heads/master');
    const [e] = await pushes(p.id);
    expect(e.updates[0]).toMatchObject({ ref: 'refs/heads/master', before: ZERO, after: head, totalCommitsCount: 1 });
  });

  it('serves what git pushed through the API (subdirectory, binary, a large file), and fetches bring later pushes', async () => {
    const p = await project('Roundtrip');
    const remote = url(p.path_with_namespace, owner.token);
    const dir = await workingCopy(1);
    mkdirSync(join(dir, 'docs/img'), { recursive: true });
    const large = Buffer.alloc(3 * 1024 * 1024, 7);
    large.write('header', 0);
    large[100] = 0; // a NUL byte: binary to git's test
    writeFileSync(join(dir, 'docs/img/big.bin'), large);
    await gitOk(['add', '.'], dir);
    await gitOk(['commit', '-q', '-m', 'large'], dir);
    await gitOk(['push', '-q', remote, 'master'], dir);
    const clone = join(tmp.make(), 'c');
    await gitOk(['clone', '-q', remote, clone]);

    const tree = await t.http().get(`/api/v4/projects/${p.id}/repository/tree?path=docs/img`);
    expect(tree.body).toEqual([expect.objectContaining({ name: 'big.bin', type: 'blob', mode: '100644' })]);
    const raw = await t
      .http()
      .get(`/api/v4/projects/${p.id}/repository/blobs/${tree.body[0].id}/raw`)
      .buffer(true)
      .parse(bytes);
    expect(raw.headers['content-type']).toBe('application/octet-stream');
    expect(Buffer.compare(raw.body as Buffer, large)).toBe(0);

    writeFileSync(join(dir, 'later.txt'), 'later\n');
    await gitOk(['add', '.'], dir);
    await gitOk(['commit', '-q', '-m', 'later'], dir);
    await gitOk(['push', '-q', remote, 'master'], dir);
    await gitOk(['fetch', '-q', 'origin'], clone);
    expect((await gitOk(['rev-parse', 'origin/master'], clone)).trim()).toBe(await rev(dir));
  });
});
