import { PushRecorder, PushReconciler } from '@app/projects';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { gitOk } from '../support/git';
import { createUser, type SeededUser } from '../support/seed';
import { eventually, startTestApp, type TestApp } from '../support/test-app';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { RepositoryWrites } from '../../libs/repositories/src/writes/repository-writes';

interface Update {
  ref: string;
  before: string;
  after: string;
  commits: { id: string; message: string; added: string[] }[];
  totalCommitsCount: number;
}

/**
 * API commits to one branch in groups: while one commit of a branch is written, the next ones queue,
 * and are then made together as one push (each built on the one before, one record, one ref move).
 * Each still answers its own commit, a refused one its own 400, and each commit is its own update in
 * the record, so hooks hear one push per commit as from GitLab.
 */
describe('API commits on one branch in groups', () => {
  let t: TestApp;
  let owner: SeededUser;
  let developer: SeededUser;
  let receiver: WebhookReceiver;
  /** The push hooks heard, each delivery once (deliveries are at least once). */
  const hooks = (): { before: string; after: string; total_commits_count: number; commits: { id: string }[] }[] =>
    receiver.distinct().map((d) => d.body);

  const api = (user: SeededUser, method: 'post' | 'get', path: string, body?: object) => {
    const req = t.http()[method](`/api/v4${path}`).set('PRIVATE-TOKEN', user.token);
    return body ? req.send(body) : req;
  };
  const repoDir = (id: number) => {
    const hash = createHash('sha256').update(String(id)).digest('hex');
    return join(t.config.dataDir, 'repositories', '@hashed', hash.slice(0, 2), hash.slice(2, 4), `${hash}.git`);
  };
  /**
   * Sends `bodies` at once while the branch's queue is held by another write, and lets it go once all
   * of them wait: they are then one batch, whatever the machine's speed.
   */
  async function together(projectId: number, user: SeededUser, bodies: object[]) {
    const writes = t.app.get(RepositoryWrites);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    void writes.exclusive({ id: projectId, import_status: 'none' }, 'refs/heads/master', () => held);
    const answers = Promise.all(bodies.map((b) => api(user, 'post', `/projects/${projectId}/repository/commits`, b)));
    await eventually(() => writes.waiting({ id: projectId }, 'master') === bodies.length, 30_000, 20);
    release();
    return answers;
  }
  const pushes = async (projectId: number) =>
    (
      await t.db.query<{ data: { updates: Update[] } }[]>(
        `select data from events where type = 'RepositoryPushed' and (data->>'projectId')::int = $1 order by global_position`,
        [projectId],
      )
    ).map((r) => r.data.updates);
  async function project(name: string): Promise<{ id: number; tip: string }> {
    const p = (await api(owner, 'post', '/projects', { name, visibility: 'private' })).body as { id: number };
    expect(
      (await api(owner, 'post', `/projects/${p.id}/members`, { user_id: developer.id, access_level: 30 })).status,
    ).toBe(201);
    const first = await api(owner, 'post', `/projects/${p.id}/repository/commits`, {
      branch: 'master',
      commit_message: 'base',
      actions: [{ action: 'create', file_path: 'base.txt', content: 'base\n' }],
    });
    expect(first.status).toBe(201);
    return { id: p.id, tip: first.body.id };
  }

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    t = await startTestApp({ allowLocalWebhooks: true, defaultBranchProtection: 0 });
    await t.app.listen(0, '127.0.0.1');
    owner = await createUser(t, { name: 'Olive Owner' });
    developer = await createUser(t);
    // The last test calls the reconciler itself and counts what it took.
    await t.app.get(PushReconciler).stop();
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  it('makes thirty concurrent commits as a linear chain, each answered with its own commit, refusals alone', async () => {
    const p = await project('Batched');
    const hook = await api(owner, 'post', `/projects/${p.id}/hooks`, {
      url: `${receiver.url}/hook`,
      push_events: true,
    });
    expect(hook.status).toBe(201);
    // 26 commits that apply, and four that do not against the tree they are built on: an update of a
    // missing file, a create of an existing one, a stale last_commit_id, and the second create of a
    // file another request of the same batch creates (which of the two wins is the queue's order).
    const bodies: object[] = Array.from({ length: 26 }, (_, i) => ({
      branch: 'master',
      commit_message: `writer ${i}`,
      actions: [{ action: 'create', file_path: `batch/${i}.txt`, content: `${i}\n` }],
    }));
    const refused = [
      { action: 'update', file_path: 'missing.txt', content: 'x' },
      { action: 'create', file_path: 'base.txt', content: 'x' },
      { action: 'update', file_path: 'base.txt', content: 'x', last_commit_id: 'f'.repeat(40) },
    ].map((action, i) => ({ branch: 'master', commit_message: `refused ${i}`, actions: [action] }));
    bodies.splice(5, 0, refused[0]);
    bodies.splice(12, 0, refused[1]);
    bodies.splice(20, 0, refused[2]);
    bodies.splice(8, 0, {
      branch: 'master',
      commit_message: 'dup a',
      actions: [{ action: 'create', file_path: 'dup.txt', content: 'a' }],
    });
    bodies.splice(24, 0, {
      branch: 'master',
      commit_message: 'dup b',
      actions: [{ action: 'create', file_path: 'dup.txt', content: 'b' }],
    });
    expect(bodies).toHaveLength(31);

    const answers = await together(p.id, developer, bodies);
    const made = answers.filter((a) => a.status === 201);
    const messages = Object.fromEntries(
      answers.map((a, i) => [(bodies[i] as { commit_message: string }).commit_message, a]),
    );
    expect(messages['refused 0'].status).toBe(400);
    expect(messages['refused 0'].body.message).toBe("A file with this name doesn't exist");
    expect(messages['refused 1'].status).toBe(400);
    expect(messages['refused 1'].body.message).toBe('A file with this name already exists');
    expect(messages['refused 2'].status).toBe(400);
    expect(messages['refused 2'].body.message).toBe('The file has changed since you started editing it: base.txt');
    expect([messages['dup a'].status, messages['dup b'].status].sort()).toEqual([201, 400]);
    expect(made).toHaveLength(27);

    // Each answer is its own commit: its message, its file, one parent.
    for (const a of made) {
      const body = bodies[answers.indexOf(a)] as { commit_message: string };
      expect(a.body.title).toBe(body.commit_message);
      expect(a.body.parent_ids).toHaveLength(1);
      expect(a.body.author_email).toBe(developer.email);
    }
    // All of them in the branch's history, one after the other, on the base.
    const dir = repoDir(p.id);
    const log = (await gitOk(['rev-list', '--parents', 'master'], dir))
      .trim()
      .split('\n')
      .map((l) => l.split(' '));
    expect(log).toHaveLength(28);
    for (let i = 0; i < log.length - 1; i++) expect(log[i]).toEqual([log[i][0], log[i + 1][0]]);
    expect(log[27]).toEqual([p.tip]);
    expect(new Set(log.slice(0, 27).map((l) => l[0]))).toEqual(new Set(made.map((a) => a.body.id)));
    for (const a of made) expect(a.body.parent_ids[0]).toBe(log[log.findIndex((l) => l[0] === a.body.id) + 1][0]);

    // Recorded as one push whose updates chain, one update per commit.
    const records = await pushes(p.id);
    expect(records).toHaveLength(2);
    const updates = records[1];
    expect(updates).toHaveLength(27);
    updates.forEach((u, i) => {
      expect(u.before).toBe(i === 0 ? p.tip : updates[i - 1].after);
      expect(u.totalCommitsCount).toBe(1);
      expect(u.commits.map((c) => c.id)).toEqual([u.after]);
    });
    expect(updates.at(-1)!.after).toBe(log[0][0]);
    expect(
      (
        await t.db.query<{ n: number }[]>(`select count(*)::int as n from pending_pushes where project_id = $1`, [p.id])
      )[0].n,
    ).toBe(0);

    // GitLab's hooks: one push hook per API commit, `before` its parent, `after` the commit. The
    // project's base commit may be heard too: its fan-out reads the project's hooks when it runs (as
    // GitLab's post-receive job does), which on a loaded machine is after this hook was added.
    const batchHooks = () => hooks().filter((h) => h.after !== p.tip);
    await eventually(() => batchHooks().length >= 27, 30_000);
    expect(batchHooks()).toHaveLength(27);
    expect(hooks().length - batchHooks().length).toBeLessThanOrEqual(1);
    const heard = new Map(batchHooks().map((h) => [h.after, h]));
    for (const u of updates) {
      expect(heard.get(u.after)).toMatchObject({ before: u.before, total_commits_count: 1 });
      expect(heard.get(u.after)!.commits.map((c) => c.id)).toEqual([u.after]);
    }
  });

  it('refuses every commit of a batch to a protected branch, leaving nothing written down', async () => {
    const p = await project('Protected');
    expect((await api(owner, 'post', `/projects/${p.id}/protected_branches`, { name: 'master' })).status).toBe(201);
    const answers = await together(
      p.id,
      developer,
      Array.from({ length: 6 }, (_, i) => ({
        branch: 'master',
        commit_message: `blocked ${i}`,
        actions: [{ action: 'create', file_path: `b${i}.txt`, content: 'x' }],
      })),
    );
    expect(answers.map((a) => [a.status, a.body.message])).toEqual(
      Array(6).fill([403, '403 Forbidden - You are not allowed to push into this branch']),
    );
    expect((await gitOk(['rev-parse', 'master'], repoDir(p.id))).trim()).toBe(p.tip);
    expect(await pushes(p.id)).toHaveLength(1);
    expect(
      (
        await t.db.query<{ n: number }[]>(`select count(*)::int as n from pending_pushes where project_id = $1`, [p.id])
      )[0].n,
    ).toBe(0);
  });

  it('records a batch whose process died after the ref moved, every commit its own update, through the reconciler', async () => {
    const p = await project('Interrupted');
    const recorder = t.app.get(PushRecorder);
    const record = recorder.record.bind(recorder);
    recorder.record = async () => undefined;
    let answers;
    try {
      answers = await together(
        p.id,
        owner,
        Array.from({ length: 8 }, (_, i) => ({
          branch: 'master',
          commit_message: `lost ${i}`,
          actions: [{ action: 'create', file_path: `l${i}.txt`, content: 'x' }],
        })),
      );
    } finally {
      recorder.record = record;
    }
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(201));
    expect(await pushes(p.id)).toHaveLength(1);
    expect(await t.app.get(PushReconciler).reconcile(0)).toBe(1);
    const records = await pushes(p.id);
    expect(records).toHaveLength(2);
    const updates = records[1];
    expect(updates).toHaveLength(8);
    expect(new Set(updates.map((u) => u.after))).toEqual(new Set(answers.map((a) => a.body.id)));
    updates.forEach((u, i) => expect(u.before).toBe(i === 0 ? p.tip : updates[i - 1].after));
  });
});
