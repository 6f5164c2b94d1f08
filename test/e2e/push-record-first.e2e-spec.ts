import { PendingPushes, PushReconciler, PushRecorder } from '@app/projects';
import { ownerTag, THIS_PROCESS } from '@app/platform';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { repositoryPath } from '@app/git';
import { git, gitOk, tempDirs } from '../support/git';
import { createUser, type SeededUser } from '../support/seed';
import { startTestApp, type TestApp } from '../support/test-app';

const ZERO = '0'.repeat(40);

/**
 * Issue 15, section 1: a push is written down in PostgreSQL at git's pre-receive, before any ref
 * moves, and struck off when its `RepositoryPushed` is appended. The test hooks below stand for a
 * process that dies between the two, or a PostgreSQL that refuses the first write.
 */
describe('pushes recorded before git says ok', () => {
  let t: TestApp;
  let base: string;
  let owner: SeededUser;
  let access: PushRecorder;
  let pending: PendingPushes;
  const tmp = tempDirs();

  const url = (path: string) => `http://git:${owner.token}@${base}/${path}.git`;
  async function project(name: string) {
    const res = await t.http().post('/api/v4/projects').set('PRIVATE-TOKEN', owner.token).send({ name });
    expect(res.status).toBe(201);
    return res.body as { id: number; path_with_namespace: string };
  }
  async function workingCopy(): Promise<{ dir: string; head: string }> {
    const dir = tmp.make();
    await gitOk(['init', '-q', '-b', 'master', dir]);
    writeFileSync(join(dir, 'a.txt'), 'a\n');
    await gitOk(['add', '.'], dir);
    await gitOk(['commit', '-q', '-m', 'a'], dir);
    return { dir, head: (await gitOk(['rev-parse', 'HEAD'], dir)).trim() };
  }
  const pushed = async (projectId: number) =>
    t.db.query<{ data: { userId: number; updates: { ref: string; after: string }[] }; metadata: { origin: string } }[]>(
      `select data, metadata from events where type = 'RepositoryPushed' and (data->>'projectId')::int = $1
        order by global_position`,
      [projectId],
    );
  const written = async (projectId: number) =>
    (
      await t.db.query<{ n: number }[]>(`select count(*)::int as n from pending_pushes where project_id = $1`, [
        projectId,
      ])
    )[0].n;

  beforeAll(async () => {
    t = await startTestApp();
    await t.app.listen(0, '127.0.0.1');
    base = `127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    owner = await createUser(t);
    access = t.app.get(PushRecorder);
    pending = t.app.get(PendingPushes);
    // The tests call the reconciler themselves and count what it took: a background round (one runs
    // a second after start, when the second test is under way) would take a push before them.
    await t.app.get(PushReconciler).stop();
  });
  afterAll(async () => {
    tmp.removeAll();
    await t.close();
  });

  it('strikes the written-down push off in the transaction that records it', async () => {
    const p = await project('Ordinary');
    const { dir } = await workingCopy();
    await gitOk(['push', '-q', url(p.path_with_namespace), 'master'], dir);
    expect(await pushed(p.id)).toHaveLength(1);
    expect(await written(p.id)).toBe(0);
  });

  it('records, through the reconciler and as its pusher, a push whose process died after its refs moved', async () => {
    const p = await project('Interrupted');
    const { dir, head } = await workingCopy();
    // The process "dies" between git's ref update and the record: nothing is recorded by it.
    const recordPush = access.record.bind(access);
    access.record = async () => undefined;
    try {
      await gitOk(['push', '-q', url(p.path_with_namespace), 'master'], dir);
    } finally {
      access.record = recordPush;
    }
    expect(await pushed(p.id)).toHaveLength(0);
    expect(await written(p.id)).toBe(1);
    // A retry of the client changes nothing: git says everything is up to date.
    expect((await git(['push', url(p.path_with_namespace), 'master'], dir)).out).toContain('Everything up-to-date');

    // Too young for the reconciler's ordinary run (a live push may still be recording it)...
    expect(await t.app.get(PushReconciler).reconcile()).toBe(0);
    // ...taken once it is old enough.
    expect(await t.app.get(PushReconciler).reconcile(0)).toBe(1);
    const [event] = await pushed(p.id);
    expect(event.data.userId).toBe(owner.id);
    expect(event.metadata.origin).toBe('reconciler');
    expect(event.data.updates).toEqual([
      expect.objectContaining({ ref: 'refs/heads/master', before: ZERO, after: head }),
    ]);
    expect(await written(p.id)).toBe(0);
    const after = await t.http().get(`/api/v4/projects/${p.id}`).set('PRIVATE-TOKEN', owner.token);
    expect(after.body.default_branch).toBe('master');
    // The push fan-out (hooks) follows the event like any other.
    const fanout = await t.db.query<{ n: number }[]>(
      `select count(*)::int as n from outbox where name = 'push-fanout' and data->>'projectId' = $1`,
      [String(p.id)],
    );
    expect(fanout[0].n).toBe(1);
  });

  it('records at once a push whose process is known to be gone, without waiting for it to age', async () => {
    const p = await project('Killed');
    const { dir, head } = await workingCopy();
    const recordPush = access.record.bind(access);
    access.record = async () => undefined;
    try {
      await gitOk(['push', '-q', url(p.path_with_namespace), 'master'], dir);
    } finally {
      access.record = recordPush;
    }
    // Written down by this (live) process: too young to take.
    const [row] = await t.db.query<{ owner: string }[]>(`select owner from pending_pushes where project_id = $1`, [
      p.id,
    ]);
    expect(row.owner).toBe(ownerTag());
    expect(await t.app.get(PushReconciler).reconcile()).toBe(0);
    // As if this process had been killed and a new one started on the machine: the writer is gone.
    const deadPid = spawnSync(process.execPath, ['-e', '']).pid!;
    const gone = ownerTag({ ...THIS_PROCESS, pid: deadPid });
    await t.db.query(`update pending_pushes set owner = $1 where project_id = $2`, [gone, p.id]);
    expect(await t.app.get(PushReconciler).reconcile()).toBe(1);
    const [event] = await pushed(p.id);
    expect([event.metadata.origin, event.data.updates[0].after]).toEqual(['reconciler', head]);
    expect(await written(p.id)).toBe(0);
  });

  it('records a push once when its recorder and the reconciler both get to it', async () => {
    const p = await project('Twice');
    const { dir, head } = await workingCopy();
    const recordPush = access.record.bind(access);
    access.record = async () => undefined;
    try {
      await gitOk(['push', '-q', url(p.path_with_namespace), 'master'], dir);
    } finally {
      access.record = recordPush;
    }
    const [row] = await t.db.query<{ id: string }[]>(`select id from pending_pushes where project_id = $1`, [p.id]);
    const updates = [{ ref: 'refs/heads/master', before: ZERO, after: head }];
    const row2 = { id: p.id, default_branch: null };
    await Promise.all([
      access.record(row2, { id: owner.id, username: owner.username }, updates, String(row.id)),
      access.record(row2, { id: owner.id, username: owner.username }, updates, String(row.id)),
    ]);
    expect(await pushed(p.id)).toHaveLength(1);
    expect(await t.app.get(PushReconciler).reconcile(0)).toBe(0);
    expect(await pushed(p.id)).toHaveLength(1);
  });

  /** The recorded updates of one ref in record order, and whether each `before` is the previous `after`. */
  async function chain(projectId: number, ref = 'refs/heads/master') {
    const moves = (await pushed(projectId)).flatMap((e) =>
      (e.data.updates as { ref: string; before: string; after: string }[])
        .filter((u) => u.ref === ref)
        .map((u) => ({ before: u.before, after: u.after, userId: e.data.userId })),
    );
    const holes = moves.filter((m, i) => m.before !== (i === 0 ? ZERO : moves[i - 1].after));
    return { moves, holes };
  }
  async function commit(dir: string, file: string): Promise<string> {
    writeFileSync(join(dir, file), `${file}\n`);
    await gitOk(['add', '.'], dir);
    await gitOk(['commit', '-q', '-m', file], dir);
    return (await gitOk(['rev-parse', 'HEAD'], dir)).trim();
  }
  /** A push whose process "dies" between the ref update and its record. */
  async function pushAndDie(args: string[], dir: string) {
    const recordPush = access.record.bind(access);
    access.record = async () => undefined;
    try {
      await gitOk(args, dir);
    } finally {
      access.record = recordPush;
    }
  }
  const fanouts = async (projectId: number) =>
    (
      await t.db.query<{ n: number }[]>(
        `select count(*)::int as n from outbox where name = 'push-fanout' and data->>'projectId' = $1`,
        [String(projectId)],
      )
    )[0].n;

  // Issue 23: a move overtaken by a later push is still a move a CI receiver must hear about.
  it('records a move overtaken before its record ahead of the later push, for its own pusher', async () => {
    const p = await project('Overtaken');
    const { dir, head: first } = await workingCopy();
    await pushAndDie(['push', '-q', url(p.path_with_namespace), 'master'], dir);
    const second = await commit(dir, 'b.txt');
    // Another user (root) pushes on top of the move nobody recorded.
    await gitOk(['push', '-q', `http://root:${t.rootToken}@${base}/${p.path_with_namespace}.git`, 'master'], dir);
    const { moves, holes } = await chain(p.id);
    expect(moves.map((m) => [m.before, m.after])).toEqual([
      [ZERO, first],
      [first, second],
    ]);
    expect(moves[0].userId).toBe(owner.id);
    expect(moves[1].userId).not.toBe(owner.id);
    expect(holes).toEqual([]);
    expect(await written(p.id)).toBe(0);
    // The reconciler finds nothing left, and each move has its push hook fan-out.
    expect(await t.app.get(PushReconciler).reconcile(0)).toBe(0);
    expect(await fanouts(p.id)).toBe(2);
    const seen = await t.http().get(`/api/v4/projects/${p.id}`).set('PRIVATE-TOKEN', owner.token);
    expect(seen.body.default_branch).toBe('master');
  });

  it('records both moves, in order, when the reconciler takes a push and the push that overtook it', async () => {
    const p = await project('Overtaken Twice');
    const { dir, head: first } = await workingCopy();
    await pushAndDie(['push', '-q', url(p.path_with_namespace), 'master'], dir);
    const second = await commit(dir, 'b.txt');
    await pushAndDie(['push', '-q', url(p.path_with_namespace), 'master'], dir);
    expect(await written(p.id)).toBe(2);
    expect(await t.app.get(PushReconciler).reconcile(0)).toBe(2);
    const { moves, holes } = await chain(p.id);
    expect(moves.map((m) => [m.before, m.after])).toEqual([
      [ZERO, first],
      [first, second],
    ]);
    expect(holes).toEqual([]);
    expect(await fanouts(p.id)).toBe(2);
  });

  it('records a move no written-down push explains as the range the next record starts from', async () => {
    const p = await project('Moved Aside');
    const { dir, head: first } = await workingCopy();
    await gitOk(['push', '-q', url(p.path_with_namespace), 'master'], dir);
    const second = await commit(dir, 'b.txt');
    await gitOk(['push', '-q', url(p.path_with_namespace), 'master:side'], dir);
    // The ref moves on disk, outside any push (an operator's `git update-ref`).
    await gitOk([
      '--git-dir',
      repositoryPath(t.config.dataDir, p.id),
      'update-ref',
      'refs/heads/master',
      second,
      first,
    ]);
    const third = await commit(dir, 'c.txt');
    await gitOk(['push', '-q', url(p.path_with_namespace), 'master'], dir);
    const { moves, holes } = await chain(p.id);
    expect(moves.map((m) => [m.before, m.after])).toEqual([
      [ZERO, first],
      [first, second],
      [second, third],
    ]);
    expect(holes).toEqual([]);
  });

  it('refuses the push, moving no ref, when PostgreSQL cannot write it down', async () => {
    const p = await project('Refused');
    const { dir } = await workingCopy();
    const begin = pending.begin.bind(pending);
    pending.begin = async () => {
      throw new Error('connection terminated');
    };
    let refused: { status: number; out: string };
    try {
      refused = await git(['push', url(p.path_with_namespace), 'master'], dir);
    } finally {
      pending.begin = begin;
    }
    expect(refused.status).not.toBe(0);
    expect(refused.out).toContain('remote: GitLab: Lode could not check this push; try again.');
    expect(refused.out).toContain('pre-receive hook declined');
    expect((await gitOk(['ls-remote', url(p.path_with_namespace)])).trim()).toBe('');
    expect(await pushed(p.id)).toHaveLength(0);
    // Once PostgreSQL takes it again, the same push goes through.
    await gitOk(['push', '-q', url(p.path_with_namespace), 'master'], dir);
    expect(await pushed(p.id)).toHaveLength(1);
  });

  it("reads a written-down push's remaining updates with the other pushes that name its refs, in one read", async () => {
    const p = await project('Standing');
    const pending = t.app.get(PendingPushes);
    const pusher = {
      id: owner.id,
      username: owner.username,
      isAdmin: false,
      external: false,
      scopes: ['api'],
      impersonation: false,
    };
    const update = (ref: string, before: string, after: string) => ({ ref: `refs/heads/${ref}`, before, after });
    const mine = await pending.begin(
      p.id,
      [update('master', ZERO, 'a'.repeat(40)), update('topic', ZERO, 'b'.repeat(40))],
      pusher,
    );
    const onMaster = await pending.begin(p.id, [update('master', 'a'.repeat(40), 'c'.repeat(40))], pusher);
    await pending.begin(p.id, [update('elsewhere', ZERO, 'd'.repeat(40))], pusher);
    const otherProject = await project('Standing Elsewhere');
    await pending.begin(otherProject.id, [update('master', ZERO, 'e'.repeat(40))], pusher);
    try {
      const standing = await pending.standing(p.id, ['refs/heads/master', 'refs/heads/topic'], mine);
      expect(standing.own).toEqual([update('master', ZERO, 'a'.repeat(40)), update('topic', ZERO, 'b'.repeat(40))]);
      expect(standing.others.map((o) => o.id)).toEqual([onMaster]);
      // Struck off (recorded): nothing of its own stands, the others still do.
      await t.db.transaction((db) => pending.strike(db, mine));
      expect(await pending.standing(p.id, ['refs/heads/master'], mine)).toEqual({
        own: undefined,
        others: [expect.objectContaining({ id: onMaster })],
      });
    } finally {
      await t.db.query(`delete from pending_pushes where project_id = any($1::int[])`, [[p.id, otherProject.id]]);
    }
  });

  it('forgets a written-down push that moved nothing, and one whose project is gone', async () => {
    const p = await project('Nothing Moved');
    // Written down a minute ago: `reconcile(0)` takes what is older than now, and in embedded mode
    // (PGlite's clock) a row inserted in the same instant as the claim is not.
    await t.db.query(
      `insert into pending_pushes (project_id, updates, pusher, created_at)
       values ($1, $2, $3, now() - interval '1 minute'), (999999, $2, $3, now() - interval '1 minute')`,
      [
        p.id,
        JSON.stringify([{ ref: 'refs/heads/master', before: ZERO, after: 'a'.repeat(40) }]),
        JSON.stringify({ id: owner.id, username: owner.username }),
      ],
    );
    expect(await t.app.get(PushReconciler).reconcile(0)).toBe(2);
    expect(await written(p.id)).toBe(0);
    expect(await written(999999)).toBe(0);
    expect(await pushed(p.id)).toHaveLength(0);
  });
});
