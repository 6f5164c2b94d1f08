import { EventStore, ProjectionRebuilder } from '@app/platform';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as openpgp from 'openpgp';
import { gitOk, tempDirs } from '../support/git';
import { readModels } from '../support/read-models';
import { createUser } from '../support/seed';
import { freePort, startTestApp, type TestApp, describeOnServers, EMBEDDED } from '../support/test-app';

function sshKey(): string {
  const dir = mkdtempSync(join(tmpdir(), 'lode-key-'));
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'test@lode', '-f', join(dir, 'id')]);
  return readFileSync(join(dir, 'id.pub'), 'utf8');
}

/** The read models, after checking that the main tables are among them. */
async function dump(t: TestApp): Promise<Record<string, unknown[]>> {
  const models = await readModels(t);
  expect(Object.keys(models)).toEqual(
    expect.arrayContaining(['users', 'access_tokens', 'namespaces', 'namespace_closure', 'members', 'projects']),
  );
  return models;
}

describe('event store, projections and rebuild', () => {
  let t: TestApp;
  let base: string;
  const tmp = tempDirs();
  beforeAll(async () => {
    // Listening, for the pushes of the rebuild below.
    const port = await freePort();
    base = `127.0.0.1:${port}`;
    t = await startTestApp({ externalUrl: `http://${base}` });
    await t.app.listen(port, '127.0.0.1');
  });
  afterAll(async () => {
    tmp.removeAll();
    await t.close();
  });

  it('serialises concurrent commands on one stream: every change lands, versions stay contiguous', async () => {
    const u = await createUser(t);
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        t
          .http()
          .post(`/api/v4/users/${u.id}/emails`)
          .set('PRIVATE-TOKEN', t.rootToken)
          .send({ email: `parallel${i}-${u.id}@example.com` }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(201));
    const versions: { stream_version: number }[] = await t.db.query(
      `select stream_version from events where stream_id = $1 order by stream_version`,
      [`user-${u.id}`],
    );
    expect(versions.map((v) => v.stream_version)).toEqual(versions.map((_, i) => i + 1));
    const emails = await t.http().get(`/api/v4/users/${u.id}/emails`).set('PRIVATE-TOKEN', t.rootToken);
    expect(emails.body).toHaveLength(8);
  });

  it('rolls back the event when a projection refuses it (nothing half-written)', async () => {
    const a = await createUser(t);
    const b = await createUser(t);
    const before = Number((await t.db.query(`select count(*) from events`))[0].count);
    const res = await t
      .http()
      .post(`/api/v4/users/${b.id}/emails`)
      .set('PRIVATE-TOKEN', t.rootToken)
      .send({ email: a.email.toUpperCase() });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: { email: ['has already been taken'] } });
    expect(Number((await t.db.query(`select count(*) from events`))[0].count)).toBe(before);
  });

  // A writer cannot sneak in beside a transaction on the embedded database: transactions take turns there.
  describeOnServers('expected-version check (the safety net behind the per-stream lock)', () => {
    const counter = { initial: () => 0, evolve: (n: number) => n + 1 };
    const attr = (userId: number, value: string) => ({
      type: 'UserCustomAttributeSet',
      data: { userId, key: 'k', value, at: new Date().toISOString() },
    });
    // A writer that bypasses the store appends the very version this command is about to append.
    const sneakIn = (stream: string, version: number, userId: number) =>
      // (a type no projector handles, so the read models stay as the live path left them)
      t.db.query(`insert into events (stream_id, stream_version, type, data) values ($1, $2, 'TestInterference', $3)`, [
        stream,
        version,
        JSON.stringify({ userId }),
      ]);

    it('re-runs a command transparently after a version clash', async () => {
      const u = await createUser(t);
      const stream = `user-${u.id}`;
      let attempts = 0;
      await t.app.get(EventStore).decide(stream, counter, async (version) => {
        attempts += 1;
        if (attempts === 1) await sneakIn(stream, version + 1, u.id);
        return [attr(u.id, 'mine')];
      });
      expect(attempts).toBe(2);
      const rows = await t.db.query(
        `select type from events where stream_id = $1 and stream_version > 1 order by stream_version`,
        [stream],
      );
      expect(rows.map((r: { type: string }) => r.type)).toEqual(['TestInterference', 'UserCustomAttributeSet']);
    });

    it('decideNew appends without a fold on a new stream, and folds on the re-run when the stream was not new', async () => {
      const store = t.app.get(EventStore);
      const u = await createUser(t);
      const seen: number[] = [];
      // An id reused by hand: the first attempt believes the stream empty and clashes at version 1.
      await store.decideNew(`user-${u.id}`, counter, (version) => (seen.push(version), [attr(u.id, 'again')]));
      const versions = (
        await t.db.query(`select count(*)::int as n from events where stream_id = $1`, [`user-${u.id}`])
      )[0].n as number;
      expect(seen).toEqual([0, versions - 1]);
      // A new stream: appended at version 1 on the first attempt.
      seen.length = 0;
      const stream = `test-new-${u.id}`;
      const [appended] = await store.decideNew(stream, counter, (version) => (seen.push(version), [attr(u.id, 'new')]));
      expect(seen).toEqual([0]);
      expect(appended.streamVersion).toBe(1);
    });

    it("decideNew holds the new stream's lock: a fold in another transaction waits for the creation's outcome", async () => {
      const store = t.app.get(EventStore);
      const u = await createUser(t);
      const stream = `test-locked-${u.id}`;
      let appended = false;
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const creating = store.transact(async (uow) => {
        await uow.decideNew(stream, counter, () => [attr(u.id, 'locked')]);
        appended = true;
        await gate; // the commit (or its lost answer) still to come
      });
      while (!appended) await new Promise((r) => setTimeout(r, 10));
      let folded: number | undefined;
      const reading = store.transact((uow) => uow.load(stream, counter)).then((n) => (folded = n));
      await new Promise((r) => setTimeout(r, 300));
      expect(folded).toBeUndefined();
      release();
      await creating;
      await reading;
      expect(folded).toBe(1);
    });

    it('answers 409 when the stream keeps changing under the command', async () => {
      const u = await createUser(t);
      const stream = `user-${u.id}`;
      let attempts = 0;
      const promise = t.app.get(EventStore).decide(stream, counter, async (version) => {
        attempts += 1;
        await sneakIn(stream, version + 1, u.id);
        return [attr(u.id, 'mine')];
      });
      await expect(promise).rejects.toMatchObject({ body: expect.stringContaining('409 Conflict') });
      expect(attempts).toBe(5);
    });
  });

  it('records who did what: actor, sudo, token and request id in every event', async () => {
    const u = await createUser(t);
    const res = await t
      .http()
      .post('/api/v4/user/emails')
      .set('PRIVATE-TOKEN', t.rootToken)
      .set('Sudo', u.username)
      .set('X-Request-Id', 'req-meta-1')
      .send({ email: `meta-${u.id}@example.com` });
    expect(res.status).toBe(201);
    const [event] = await t.db.query(
      `select metadata from events where type = 'EmailAdded' and metadata->>'requestId' = 'req-meta-1'`,
    );
    expect(event.metadata).toMatchObject({ requestId: 'req-meta-1', actorId: u.id, sudoBy: 1 });
    expect(typeof event.metadata.tokenId).toBe('number');
  });

  it('rebuilds every read model from the events into exactly the live tables, without re-running jobs', async () => {
    // A varied history: profile edits, identities, credentials, tokens, blocks, deletes, attributes.
    const a = await createUser(t, { extern_uid: 'uid-a', provider: 'ldapmain', bio: 'first' });
    const b = await createUser(t);
    const c = await createUser(t);
    const root = (path: string) => t.http().post(path).set('PRIVATE-TOKEN', t.rootToken);
    expect(
      (
        await t
          .http()
          .put(`/api/v4/users/${a.id}`)
          .set('PRIVATE-TOKEN', t.rootToken)
          .send({ bio: 'second', email: `new-${a.email}` })
      ).status,
    ).toBe(200);
    expect((await root(`/api/v4/users/${a.id}/keys`).send({ title: 'k', key: sshKey() })).status).toBe(201);
    const { publicKey } = await openpgp.generateKey({
      type: 'ecc',
      curve: 'curve25519Legacy',
      userIDs: [{ name: 'B', email: 'b@example.com' }],
      format: 'armored',
    });
    expect((await root(`/api/v4/users/${b.id}/gpg_keys`).send({ key: publicKey })).status).toBe(201);
    const mail = await root(`/api/v4/users/${b.id}/emails`).send({ email: `second-${b.email}` });
    expect(
      (await t.http().delete(`/api/v4/users/${b.id}/emails/${mail.body.id}`).set('PRIVATE-TOKEN', t.rootToken)).status,
    ).toBe(204);
    expect((await root(`/api/v4/users/${b.id}/block`)).status).toBe(201);
    expect(
      (
        await t
          .http()
          .put(`/api/v4/users/${a.id}/custom_attributes/team`)
          .set('PRIVATE-TOKEN', t.rootToken)
          .send({ value: 'core' })
      ).status,
    ).toBe(200);
    const tok = await root(`/api/v4/users/${a.id}/impersonation_tokens`).send({ name: 'x', scopes: ['api'] });
    expect(
      (
        await t
          .http()
          .delete(`/api/v4/users/${a.id}/impersonation_tokens/${tok.body.id}`)
          .set('PRIVATE-TOKEN', t.rootToken)
      ).status,
    ).toBe(204);
    expect((await t.http().delete(`/api/v4/users/${c.id}`).set('PRIVATE-TOKEN', t.rootToken)).status).toBe(204);
    // Groups, nesting, members, projects, stars and shares.
    const group = await root('/api/v4/groups').send({
      name: 'Rebuild',
      path: `rebuild-${a.id}`,
      visibility: 'internal',
    });
    expect(group.status).toBe(201);
    const sub = await root('/api/v4/groups').send({ name: 'Inner', path: 'inner', parent_id: group.body.id });
    expect(sub.status).toBe(201);
    expect(
      (await root(`/api/v4/groups/${group.body.id}/members`).send({ user_id: a.id, access_level: 30 })).status,
    ).toBe(201);
    expect(
      (
        await t
          .http()
          .put(`/api/v4/groups/${group.body.id}`)
          .set('PRIVATE-TOKEN', t.rootToken)
          .send({ path: `renamed-${a.id}` })
      ).status,
    ).toBe(200);
    const project = await root('/api/v4/projects').send({ name: 'Rebuilt', namespace_id: sub.body.id });
    expect(project.status).toBe(201);
    expect((await root(`/api/v4/projects/${project.body.id}/star`)).status).toBe(201);
    const other = await root('/api/v4/groups').send({ name: 'Other', path: `other-${a.id}` });
    expect(
      (await root(`/api/v4/projects/${project.body.id}/share`).send({ group_id: other.body.id, group_access: 20 }))
        .status,
    ).toBe(201);

    const live = await dump(t);
    const outboxBefore = await t.db.query(`select id from outbox order by id`);
    const progress: number[] = [];
    const result = await t.app.get(ProjectionRebuilder).rebuild((p) => progress.push(p.done));
    const [{ count }] = await t.db.query(`select count(*)::int as count from events`);
    expect(result.total).toBe(count);
    expect(progress[progress.length - 1]).toBe(count);
    expect(await dump(t)).toEqual(live);
    expect(await t.db.query(`select id from outbox order by id`)).toEqual(outboxBefore);
    expect(live.users.length).toBeGreaterThan(3);
  });

  // The rebuild pipelines the projectors' writes (PipelinedWrites) and reads the events 10,000 a page:
  // a history through the real API (pushes, members, hooks, groups, edits), then thousands of events,
  // must come back row for row, with the progress reported every 2,000 events.
  it('rebuilds pushes, members, hooks and groups, and thousands of events, row for row, with progress every 2,000', async () => {
    const owner = await createUser(t);
    const other = await createUser(t);
    const as = (token: string) => ({
      post: (path: string, body: object = {}) => t.http().post(`/api/v4${path}`).set('PRIVATE-TOKEN', token).send(body),
      put: (path: string, body: object = {}) => t.http().put(`/api/v4${path}`).set('PRIVATE-TOKEN', token).send(body),
      delete: (path: string) => t.http().delete(`/api/v4${path}`).set('PRIVATE-TOKEN', token),
    });
    const group = await as(t.rootToken).post('/groups', { name: 'Pipelined', path: `pipelined-${owner.id}` });
    expect(group.status).toBe(201);
    expect(
      (await as(t.rootToken).post(`/groups/${group.body.id}/members`, { user_id: owner.id, access_level: 40 })).status,
    ).toBe(201);
    const project = await as(owner.token).post('/projects', { name: 'pushed', namespace_id: group.body.id });
    expect(project.status).toBe(201);
    const mine = await as(owner.token).post('/projects', { name: 'mine', visibility: 'public' });
    expect(mine.status).toBe(201);
    const path = project.body.path_with_namespace as string;
    const work = tmp.make();
    const push = (...refspecs: string[]) =>
      gitOk(['push', '-q', `http://git:${owner.token}@${base}/${path}.git`, ...refspecs], work);
    await gitOk(['init', '-q'], work);
    await gitOk(['commit', '-q', '--allow-empty', '-m', 'first'], work);
    await push('master');
    await gitOk(['commit', '-q', '--allow-empty', '-m', 'second'], work);
    await gitOk(['tag', 'v1'], work);
    await push('master', 'refs/tags/v1', 'master:refs/heads/topic');
    await push(':refs/heads/topic');
    await gitOk(
      ['push', '-q', `http://git:${owner.token}@${base}/${mine.body.path_with_namespace}.git`, 'master'],
      work,
    );
    const id = project.body.id as number;
    expect((await as(owner.token).put(`/projects/${id}`, { description: 'edited' })).status).toBe(200);
    expect(
      (await as(owner.token).post(`/projects/${id}/members`, { user_id: other.id, access_level: 30 })).status,
    ).toBe(201);
    expect(
      (await as(owner.token).post(`/projects/${mine.body.id}/members`, { user_id: other.id, access_level: 20 })).status,
    ).toBe(201);
    expect((await as(owner.token).delete(`/projects/${mine.body.id}/members/${other.id}`)).status).toBe(204);
    expect((await as(owner.token).post(`/projects/${id}/protected_branches`, { name: 'release-*' })).status).toBe(201);
    // Hooks last: nothing after them is delivered.
    const hook = await as(owner.token).post(`/projects/${id}/hooks`, {
      url: 'http://example.com/a',
      push_events: true,
    });
    expect(hook.status).toBe(201);
    expect(
      (await as(owner.token).put(`/projects/${id}/hooks/${hook.body.id}`, { url: 'http://example.com/b' })).status,
    ).toBe(200);
    const gone = await as(owner.token).post(`/projects/${id}/hooks`, { url: 'http://example.com/c' });
    expect((await as(owner.token).delete(`/projects/${id}/hooks/${gone.body.id}`)).status).toBe(204);
    expect((await as(t.rootToken).post('/hooks', { url: 'http://example.com/system' })).status).toBe(201);

    const live = await dump(t);
    expect(live.recorded_refs.length).toBeGreaterThan(0);
    expect(live.project_hooks).toHaveLength(1);
    expect(await t.app.get(ProjectionRebuilder).rebuild()).toMatchObject({ done: expect.any(Number) });
    expect(await dump(t)).toEqual(live);

    // Thousands more, appended straight to the log (as bench/rebuild.mjs does): the owner's activity
    // days and edits of the project. A first rebuild takes them in; the second must give the same.
    await t.db.query(
      `insert into events (stream_id, stream_version, type, data)
       select 'user-activity-' || $1::int, (select coalesce(max(stream_version), 0) from events where stream_id = 'user-activity-' || $1::int) + g.n,
              'UserActivityRecorded',
              jsonb_build_object('userId', $1::int, 'on', to_char(date '2001-01-01' + g.n, 'YYYY-MM-DD'), 'at', (date '2001-01-01' + g.n)::timestamptz)
         from generate_series(1, 3000) g(n)`,
      [owner.id],
    );
    await t.db.query(
      `insert into events (stream_id, stream_version, type, data)
       select 'project-' || $1::int, (select max(stream_version) from events where stream_id = 'project-' || $1::int) + g.n,
              'ProjectUpdated',
              jsonb_build_object('projectId', $1::int, 'changes', jsonb_build_object('description', 'description ' || g.n), 'at', now())
         from generate_series(1, 2000) g(n)`,
      [id],
    );
    const vacuums = async () =>
      EMBEDDED
        ? 0
        : ((await t.db.query(`select vacuum_count::int as n from pg_stat_user_tables where relname = 'projects'`))[0]
            .n as number);
    const vacuumsBefore = await vacuums();
    const withEdits = await t.app.get(ProjectionRebuilder).rebuild();
    expect(withEdits).toMatchObject({
      vacuumed: true,
      replaySeconds: expect.any(Number),
      vacuumSeconds: expect.any(Number),
    });
    const after = await dump(t);
    expect(after.projects.find((p) => (p as { id: number }).id === id)).toMatchObject({
      description: 'description 2000',
    });
    // Those 2,000 edits replayed are 2,000 dead versions of the project's row, and TRUNCATE forgot the
    // tables' statistics (reltuples -1): the rebuild vacuums and analyzes what it rebuilt, so the
    // planner knows each table's rows again, and the vacuum is on record (server mode: PGlite keeps
    // no activity statistics).
    const planned = await t.db.query(
      `select c.relname as table, c.reltuples::int as estimated
         from pg_class c where c.relname in ('members', 'projects', 'users') and c.relkind = 'r' order by 1`,
    );
    expect(planned.map((r: { table: string }) => r.table)).toEqual(['members', 'projects', 'users']);
    for (const { table, estimated } of planned as { table: string; estimated: number }[]) {
      const [{ counted }] = await t.db.query(`select count(*)::int as counted from "${table}"`);
      expect({ table, estimated }).toEqual({ table, estimated: counted });
    }
    if (!EMBEDDED) expect(await vacuums()).toBeGreaterThan(vacuumsBefore);
    const progress: number[] = [];
    const result = await t.app.get(ProjectionRebuilder).rebuild((p) => progress.push(p.done));
    const [{ count }] = await t.db.query(`select count(*)::int as count from events`);
    expect(result).toMatchObject({ done: count, total: count, vacuumed: true });
    const steps = Array.from({ length: Math.floor(count / 2000) + 1 }, (_, i) => i * 2000);
    expect(progress).toEqual(count % 2000 ? [...steps, count] : steps);
    expect(await dump(t)).toEqual(after);
  }, 180_000);
});
