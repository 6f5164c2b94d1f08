import { repositoryPath } from '@app/git';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { GitJobsProcessor } from '../../libs/projects/src/repository-jobs/git-jobs';
import { FORK_COPY_WAIT_MS } from '../../libs/repositories/src/writes/repository-ready';
import { git as runGit } from '../support/git';
import { createUser, type SeededUser } from '../support/seed';
import { eventually, startTestApp, type TestApp } from '../support/test-app';

describe('forks, fork relations and housekeeping', () => {
  let t: TestApp;
  let owner: SeededUser;
  let other: SeededUser;
  let source: { id: number; path_with_namespace: string };

  const as = (token: string) => ({
    get: (path: string) => t.http().get(`/api/v4${path}`).set('PRIVATE-TOKEN', token),
    post: (path: string) => t.http().post(`/api/v4${path}`).set('PRIVATE-TOKEN', token),
    delete: (path: string) => t.http().delete(`/api/v4${path}`).set('PRIVATE-TOKEN', token),
    put: (path: string) => t.http().put(`/api/v4${path}`).set('PRIVATE-TOKEN', token),
  });

  beforeAll(async () => {
    t = await startTestApp();
    owner = await createUser(t);
    other = await createUser(t);
    source = (
      await as(owner.token)
        .post('/projects')
        .send({ name: 'Upstream', visibility: 'public', description: 'the original', tag_list: ['a'] })
    ).body;
  });
  afterAll(async () => {
    await t.close();
  });

  it("forks into the caller's namespace at once, scheduled, and the job brings it to finished", async () => {
    const res = await as(other.token).post(`/projects/${source.id}/fork`);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: 'Upstream',
      path: 'upstream',
      path_with_namespace: `${other.username}/upstream`,
      description: 'the original',
      tag_list: ['a'],
      visibility: 'public',
      namespace: { kind: 'user', path: other.username },
    });
    expect(['scheduled', 'started', 'finished']).toContain(res.body.import_status);
    const forkId = res.body.id;
    await eventually(async () => (await as(other.token).get(`/projects/${forkId}`)).body.import_status === 'finished');
    // The transitions were recorded, in order, once each.
    const statuses = await t.db.query(
      `select data->>'status' as status from events where stream_id = $1 and type = 'ProjectImportStatusChanged' order by stream_version`,
      [`project-${forkId}`],
    );
    expect(statuses.map((s: { status: string }) => s.status)).toEqual(['started', 'finished']);
    expect((await as(owner.token).get(`/projects/${source.id}`)).body.forks_count).toBe(1);
    // The fork names its source (GitLab's forked_from_project, BasicProjectDetails), the source does not.
    const fork = (await as(other.token).get(`/projects/${forkId}`)).body;
    expect(fork.forked_from_project).toMatchObject({
      id: source.id,
      path_with_namespace: source.path_with_namespace,
      forks_count: 1,
    });
    expect(Object.keys(fork.forked_from_project).sort()).toEqual([
      'avatar_url',
      'created_at',
      'default_branch',
      'description',
      'forks_count',
      'http_url_to_repo',
      'id',
      'last_activity_at',
      'name',
      'name_with_namespace',
      'path',
      'path_with_namespace',
      'ssh_url_to_repo',
      'star_count',
      'tag_list',
      'topics',
      'web_url',
    ]);
    expect((await as(owner.token).get(`/projects/${source.id}`)).body).not.toHaveProperty('forked_from_project');
    const listed = (await as(other.token).get(`/projects?owned=true`)).body.find(
      (p: { id: number }) => p.id === forkId,
    );
    expect(listed.forked_from_project.id).toBe(source.id);
    // A source the caller may not see is left out.
    expect((await as(owner.token).put(`/projects/${source.id}`).send({ visibility: 'private' })).status).toBe(200);
    expect((await as(other.token).get(`/projects/${forkId}`)).body).not.toHaveProperty('forked_from_project');
    expect((await as(owner.token).put(`/projects/${source.id}`).send({ visibility: 'public' })).status).toBe(200);
    const forks = await as(owner.token).get(`/projects/${source.id}/forks`);
    expect(forks.body.map((p: { id: number }) => p.id)).toEqual([forkId]);
    // A fork of the fork works too.
    const third = await createUser(t);
    const again = await as(third.token).post(`/projects/${forkId}/fork`);
    expect(again.status).toBe(201);
    await eventually(
      async () => (await as(third.token).get(`/projects/${again.body.id}`)).body.import_status === 'finished',
    );
  });

  it("protects a fork's default branch once its copy is finished, as a first push would", async () => {
    const upstream = (await as(owner.token).post('/projects').send({ name: 'Guarded', visibility: 'public' })).body;
    const first = await as(owner.token)
      .post(`/projects/${upstream.id}/repository/files/README.md`)
      .send({ branch: 'master', commit_message: 'first', content: 'hi' });
    expect(first.status).toBe(201);
    const res = await as(other.token).post(`/projects/${upstream.id}/fork`);
    expect(res.status).toBe(201);
    const forkId = res.body.id;
    await eventually(async () => (await as(other.token).get(`/projects/${forkId}`)).body.import_status === 'finished');
    const rules = (await as(other.token).get(`/projects/${forkId}/protected_branches`)).body;
    expect(rules).toEqual([
      expect.objectContaining({
        name: 'master',
        push_access_levels: [expect.objectContaining({ access_level: 40 })],
        merge_access_levels: [expect.objectContaining({ access_level: 40 })],
      }),
    ]);
    // A developer of the fork cannot write to its default branch through the API, and can elsewhere.
    const developer = await createUser(t);
    expect(
      (await as(other.token).post(`/projects/${forkId}/members`).send({ user_id: developer.id, access_level: 30 }))
        .status,
    ).toBe(201);
    const refused = await as(developer.token)
      .post(`/projects/${forkId}/repository/files/x.md`)
      .send({ branch: 'master', commit_message: 'x', content: 'x' });
    expect([refused.status, refused.body]).toEqual([400, { message: 'You are not allowed to push into this branch' }]);
    const elsewhere = await as(developer.token)
      .post(`/projects/${forkId}/repository/files/x.md`)
      .send({ branch: 'topic', start_branch: 'master', commit_message: 'x', content: 'x' });
    expect(elsewhere.status).toBe(201);
  });

  it('holds writes and git requests to a fork until its copy finishes, then refuses them with 409 and 404', async () => {
    const upstream = (await as(owner.token).post('/projects').send({ name: 'Held back', visibility: 'public' })).body;
    const first = await as(owner.token)
      .post(`/projects/${upstream.id}/repository/files/README.md`)
      .send({ branch: 'master', commit_message: 'first', content: 'hi' });
    expect(first.status).toBe(201);
    const worker = t.app.get(GitJobsProcessor).worker;
    // The git worker held: the fork's copy stays scheduled, its repository not on disk.
    await worker.pause();
    const res = await as(other.token).post(`/projects/${upstream.id}/fork`);
    const forkId: number = res.body.id;
    try {
      expect([res.status, res.body.import_status]).toEqual([201, 'scheduled']);
      expect(existsSync(repositoryPath(t.config.dataDir, forkId))).toBe(false);
      // Reads see an empty repository meanwhile.
      expect((await as(other.token).get(`/projects/${forkId}/repository/branches`)).body).toEqual([]);
      // Every kind of write waits for the copy, then is refused in GitLab's words; git too (404).
      const refusal = { message: 'A repository for this project does not exist yet.' };
      await t.app.listen(0, '127.0.0.1');
      const { port } = t.app.getHttpServer().address() as AddressInfo;
      const url = `http://${other.username}:${other.token}@127.0.0.1:${port}/${other.username}/held-back.git`;
      const startedAt = Date.now();
      const [file, commit, branch, tag, clone, push, listed] = await Promise.all([
        as(other.token)
          .post(`/projects/${forkId}/repository/files/x.md`)
          .send({ branch: 'master', commit_message: 'x', content: 'x' }),
        as(other.token)
          .post(`/projects/${forkId}/repository/commits`)
          .send({
            branch: 'topic',
            commit_message: 'x',
            actions: [{ action: 'create', file_path: 'y', content: 'y' }],
          }),
        as(other.token).post(`/projects/${forkId}/repository/branches`).send({ branch: 'b', ref: 'master' }),
        as(other.token).post(`/projects/${forkId}/repository/tags`).send({ tag_name: 'v1', ref: 'master' }),
        t
          .http()
          .get(`/${other.username}/held-back.git/info/refs?service=git-upload-pack`)
          .auth(other.username, other.token),
        t
          .http()
          .get(`/${other.username}/held-back.git/info/refs?service=git-receive-pack`)
          .auth(other.username, other.token),
        runGit(['ls-remote', url]),
      ]);
      expect(Date.now() - startedAt).toBeGreaterThanOrEqual(FORK_COPY_WAIT_MS);
      for (const refused of [file, commit, branch, tag]) expect([refused.status, refused.body]).toEqual([409, refusal]);
      expect([clone.status, clone.text]).toEqual([404, `${refusal.message}\n`]);
      expect([push.status, push.text]).toEqual([404, `${refusal.message}\n`]);
      expect(listed.status).not.toBe(0);
      expect(listed.out).toContain('not found');
      // Nothing was written anywhere: no repository, nothing in the empty one reads are served from.
      expect(existsSync(repositoryPath(t.config.dataDir, forkId))).toBe(false);
      const emptyObjects = join(t.config.dataDir, 'cache', 'empty.git', 'objects');
      const written = existsSync(emptyObjects)
        ? readdirSync(emptyObjects).filter((name) => name !== 'info' && name !== 'pack')
        : [];
      expect(written).toEqual([]);
      // A write arriving while the copy is under way waits for it and lands on the copy, once the
      // default branch's protection is there: a developer's write to it is refused, the owner's lands.
      const developer = await createUser(t);
      expect(
        (await as(other.token).post(`/projects/${forkId}/members`).send({ user_id: developer.id, access_level: 30 }))
          .status,
      ).toBe(201);
      const waiting = Promise.all([
        as(other.token)
          .post(`/projects/${forkId}/repository/files/owner.md`)
          .send({ branch: 'master', commit_message: 'owner', content: 'o' }),
        as(developer.token)
          .post(`/projects/${forkId}/repository/files/developer.md`)
          .send({ branch: 'master', commit_message: 'developer', content: 'd' }),
      ]);
      await new Promise((resolve) => setTimeout(resolve, 300));
      worker.resume();
      const [byOwner, byDeveloper] = await waiting;
      expect(byOwner.status).toBe(201);
      expect([byDeveloper.status, byDeveloper.body]).toEqual([
        400,
        { message: 'You are not allowed to push into this branch' },
      ]);
    } finally {
      worker.resume();
    }
    const tree = (await as(other.token).get(`/projects/${forkId}/repository/tree?ref=master`)).body;
    expect(tree.map((e: { path: string }) => e.path).sort()).toEqual(['README.md', 'owner.md']);
    expect((await as(other.token).get(`/projects/${forkId}`)).body.import_status).toBe('finished');
    // Once copied, git serves it.
    const { port } = t.app.getHttpServer().address() as AddressInfo;
    const listed = await runGit([
      'ls-remote',
      `http://${other.username}:${other.token}@127.0.0.1:${port}/${other.username}/held-back.git`,
    ]);
    expect([listed.status, listed.out]).toEqual([0, expect.stringContaining('refs/heads/master')]);
  });

  it('answers 409 when the target namespace has the name already', async () => {
    const res = await as(owner.token).post(`/projects/${source.id}/fork`);
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ message: { name: ['has already been taken'], path: ['has already been taken'] } });
  });

  it('forks into a group the caller may create projects in, by id or path; 404 Target Namespace otherwise', async () => {
    const group = (
      await as(other.token)
        .post('/groups')
        .send({ name: 'Forkers', path: `forkers-${other.id}`, visibility: 'internal' })
    ).body;
    const byPath = await as(other.token).post(`/projects/${source.id}/fork`).send({ namespace: group.full_path });
    expect(byPath.status).toBe(201);
    expect(byPath.body.namespace).toMatchObject({ id: group.id, kind: 'group' });
    // A public source forked into an internal group becomes internal.
    expect(byPath.body.visibility).toBe('internal');
    const stranger = await createUser(t);
    const refused = await as(stranger.token).post(`/projects/${source.id}/fork`).send({ namespace: group.id });
    expect(refused.status).toBe(404);
    expect(refused.body).toEqual({ message: '404 Target Namespace Not Found' });
    expect((await as(other.token).post(`/projects/${source.id}/fork`).send({ namespace: 'nowhere' })).body).toEqual({
      message: '404 Target Namespace Not Found',
    });
  });

  it('refuses anonymous callers (401) and invisible sources (404)', async () => {
    expect((await t.http().post(`/api/v4/projects/${source.id}/fork`)).status).toBe(401);
    const secret = (await as(owner.token).post('/projects').send({ name: 'Secret' })).body;
    expect((await as(other.token).post(`/projects/${secret.id}/fork`)).body).toEqual({
      message: '404 Project Not Found',
    });
  });

  it('refuses a guest of a private project, direct or through a group, and lets a reporter fork it', async () => {
    const group = (
      await as(owner.token)
        .post('/groups')
        .send({ name: 'Guarded', path: `guarded-${owner.id}`, visibility: 'private' })
    ).body;
    const secret = (await as(owner.token).post('/projects').send({ name: 'Guarded code', namespace_id: group.id }))
      .body;
    const directGuest = await createUser(t);
    const groupGuest = await createUser(t);
    const reporter = await createUser(t);
    expect(
      (await as(owner.token).post(`/projects/${secret.id}/members`).send({ user_id: directGuest.id, access_level: 10 }))
        .status,
    ).toBe(201);
    expect(
      (await as(owner.token).post(`/groups/${group.id}/members`).send({ user_id: groupGuest.id, access_level: 10 }))
        .status,
    ).toBe(201);
    expect(
      (await as(owner.token).post(`/projects/${secret.id}/members`).send({ user_id: reporter.id, access_level: 20 }))
        .status,
    ).toBe(201);
    for (const guest of [directGuest, groupGuest]) {
      // The guest sees the project but may not download its code, so may not copy it.
      expect((await as(guest.token).get(`/projects/${secret.id}`)).status).toBe(200);
      const refused = await as(guest.token).post(`/projects/${secret.id}/fork`);
      expect(refused.status).toBe(409);
      expect(refused.body).toEqual({ message: { forked_from_project_id: ['is forbidden'] } });
      expect((await as(guest.token).get('/projects?owned=true')).body).toEqual([]);
    }
    const forked = await as(reporter.token).post(`/projects/${secret.id}/fork`);
    expect(forked.status).toBe(201);
    expect(forked.body.forked_from_project.id).toBe(secret.id);
  });

  describe('fork relation (administrators)', () => {
    it('relates two projects, 409 when already forked, and removes the relation (204, then 304)', async () => {
      const a = (await as(owner.token).post('/projects').send({ name: 'Rel A' })).body;
      expect((await as(owner.token).post(`/projects/${a.id}/fork/${source.id}`)).status).toBe(403);
      const made = await as(t.rootToken).post(`/projects/${a.id}/fork/${source.id}`);
      expect(made.status).toBe(201);
      expect(made.body.id).toBe(a.id);
      expect((await as(t.rootToken).post(`/projects/${a.id}/fork/${source.id}`)).body).toEqual({
        message: 'Project already forked',
      });
      expect((await as(t.rootToken).post(`/projects/${a.id}/fork/99999`)).body).toEqual({
        message: '404 Source Project Not Found',
      });
      expect((await as(other.token).delete(`/projects/${a.id}/fork`)).status).toBe(404);
      const removed = await as(owner.token).delete(`/projects/${a.id}/fork`);
      expect(removed.status).toBe(204);
      const again = await as(owner.token).delete(`/projects/${a.id}/fork`);
      expect(again.status).toBe(304);
      expect(again.text).toBe('');
    });
  });

  describe('housekeeping', () => {
    it('is 201 for owners, 403 for developers, 401 anonymous, and 409 while one is pending', async () => {
      const p = (await as(owner.token).post('/projects').send({ name: 'Tidy', visibility: 'public' })).body;
      const dev = await createUser(t);
      expect(
        (await as(owner.token).post(`/projects/${p.id}/members`).send({ user_id: dev.id, access_level: 30 })).status,
      ).toBe(201);
      expect((await as(dev.token).post(`/projects/${p.id}/housekeeping`)).status).toBe(403);
      expect((await t.http().post(`/api/v4/projects/${p.id}/housekeeping`)).status).toBe(401);
      const first = await as(owner.token).post(`/projects/${p.id}/housekeeping`);
      expect(first.status).toBe(201);
      const [{ count }] = await t.db.query(
        `select count(*)::int as count from outbox where name = 'housekeeping' and job_id like $1`,
        [`housekeeping-${p.id}-%`],
      );
      expect(count).toBe(1);
      // Once the job has reported back, another run may be asked for.
      await eventually(async () => {
        const [{ done }] = await t.db.query(
          `select count(*)::int as done from events where stream_id = $1 and type = 'ProjectHousekeepingFinished'`,
          [`project-${p.id}`],
        );
        return done === 1;
      });
      expect((await as(owner.token).post(`/projects/${p.id}/housekeeping`)).status).toBe(201);
    });

    it('answers 409 for a request while one is pending', async () => {
      const p = (await as(owner.token).post('/projects').send({ name: 'Busy' })).body;
      // Hold the git worker, so the first run stays pending.
      const worker = t.app.get(GitJobsProcessor).worker;
      await worker.pause();
      try {
        expect((await as(owner.token).post(`/projects/${p.id}/housekeeping`)).status).toBe(201);
        const second = await as(owner.token).post(`/projects/${p.id}/housekeeping`);
        expect(second.status).toBe(409);
        expect(second.body).toEqual({ message: 'Housekeeping is already pending for this project' });
      } finally {
        worker.resume();
      }
      await eventually(async () => (await as(owner.token).post(`/projects/${p.id}/housekeeping`)).status === 201);
    });
  });
});

