import { ProjectionRebuilder } from '@app/platform';
import { writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { gitOk, tempDirs } from '../support/git';
import { createUser, type SeededUser } from '../support/seed';
import { eventually, outboxFinished, startTestApp, type TestApp } from '../support/test-app';
import { startWebhookReceiver, type Delivery, type WebhookReceiver } from '../support/webhook-receiver';

const ZERO = '0'.repeat(40);

describe('webhook deliveries for pushes', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let hookBase: string;
  let owner: SeededUser;
  let developer: SeededUser;
  let project: { id: number; path_with_namespace: string; web_url: string; http_url_to_repo: string };
  let received: Delivery[];
  const failuresLeft = new Map<string, number>();
  const tmp = tempDirs();
  let remote: string;
  let work: string;

  const as = (token: string) => ({
    get: (path: string) => t.http().get(`/api/v4${path}`).set('PRIVATE-TOKEN', token),
    post: (path: string) => t.http().post(`/api/v4${path}`).set('PRIVATE-TOKEN', token),
  });
  const at = (path: string) => receiver.at(path);
  async function addHook(path: string, settings: Record<string, unknown> = {}): Promise<number> {
    const res = await as(owner.token)
      .post(`/projects/${project.id}/hooks`)
      .send({ url: `${hookBase}${path}`, ...settings });
    expect(res.status).toBe(201);
    return res.body.id;
  }
  async function commit(file: string): Promise<string> {
    writeFileSync(join(work, file), `${file}\n`);
    await gitOk(['add', '.'], work);
    await gitOk(['commit', '-q', '-m', `add ${file}`], work);
    return (await gitOk(['rev-parse', 'HEAD'], work)).trim();
  }

  beforeAll(async () => {
    receiver = await startWebhookReceiver(({ path }) => {
      if (path === '/slow') return 'never';
      const left = failuresLeft.get(path) ?? 0;
      if (left > 0) {
        failuresLeft.set(path, left - 1);
        return { status: 500, body: 'not now' };
      }
      if (path === '/redirect') return { status: 302, headers: { Location: `${hookBase}/a` } };
      return 200;
    });
    received = receiver.received;
    hookBase = receiver.url;
    // A developer pushes first into the empty project: GitLab's default protection (2) would refuse
    // that (only maintainers push into an empty repository); protected-branches.e2e-spec.ts covers it.
    t = await startTestApp({
      allowLocalWebhooks: true,
      webhookTimeoutMs: 1000,
      webhookRetryDelayMs: 200,
      defaultBranchProtection: 0,
    });
    await t.app.listen(0, '127.0.0.1');
    owner = await createUser(t);
    developer = await createUser(t);
    project = (await as(owner.token).post('/projects').send({ name: 'Hooked', visibility: 'private' })).body;
    expect(
      (await as(owner.token).post(`/projects/${project.id}/members`).send({ user_id: developer.id, access_level: 30 }))
        .status,
    ).toBe(201);
    remote = `http://git:${developer.token}@127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}/${project.path_with_namespace}.git`;
    work = tmp.make();
    await gitOk(['init', '-q', '-b', 'master', work]);
  });
  afterAll(async () => {
    tmp.removeAll();
    await t.close();
    await receiver.close();
  });

  it("POSTs GitLab's push payload and headers to the hooks that subscribe, once per hook", async () => {
    const a = await addHook('/a', { token: 's3cret' });
    await addHook('/tags-only', { push_events: false, tag_push_events: true });
    await commit('one.txt');
    const head = await commit('two.txt');
    await gitOk(['push', '-q', remote, 'master'], work);

    const [hit] = (await eventually(() => (at('/a').length ? at('/a') : false))) as Delivery[];
    expect(hit.headers).toMatchObject({
      'content-type': 'application/json',
      'x-gitlab-event': 'Push Hook',
      'x-gitlab-token': 's3cret',
    });
    // GitLab's prefix kept for receivers that check it, Lode named after it.
    expect(hit.headers['user-agent']).toMatch(/^GitLab\/10\.8\.0 Lode\//);
    expect(hit.headers['x-gitlab-event-uuid']).toMatch(/^[0-9a-f-]{36}$/);
    const webUrl = `http://lode.test/${project.path_with_namespace}`;
    expect(hit.body).toMatchObject({
      object_kind: 'push',
      event_name: 'push',
      before: ZERO,
      after: head,
      ref: 'refs/heads/master',
      checkout_sha: head,
      message: null,
      user_id: developer.id,
      user_username: developer.username,
      project_id: project.id,
      total_commits_count: 2,
      project: {
        id: project.id,
        name: 'Hooked',
        web_url: webUrl,
        git_http_url: `${webUrl}.git`,
        path_with_namespace: project.path_with_namespace,
        visibility_level: 0,
        default_branch: 'master',
        homepage: webUrl,
        http_url: `${webUrl}.git`,
      },
      repository: { name: 'Hooked', homepage: webUrl, git_http_url: `${webUrl}.git`, visibility_level: 0 },
    });
    expect(hit.body.commits).toHaveLength(2);
    expect(hit.body.commits[1]).toMatchObject({
      id: head,
      message: 'add two.txt\n',
      url: `${webUrl}/commit/${head}`,
      author: { name: 'Tester', email: 'tester@example.com' },
      added: ['two.txt'],
      modified: [],
      removed: [],
    });
    expect(Object.keys(hit.body).sort()).toEqual([
      'after',
      'before',
      'checkout_sha',
      'commits',
      'event_name',
      'message',
      'object_kind',
      'project',
      'project_id',
      'ref',
      'repository',
      'total_commits_count',
      'user_avatar',
      'user_email',
      'user_id',
      'user_name',
      'user_username',
    ]);
    // Nothing for the hook that only wants tags, and nothing twice.
    await new Promise((r) => setTimeout(r, 500));
    expect(at('/tags-only')).toHaveLength(0);
    expect(at('/a')).toHaveLength(1);

    // The delivery log (a Lode addition), for maintainers.
    const log = await as(owner.token).get(`/projects/${project.id}/hooks/${a}/events`);
    expect(log.status).toBe(200);
    expect(log.headers['x-total']).toBe('1');
    expect(log.body[0]).toMatchObject({
      event_uuid: hit.headers['x-gitlab-event-uuid'],
      trigger: 'push_hooks',
      url: `${hookBase}/a`,
      attempt: 1,
      response_status: 200,
      error: null,
    });
    expect((await as(developer.token).get(`/projects/${project.id}/hooks/${a}/events`)).status).toBe(403);
    expect((await as(owner.token).get(`/projects/${project.id}/hooks/999999/events`)).status).toBe(404);
  });

  it('sends tag pushes as Tag Push Hook to the hooks with tag_push_events only', async () => {
    const before = at('/a').length;
    await gitOk(['tag', '-a', 'v1.0', '-m', 'First release'], work);
    await gitOk(['push', '-q', remote, 'v1.0'], work);
    const [tag] = (await eventually(() => (at('/tags-only').length ? at('/tags-only') : false))) as Delivery[];
    const head = (await gitOk(['rev-parse', 'HEAD'], work)).trim();
    expect(tag.headers['x-gitlab-event']).toBe('Tag Push Hook');
    expect(tag.body).toMatchObject({
      object_kind: 'tag_push',
      ref: 'refs/tags/v1.0',
      checkout_sha: head,
      message: 'First release',
      total_commits_count: 1,
    });
    await new Promise((r) => setTimeout(r, 300));
    expect(at('/a')).toHaveLength(before);
  });

  it('retries a failing receiver with the same event UUID and logs every attempt', async () => {
    const hook = await addHook('/flaky');
    failuresLeft.set('/flaky', 2);
    await commit('three.txt');
    await gitOk(['push', '-q', remote, 'master'], work);
    const hits = (await eventually(() => (at('/flaky').length >= 3 ? at('/flaky') : false), 15_000)) as Delivery[];
    expect(new Set(hits.map((h) => h.headers['x-gitlab-event-uuid'])).size).toBe(1);
    const log = await eventually(async () => {
      const res = await as(owner.token).get(`/projects/${project.id}/hooks/${hook}/events`);
      return res.body.length === 3 ? res.body : false;
    });
    expect(log.map((e: { attempt: number; response_status: number }) => [e.attempt, e.response_status])).toEqual([
      [3, 200],
      [2, 500],
      [1, 500],
    ]);
  });

  it('follows no redirect, gives up on a silent receiver at the timeout, and logs both', async () => {
    const redirect = await addHook('/redirect');
    const slow = await addHook('/slow');
    const aBefore = at('/a').length;
    await commit('four.txt');
    await gitOk(['push', '-q', remote, 'master'], work);
    const redirected = await eventually(async () => {
      const res = await as(owner.token).get(`/projects/${project.id}/hooks/${redirect}/events`);
      return res.body.length ? res.body[res.body.length - 1] : false;
    });
    expect(redirected).toMatchObject({ attempt: 1, response_status: 302 });
    const timedOut = await eventually(async () => {
      const res = await as(owner.token).get(`/projects/${project.id}/hooks/${slow}/events`);
      return res.body.length ? res.body[res.body.length - 1] : false;
    });
    expect(timedOut).toMatchObject({ attempt: 1, response_status: null, error: 'timed out after 1000 ms' });
    // A removed hook's pending retries send nothing more.
    expect(
      (await t.http().delete(`/api/v4/projects/${project.id}/hooks/${slow}`).set('PRIVATE-TOKEN', owner.token)).status,
    ).toBe(204);
    // /a got this push from its own hook only, not through the redirect.
    await eventually(() => at('/a').length === aBefore + 1);
    await new Promise((r) => setTimeout(r, 300));
    expect(at('/a')).toHaveLength(aBefore + 1);
  });

  it('sends nothing again when the read models are rebuilt', async () => {
    // Not a fixed wait: /redirect's 302 is a failure, so its retries run 200, 400 and 800 ms apart
    // after its push's fan-out, which /slow's 1 s timeout holds up, and a fixed 1.5 s raced the last.
    await outboxFinished(t, 20_000);
    const count = received.length;
    const [{ n }] = await t.db.query(`select count(*)::int as n from hook_delivery_log`);
    await t.app.get(ProjectionRebuilder).rebuild();
    await new Promise((r) => setTimeout(r, 1000));
    await outboxFinished(t, 20_000); // a fan-out the rebuild queued would have sent by now
    expect(received.length).toBe(count);
    const [{ n: after }] = await t.db.query(`select count(*)::int as n from hook_delivery_log`);
    expect(after).toBe(n);
  });
});
