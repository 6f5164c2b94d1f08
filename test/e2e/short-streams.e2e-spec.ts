import { DeliveriesOnOwnStreams1763780001900 } from '@app/hooks';
import { ProjectionRebuilder } from '@app/platform';
import { PushesOnOwnStreams1763780001800, ReleasesOnOwnStreams1763780002150 } from '@app/projects';
import { createHash } from 'node:crypto';
import type { MigrationInterface } from 'typeorm';
import { readModels } from '../support/read-models';
import { createUser, type SeededUser } from '../support/seed';
import { eventually, startTestApp, type TestApp } from '../support/test-app';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

interface StoredEvent {
  global_position: string;
  stream_id: string;
  stream_version: number;
  type: string;
  data: Record<string, unknown>;
  metadata: Record<string, unknown>;
}

/**
 * Issue 20, §2: what accrues with use (pushes, delivery attempts, releases) is recorded on streams of its own,
 * so a project's or a hook's stream stays as long as its own history of changes; and a migration moves
 * the events an older Lode wrote on the long streams, keeping every event and contiguous versions.
 */
describe('streams that stay short', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let owner: SeededUser;
  let project: { id: number };
  let hookId: number;

  const events = (): Promise<StoredEvent[]> =>
    t.db.query(
      `select global_position, stream_id, stream_version, type, data, metadata from events order by global_position`,
    );
  const streamOf = async (streamId: string) =>
    (await events()).filter((e) => e.stream_id === streamId).map((e) => [e.stream_version, e.type]);
  const commit = async (file: string) => {
    const res = await t
      .http()
      .post(`/api/v4/projects/${project.id}/repository/commits`)
      .set('PRIVATE-TOKEN', owner.token)
      .send({
        branch: 'master',
        commit_message: `add ${file}`,
        actions: [{ action: 'create', file_path: file, content: `${file}\n` }],
      });
    expect(res.status).toBe(201);
  };
  /** Streams whose versions do not run 1, 2, 3, ... without a hole. */
  const holes = async (): Promise<string[]> =>
    (
      await t.db.query<{ stream_id: string }[]>(
        `select stream_id from events group by stream_id
          having min(stream_version) <> 1 or max(stream_version) <> count(*)`,
      )
    ).map((r) => r.stream_id);
  const migrate = async (migration: MigrationInterface, direction: 'up' | 'down') => {
    const q = t.db.createQueryRunner();
    await q.startTransaction();
    try {
      await migration[direction](q);
      await q.commitTransaction();
    } catch (err) {
      await q.rollbackTransaction();
      throw err;
    } finally {
      await q.release();
    }
  };

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    t = await startTestApp({ allowLocalWebhooks: true, webhookRetryDelayMs: 200 });
    owner = await createUser(t);
    const created = await t
      .http()
      .post('/api/v4/projects')
      .set('PRIVATE-TOKEN', owner.token)
      .send({ name: 'Short Streams' });
    expect(created.status).toBe(201);
    project = created.body;
    const hook = await t
      .http()
      .post(`/api/v4/projects/${project.id}/hooks`)
      .set('PRIVATE-TOKEN', owner.token)
      .send({ url: `${receiver.url}/hook`, push_events: true });
    expect(hook.status).toBe(201);
    hookId = hook.body.id;
  });

  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  it('records the push that names the default branch on the project, every later push on a stream of its own', async () => {
    await commit('first.txt');
    const afterFirst = await streamOf(`project-${project.id}`);
    // The first push names the default branch and protects it (GitLab's default protection).
    expect(afterFirst.slice(-2)).toEqual([
      [afterFirst.length - 1, 'RepositoryPushed'],
      [afterFirst.length, 'ProtectedBranchCreated'],
    ]);
    for (const n of [2, 3, 4]) await commit(`file-${n}.txt`);
    expect(await streamOf(`project-${project.id}`)).toEqual(afterFirst);
    const pushes = (await events()).filter((e) => e.type === 'RepositoryPushed' && e.data.projectId === project.id);
    expect(pushes).toHaveLength(4);
    expect(pushes[0].stream_id).toBe(`project-${project.id}`);
    expect(pushes[0].data.defaultBranch).toBe('master');
    for (const p of pushes.slice(1)) {
      expect(p.stream_id).toMatch(/^push-\d+$/);
      expect(p.stream_version).toBe(1);
      expect(p.data.defaultBranch).toBeNull();
      expect(p.metadata).toMatchObject({ actorId: owner.id });
    }
    expect(new Set(pushes.map((p) => p.stream_id)).size).toBe(4);
    // What the pushes drive still follows them: the project's activity and statistics.
    const read = await t.http().get(`/api/v4/projects/${project.id}?statistics=true`).set('PRIVATE-TOKEN', owner.token);
    expect(read.body).toMatchObject({ default_branch: 'master', statistics: { commit_count: 4 } });
  });

  it("logs each delivery attempt as a row of the delivery log, never as an event on the hook's stream", async () => {
    // Attempts were events on streams of their own (`hook-delivery-<hook>-<uuid>`) until the log became
    // an append-only table: a hook's thousandth delivery costs what its first did, and folds nothing.
    await eventually(async () => {
      const [{ n }] = await t.db.query<{ n: number }[]>(
        `select count(*)::int as n from hook_delivery_log where hook_id = $1`,
        [hookId],
      );
      expect(n).toBeGreaterThanOrEqual(4);
      return true;
    }, 20_000);
    expect(receiver.received.length).toBeGreaterThanOrEqual(4);
    expect(await streamOf(`hook-${hookId}`)).toEqual([[1, 'ProjectHookAdded']]);
    expect((await events()).filter((e) => e.type === 'ProjectHookDelivered')).toEqual([]);
    const log = await t.http().get(`/api/v4/projects/${project.id}/hooks/${hookId}`).set('PRIVATE-TOKEN', owner.token);
    expect(log.status).toBe(200);
  });

  it("records each release with its links on a stream of its own, never on the project's", async () => {
    const before = await streamOf(`project-${project.id}`);
    const api = (path: string) => `/api/v4/projects/${project.id}/releases${path}`;
    const tags = ['v1.0', 'rel/2.0', `long/${'x'.repeat(200)}`];
    for (const tag of tags) {
      const res = await t
        .http()
        .post(api(''))
        .set('PRIVATE-TOKEN', owner.token)
        .send({
          tag_name: tag,
          ref: 'master',
          description: `notes of ${tag}`,
          assets: { links: [{ name: 'app', url: `https://example.com/${tag}/app` }] },
        });
      expect(res.status).toBe(201);
    }
    const one = encodeURIComponent('v1.0');
    const link = await t
      .http()
      .post(api(`/${one}/assets/links`))
      .set('PRIVATE-TOKEN', owner.token)
      .send({ name: 'docs', url: 'https://example.com/docs' });
    expect(link.status).toBe(201);
    expect(
      (
        await t
          .http()
          .put(api(`/${one}`))
          .set('PRIVATE-TOKEN', owner.token)
          .send({ name: 'One' })
      ).status,
    ).toBe(200);
    expect(
      (
        await t
          .http()
          .delete(api(`/${encodeURIComponent('rel/2.0')}`))
          .set('PRIVATE-TOKEN', owner.token)
      ).status,
    ).toBe(200);

    // The project's stream did not grow: the tags the releases made are pushes, on streams of their own.
    expect(await streamOf(`project-${project.id}`)).toEqual(before);
    const streamOfTag = (tag: string) =>
      `release-${project.id}-${createHash('sha256').update(tag).digest('hex').slice(0, 24)}`;
    expect(await streamOf(streamOfTag('v1.0'))).toEqual([
      [1, 'ProjectReleaseCreated'],
      [2, 'ProjectReleaseLinkAdded'],
      [3, 'ProjectReleaseLinkAdded'],
      [4, 'ProjectReleaseChanged'],
    ]);
    expect(await streamOf(streamOfTag('rel/2.0'))).toEqual([
      [1, 'ProjectReleaseCreated'],
      [2, 'ProjectReleaseLinkAdded'],
      [3, 'ProjectReleaseRemoved'],
    ]);
    const releaseEvents = (await events()).filter((e) => e.type.startsWith('ProjectRelease'));
    for (const e of releaseEvents) expect(e.stream_id).toBe(streamOfTag(String(e.data.tagName)));
    expect(new Set(releaseEvents.map((e) => e.stream_id)).size).toBe(3);
    // What the releases drive still follows them: the list and the links.
    const list = await t.http().get(api('')).set('PRIVATE-TOKEN', owner.token);
    expect(list.status).toBe(200);
    expect(list.body.map((r: { tag_name: string }) => r.tag_name).sort()).toEqual([tags[2], 'v1.0']);
    const v1 = list.body.find((r: { tag_name: string }) => r.tag_name === 'v1.0');
    expect(v1.name).toBe('One');
    expect(v1.assets.links).toHaveLength(2);
  });

  it('moves an older layout onto the short streams, keeping every event, contiguous versions and the read models', async () => {
    const current = await events();
    const models = await readModels(t);
    // Back to the layout an older Lode wrote: pushes, attempts and releases on the project's and the hook's streams.
    await migrate(new ReleasesOnOwnStreams1763780002150(), 'down');
    await migrate(new DeliveriesOnOwnStreams1763780001900(), 'down');
    await migrate(new PushesOnOwnStreams1763780001800(), 'down');
    const old = await events();
    expect(old.filter((e) => /^(push|hook-delivery|release)-/.test(e.stream_id))).toEqual([]);
    expect(
      (await streamOf(`project-${project.id}`)).filter(([, type]) => String(type).startsWith('ProjectRelease')),
    ).toHaveLength(9);
    // Four commits and the three tags the releases made from `ref`.
    expect((await streamOf(`project-${project.id}`)).filter(([, type]) => type === 'RepositoryPushed')).toHaveLength(7);
    // No delivery is an event any more (the log is a table), so the hook's stream has nothing to take back.
    expect(await streamOf(`hook-${hookId}`)).toEqual([[1, 'ProjectHookAdded']]);
    expect(await holes()).toEqual([]);

    await migrate(new PushesOnOwnStreams1763780001800(), 'up');
    await migrate(new DeliveriesOnOwnStreams1763780001900(), 'up');
    await migrate(new ReleasesOnOwnStreams1763780002150(), 'up');
    const moved = await events();
    // Every event is still there, in the same global order, unchanged but for where it is filed.
    const content = (es: StoredEvent[]) =>
      es.map(({ global_position, type, data, metadata }) => ({ global_position, type, data, metadata }));
    expect(content(moved)).toEqual(content(current));
    const where = (es: StoredEvent[]) =>
      es.map((e) => (e.stream_id.startsWith('push-') ? 'push' : e.stream_id) + `@${e.stream_version}`);
    expect(where(moved)).toEqual(where(current));
    expect(await holes()).toEqual([]);
    expect(await readModels(t)).toEqual(models);

    // A rebuild from the moved log gives the same read models, and the next push still lands on its own stream.
    await t.app.get(ProjectionRebuilder).rebuild();
    expect(await readModels(t)).toEqual(models);
    await commit('after-migration.txt');
    const [last] = (await events()).filter((e) => e.type === 'RepositoryPushed').slice(-1);
    expect(last.stream_id).toMatch(/^push-\d+$/);
    expect(await holes()).toEqual([]);
  });
});