describe('repositories on disk', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  const git = (args: string[], cwd?: string) =>
    execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

  it('creates a bare repository with the project, copies it for a fork, and removes it after deletion', async () => {
    const created = await t
      .http()
      .post('/api/v4/projects')
      .set('PRIVATE-TOKEN', t.rootToken)
      .send({ name: 'On Disk', default_branch: 'main' });
    expect(created.status).toBe(201);
    const path = repositoryPath(t.config.dataDir, created.body.id);
    expect(path).toMatch(/repositories\/@hashed\/[0-9a-f]{2}\/[0-9a-f]{2}\/[0-9a-f]{64}\.git$/);
    expect(git(['rev-parse', '--is-bare-repository'], path)).toBe('true');
    expect(git(['symbolic-ref', 'HEAD'], path)).toBe('refs/heads/main');

    // Give the source a commit (pushed with the git CLI straight into the bare repository).
    const work = mkdtempSync(join(tmpdir(), 'lode-work-'));
    git(['init', '--quiet', '-b', 'main', work]);
    writeFileSync(join(work, 'README.md'), '# hello\n');
    git(['-c', 'user.name=T', '-c', 'user.email=t@example.com', 'add', '.'], work);
    git(['-c', 'user.name=T', '-c', 'user.email=t@example.com', 'commit', '--quiet', '-m', 'first'], work);
    git(['push', '--quiet', path, 'main'], work);
    const head = git(['rev-parse', 'main'], work);

    const forked = await t
      .http()
      .post(`/api/v4/projects/${created.body.id}/fork`)
      .set('PRIVATE-TOKEN', t.rootToken)
      .send({
        namespace: (
          await t.http().post('/api/v4/groups').set('PRIVATE-TOKEN', t.rootToken).send({ name: 'Disk', path: 'disk' })
        ).body.id,
      });
    expect(forked.status).toBe(201);
    await eventually(
      async () =>
        (await t.http().get(`/api/v4/projects/${forked.body.id}`).set('PRIVATE-TOKEN', t.rootToken)).body
          .import_status === 'finished',
    );
    const forkPath = repositoryPath(t.config.dataDir, forked.body.id);
    expect(git(['rev-parse', 'main'], forkPath)).toBe(head);
    expect(git(['fsck', '--no-progress'], forkPath)).toBe('');
    // The fork's statistics come with its copy.
    const forkStats = (
      await t.http().get(`/api/v4/projects/${forked.body.id}?statistics=true`).set('PRIVATE-TOKEN', t.rootToken)
    ).body.statistics;
    expect(forkStats.commit_count).toBe(1);
    expect(forkStats.repository_size).toBeGreaterThan(0);

    // Housekeeping packs the repository and leaves it consistent.
    expect(
      (await t.http().post(`/api/v4/projects/${created.body.id}/housekeeping`).set('PRIVATE-TOKEN', t.rootToken))
        .status,
    ).toBe(201);
    await eventually(() => existsSync(join(path, 'packed-refs')));
    expect(git(['rev-parse', 'main'], path)).toBe(head);
    // ... and refreshes the statistics when it finishes.
    await eventually(
      async () =>
        (await t.http().get(`/api/v4/projects/${created.body.id}?statistics=true`).set('PRIVATE-TOKEN', t.rootToken))
          .body.statistics.commit_count === 1,
    );

    expect(
      (await t.http().delete(`/api/v4/projects/${created.body.id}`).set('PRIVATE-TOKEN', t.rootToken)).status,
    ).toBe(202);
    await eventually(() => !existsSync(path));
    // The fork keeps its own copy.
    expect(git(['rev-parse', 'main'], forkPath)).toBe(head);
  });

  it("ends a fork whose job was killed mid-way (stalled past BullMQ's limit) as failed", async () => {
    const root = (path: string) => t.http().post(`/api/v4${path}`).set('PRIVATE-TOKEN', t.rootToken);
    const source = (await root('/projects').send({ name: 'Stalling' })).body;
    // Without the source's repository the job fails and waits for its retry, leaving the fork `started`
    // as a job killed mid-way does.
    rmSync(repositoryPath(t.config.dataDir, source.id), { recursive: true, force: true });
    const forked = await root(`/projects/${source.id}/fork`).send({
      namespace: (await root('/groups').send({ name: 'Stall', path: 'stall' })).body.id,
    });
    expect(forked.status).toBe(201);
    const status = async () =>
      (await t.http().get(`/api/v4/projects/${forked.body.id}`).set('PRIVATE-TOKEN', t.rootToken)).body.import_status;
    await eventually(async () => (await status()) === 'started');
    const processor = t.app.get(GitJobsProcessor);
    const job = {
      data: { kind: 'fork-repository', projectId: forked.body.id, sourceProjectId: source.id },
      attemptsMade: 1,
      opts: { attempts: 5 },
    };
    await processor.onFailed(job as never, new Error('job stalled more than allowable limit'));
    const after = (await t.http().get(`/api/v4/projects/${forked.body.id}`).set('PRIVATE-TOKEN', t.rootToken)).body;
    expect(after).toMatchObject({ import_status: 'failed', import_error: 'job stalled more than allowable limit' });
    // A copy that failed is not waited for: a write is refused at once.
    const startedAt = Date.now();
    const write = await root(`/projects/${forked.body.id}/repository/branches`).send({ branch: 'b', ref: 'master' });
    expect([write.status, write.body]).toEqual([409, { message: 'A repository for this project does not exist yet.' }]);
    expect(Date.now() - startedAt).toBeLessThan(FORK_COPY_WAIT_MS);
  });

  it('removes the repositories of projects deleted with their group (and its subgroups), and no other', async () => {
    const root = (path: string) => t.http().post(`/api/v4${path}`).set('PRIVATE-TOKEN', t.rootToken);
    const group = (await root('/groups').send({ name: 'Doomed', path: 'doomed' })).body;
    const sub = (await root('/groups').send({ name: 'Inner', path: 'inner', parent_id: group.id })).body;
    const inGroup = (await root('/projects').send({ name: 'A', namespace_id: group.id })).body;
    const inSub = (await root('/projects').send({ name: 'B', namespace_id: sub.id })).body;
    const elsewhere = (await root('/projects').send({ name: 'Survivor' })).body;
    const paths = [inGroup, inSub, elsewhere].map((p) => repositoryPath(t.config.dataDir, p.id));
    expect(paths.every((p) => existsSync(p))).toBe(true);
    expect((await t.http().delete(`/api/v4/groups/${group.id}`).set('PRIVATE-TOKEN', t.rootToken)).status).toBe(204);
    await eventually(() => !existsSync(paths[0]) && !existsSync(paths[1]));
    expect(existsSync(paths[2])).toBe(true);
  });
});
