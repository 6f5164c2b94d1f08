import { ProjectionRebuilder } from '@app/platform';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { gitOk, tempDirs } from '../support/git';
import { createUser, type SeededUser } from '../support/seed';
import { eventually, startTestApp, type TestApp } from '../support/test-app';
import { startWebhookReceiver, type Delivery, type WebhookReceiver } from '../support/webhook-receiver';

const ISO_SECONDS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

/*
 * System hooks fire for the events of GitLab 10.x's doc/system_hooks/system_hooks.md (plus 13.x's
 * `user_update_for_team` / `_for_group`), through the same delivery pipeline as project hooks.
 * `/all` hears everything a system hook always hears plus `repository_update` (the default switch);
 * `/pushes` has push and tag push on and repository updates off.
 */
describe('system hook deliveries', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let hookBase: string;
  let received: Delivery[];
  const tmp = tempDirs();
  let pushesHookId: number;

  const root = {
    get: (path: string) => t.http().get(`/api/v4${path}`).set('PRIVATE-TOKEN', t.rootToken),
    post: (path: string) => t.http().post(`/api/v4${path}`).set('PRIVATE-TOKEN', t.rootToken),
    put: (path: string) => t.http().put(`/api/v4${path}`).set('PRIVATE-TOKEN', t.rootToken),
    delete: (path: string) => t.http().delete(`/api/v4${path}`).set('PRIVATE-TOKEN', t.rootToken),
  };
  const at = (path: string, eventName: string) =>
    received.filter((r) => r.path === path && r.body.event_name === eventName);
  /** The one delivery to `path` of `eventName` that matches `where`, once it arrived. */
  async function one(path: string, eventName: string, where: (r: Delivery) => boolean = () => true) {
    const hits = await eventually(() => {
      const found = at(path, eventName).filter(where);
      return found.length ? found : false;
    });
    return (hits as Delivery[])[0];
  }

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    received = receiver.received;
    hookBase = receiver.url;
    t = await startTestApp({
      allowLocalWebhooks: true,
      webhookTimeoutMs: 1000,
      webhookRetryDelayMs: 200,
      defaultBranchProtection: 0,
    });
    await t.app.listen(0, '127.0.0.1');
    // Other suites may have left system hooks in the shared database: only ours may hear this run.
    for (const h of (await root.get('/hooks?per_page=100')).body as { id: number }[])
      await root.delete(`/hooks/${h.id}`);
    expect((await root.post('/hooks').send({ url: `${hookBase}/all`, token: 'sys-s3cret' })).status).toBe(201);
    const pushes = await root.post('/hooks').send({
      url: `${hookBase}/pushes`,
      push_events: true,
      tag_push_events: true,
      repository_update_events: false,
    });
    expect(pushes.status).toBe(201);
    pushesHookId = pushes.body.id;
  });
  afterAll(async () => {
    for (const h of (await root.get('/hooks?per_page=100')).body as { id: number }[])
      await root.delete(`/hooks/${h.id}`);
    tmp.removeAll();
    await t.close();
    await receiver.close();
  });

  let user: SeededUser;

  it('users: user_create, user_rename, key_create, key_destroy with the header and token', async () => {
    user = await createUser(t, { name: 'Hook Watcher' });
    const created = await one('/all', 'user_create', (r) => r.body.user_id === user.id);
    expect(created.headers).toMatchObject({
      'content-type': 'application/json',
      'x-gitlab-event': 'System Hook',
      'x-gitlab-token': 'sys-s3cret',
    });
    // The fields of 10.x's doc (their order is not kept: the outbox stores jobs as jsonb).
    expect(Object.keys(created.body).sort()).toEqual(
      ['event_name', 'created_at', 'updated_at', 'name', 'email', 'user_id', 'username'].sort(),
    );
    expect(created.body).toMatchObject({
      event_name: 'user_create',
      name: 'Hook Watcher',
      email: user.email,
      user_id: user.id,
      username: user.username,
    });
    expect(created.body.created_at).toMatch(ISO_SECONDS);
    // The hook without a token sends none.
    const plain = await one('/pushes', 'user_create', (r) => r.body.user_id === user.id);
    expect(plain.headers['x-gitlab-token']).toBeUndefined();

    const oldUsername = user.username;
    const newUsername = `${user.username}x`;
    expect((await root.put(`/users/${user.id}`).send({ username: newUsername })).status).toBe(200);
    user.username = newUsername;
    const renamed = await one('/all', 'user_rename', (r) => r.body.user_id === user.id);
    expect(renamed.body).toMatchObject({ username: newUsername, old_username: oldUsername, email: user.email });

    const dir = tmp.make();
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'k@lode.test', '-f', join(dir, 'id')], {
      stdio: 'ignore',
    });
    const keyText = readFileSync(join(dir, 'id.pub'), 'utf8').trim();
    const key = await root.post(`/users/${user.id}/keys`).send({ title: 'laptop', key: keyText });
    expect(key.status).toBe(201);
    const keyCreate = await one('/all', 'key_create', (r) => r.body.id === key.body.id);
    expect(keyCreate.body).toEqual({
      event_name: 'key_create',
      created_at: expect.stringMatching(ISO_SECONDS),
      updated_at: expect.stringMatching(ISO_SECONDS),
      key: keyText,
      id: key.body.id,
      username: newUsername,
    });
    expect((await root.delete(`/users/${user.id}/keys/${key.body.id}`)).status).toBe(204);
    const keyDestroy = await one('/all', 'key_destroy', (r) => r.body.id === key.body.id);
    expect(keyDestroy.body).toMatchObject({ key: keyText, id: key.body.id, username: newUsername });
  });

  let group: { id: number; path: string; name: string };

  it('groups: group_create, group_rename, user_add_to_group, user_update_for_group, user_remove_from_group', async () => {
    const res = await root
      .post('/groups')
      .send({ name: 'Hooked Group', path: `hooked-${Date.now()}`, visibility: 'public' });
    expect(res.status).toBe(201);
    group = res.body;
    const created = await one('/all', 'group_create', (r) => r.body.group_id === group.id);
    expect(created.body).toEqual({
      event_name: 'group_create',
      created_at: expect.stringMatching(ISO_SECONDS),
      updated_at: expect.stringMatching(ISO_SECONDS),
      name: 'Hooked Group',
      path: group.path,
      full_path: group.path,
      group_id: group.id,
      owner_name: null,
      owner_email: null,
    });

    const newPath = `${group.path}-renamed`;
    expect((await root.put(`/groups/${group.id}`).send({ path: newPath })).status).toBe(200);
    const renamed = await one('/all', 'group_rename', (r) => r.body.group_id === group.id);
    expect(renamed.body).toMatchObject({
      path: newPath,
      full_path: newPath,
      old_path: group.path,
      old_full_path: group.path,
      owner_name: null,
    });
    group.path = newPath;
    // A new name alone is no rename (10.x: only a changed path).
    expect((await root.put(`/groups/${group.id}`).send({ name: 'Hooked Group 2' })).status).toBe(200);

    expect((await root.post(`/groups/${group.id}/members`).send({ user_id: user.id, access_level: 30 })).status).toBe(
      201,
    );
    const added = await one('/all', 'user_add_to_group', (r) => r.body.user_id === user.id);
    expect(added.body).toEqual({
      event_name: 'user_add_to_group',
      created_at: expect.stringMatching(ISO_SECONDS),
      updated_at: expect.stringMatching(ISO_SECONDS),
      group_name: 'Hooked Group 2',
      group_path: newPath,
      group_id: group.id,
      user_username: user.username,
      user_name: 'Hook Watcher',
      user_email: user.email,
      user_id: user.id,
      group_access: 'Developer',
    });
    expect((await root.put(`/groups/${group.id}/members/${user.id}`).send({ access_level: 40 })).status).toBe(200);
    const updated = await one('/all', 'user_update_for_group', (r) => r.body.user_id === user.id);
    expect(updated.body).toMatchObject({ group_access: 'Master', group_id: group.id });
    expect((await root.delete(`/groups/${group.id}/members/${user.id}`)).status).toBe(204);
    const removed = await one('/all', 'user_remove_from_group', (r) => r.body.user_id === user.id);
    expect(removed.body).toMatchObject({ group_access: 'Master', group_id: group.id, user_email: user.email });
  });

  let project: { id: number; path: string; path_with_namespace: string };

  it('projects: project_create, project_update, project_rename, project_transfer, user_add_to_team, user_update_for_team, user_remove_from_team', async () => {
    const res = await t
      .http()
      .post('/api/v4/projects')
      .set('PRIVATE-TOKEN', user.token)
      .send({ name: 'Watched', visibility: 'internal' });
    expect(res.status).toBe(201);
    project = res.body;
    const created = await one('/all', 'project_create', (r) => r.body.project_id === project.id);
    expect(created.body).toEqual({
      event_name: 'project_create',
      created_at: expect.stringMatching(ISO_SECONDS),
      updated_at: expect.stringMatching(ISO_SECONDS),
      name: 'Watched',
      path: project.path,
      path_with_namespace: `${user.username}/${project.path}`,
      project_id: project.id,
      owner_name: 'Hook Watcher',
      owner_email: user.email,
      project_visibility: 'internal',
    });

    expect((await root.put(`/projects/${project.id}`).send({ description: 'now described' })).status).toBe(200);
    const updated = await one('/all', 'project_update', (r) => r.body.project_id === project.id);
    expect(updated.body).toMatchObject({ name: 'Watched', path: project.path, project_visibility: 'internal' });
    expect(updated.body).not.toHaveProperty('old_path_with_namespace');

    expect((await root.put(`/projects/${project.id}`).send({ path: 'watched-renamed' })).status).toBe(200);
    const renamed = await one('/all', 'project_rename', (r) => r.body.project_id === project.id);
    expect(renamed.body).toMatchObject({
      path: 'watched-renamed',
      path_with_namespace: `${user.username}/watched-renamed`,
      old_path_with_namespace: `${user.username}/${project.path}`,
    });

    expect((await root.put(`/projects/${project.id}/transfer`).send({ namespace: group.id })).status).toBe(200);
    const moved = await one('/all', 'project_transfer', (r) => r.body.project_id === project.id);
    expect(moved.body).toMatchObject({
      path_with_namespace: `${group.path}/watched-renamed`,
      old_path_with_namespace: `${user.username}/watched-renamed`,
      // A group's project: the group is its owner, and a group has no e-mail.
      owner_name: 'Hooked Group 2',
      owner_email: '',
    });

    const other = await createUser(t, { name: 'Team Mate' });
    expect(
      (await root.post(`/projects/${project.id}/members`).send({ user_id: other.id, access_level: 20 })).status,
    ).toBe(201);
    const added = await one('/all', 'user_add_to_team', (r) => r.body.user_id === other.id);
    expect(added.body).toEqual({
      event_name: 'user_add_to_team',
      created_at: expect.stringMatching(ISO_SECONDS),
      updated_at: expect.stringMatching(ISO_SECONDS),
      project_name: 'Watched',
      project_path: 'watched-renamed',
      project_path_with_namespace: `${group.path}/watched-renamed`,
      project_id: project.id,
      user_username: other.username,
      user_name: 'Team Mate',
      user_email: other.email,
      user_id: other.id,
      access_level: 'Reporter',
      project_visibility: 'internal',
    });
    expect((await root.put(`/projects/${project.id}/members/${other.id}`).send({ access_level: 30 })).status).toBe(200);
    const changed = await one('/all', 'user_update_for_team', (r) => r.body.user_id === other.id);
    expect(changed.body).toMatchObject({ access_level: 'Developer', project_id: project.id });
    expect((await root.delete(`/projects/${project.id}/members/${other.id}`)).status).toBe(204);
    const removed = await one('/all', 'user_remove_from_team', (r) => r.body.user_id === other.id);
    expect(removed.body).toMatchObject({ access_level: 'Developer', project_id: project.id, user_name: 'Team Mate' });

    // A transfer into a less open group lowers the visibility without a `project_update` (TransferService).
    const quiet = (
      await root.post('/groups').send({ name: 'Quiet', path: `quiet-${Date.now()}`, visibility: 'private' })
    ).body as { id: number; path: string };
    const loud = (await root.post('/projects').send({ name: 'Loud', visibility: 'public' })).body as {
      id: number;
      path: string;
    };
    expect((await root.put(`/projects/${loud.id}/transfer`).send({ namespace: quiet.id })).status).toBe(200);
    const lowered = await one('/all', 'project_transfer', (r) => r.body.project_id === loud.id);
    expect(lowered.body).toMatchObject({
      project_visibility: 'private',
      path_with_namespace: `${quiet.path}/${loud.path}`,
    });
    await new Promise((r) => setTimeout(r, 300));
    expect(at('/all', 'project_update').filter((r) => r.body.project_id === loud.id)).toEqual([]);
  });

  it('pushes: push and tag_push (no commits) to the hooks that want them, repository_update to the others', async () => {
    const port = (t.app.getHttpServer().address() as AddressInfo).port;
    const full = `${group.path}/watched-renamed`;
    const remote = `http://root:${t.rootToken}@127.0.0.1:${port}/${full}.git`;
    const work = tmp.make();
    await gitOk(['init', '-q', '-b', 'master', work]);
    writeFileSync(join(work, 'a.txt'), 'a\n');
    await gitOk(['add', '.'], work);
    await gitOk(['commit', '-q', '-m', 'first'], work);
    const head = (await gitOk(['rev-parse', 'HEAD'], work)).trim();
    await gitOk(['tag', 'v1'], work);
    await gitOk(['push', '-q', remote, 'master', 'v1'], work);

    const push = await one('/pushes', 'push', (r) => r.body.project_id === project.id);
    expect(push.headers['x-gitlab-event']).toBe('System Hook');
    expect(push.body).toMatchObject({
      object_kind: 'push',
      after: head,
      ref: 'refs/heads/master',
      commits: [],
      total_commits_count: 0,
      project: { path_with_namespace: full },
    });
    const tag = await one('/pushes', 'tag_push', (r) => r.body.project_id === project.id);
    expect(tag.body).toMatchObject({ ref: 'refs/tags/v1', commits: [] });
    const update = await one('/all', 'repository_update', (r) => r.body.project_id === project.id);
    expect(Object.keys(update.body).sort()).toEqual(
      [
        'event_name',
        'user_id',
        'user_name',
        'user_email',
        'user_avatar',
        'project_id',
        'project',
        'changes',
        'refs',
      ].sort(),
    );
    expect(update.body.changes).toEqual(
      expect.arrayContaining([
        { before: '0'.repeat(40), after: head, ref: 'refs/heads/master' },
        expect.objectContaining({ before: '0'.repeat(40), ref: 'refs/tags/v1' }),
      ]),
    );
    expect([...update.body.refs].sort()).toEqual(['refs/heads/master', 'refs/tags/v1']);
    expect(update.body.project).toMatchObject({ path_with_namespace: full, name: 'Watched' });
    // Unsubscribed: `/all` hears no push, `/pushes` no repository update.
    await new Promise((r) => setTimeout(r, 500));
    expect(at('/all', 'push')).toHaveLength(0);
    expect(at('/all', 'tag_push')).toHaveLength(0);
    expect(at('/pushes', 'repository_update')).toHaveLength(0);
  });

  it('deletions: project_destroy, group_destroy and user_destroy carry what the rows no longer hold', async () => {
    // A removed hook hears nothing more.
    expect((await root.delete(`/hooks/${pushesHookId}`)).status).toBe(204);
    const heardBefore = received.filter((r) => r.path === '/pushes').length;
    expect((await root.delete(`/projects/${project.id}`)).status).toBe(202);
    const gone = await one('/all', 'project_destroy', (r) => r.body.project_id === project.id);
    expect(gone.body).toMatchObject({
      name: 'Watched',
      path: 'watched-renamed',
      path_with_namespace: `${group.path}/watched-renamed`,
      project_visibility: 'internal',
    });
    // What goes with a group or a user by cascade is announced as GitLab's DestroyServices do.
    const sub = (await root.post('/groups').send({ name: 'Sub', path: 'sub', parent_id: group.id })).body as {
      id: number;
    };
    const inSub = (await root.post('/projects').send({ name: 'Deep', namespace_id: sub.id })).body as {
      id: number;
      path: string;
    };
    const mine = (await t.http().post('/api/v4/projects').set('PRIVATE-TOKEN', user.token).send({ name: 'Mine' }))
      .body as { id: number; path: string };
    expect(inSub.id && mine.id).toBeTruthy();
    expect((await root.delete(`/groups/${group.id}`)).status).toBeLessThan(300);
    const groupGone = await one('/all', 'group_destroy', (r) => r.body.group_id === group.id);
    expect(groupGone.body).toMatchObject({ name: 'Hooked Group 2', path: group.path, full_path: group.path });
    const subGone = await one('/all', 'group_destroy', (r) => r.body.group_id === sub.id);
    expect(subGone.body).toMatchObject({ name: 'Sub', path: 'sub', full_path: `${group.path}/sub` });
    // Their members go with them, each heard (10.x: `dependent: :destroy`, Member's post_destroy_hook);
    // the member removed before (the groups test) is not heard of again.
    const rootUser = (await root.get('/user')).body as { id: number; username: string };
    for (const [id, path] of [
      [group.id, group.path],
      [sub.id, 'sub'],
    ] as const) {
      const left = await one(
        '/all',
        'user_remove_from_group',
        (r) => r.body.group_id === id && r.body.user_id === rootUser.id,
      );
      expect(left.body).toMatchObject({ group_path: path, user_username: rootUser.username, group_access: 'Owner' });
    }
    expect(at('/all', 'user_remove_from_group').filter((r) => r.body.group_id === group.id)).toHaveLength(2);
    const deepGone = await one('/all', 'project_destroy', (r) => r.body.project_id === inSub.id);
    expect(deepGone.body).toMatchObject({
      name: 'Deep',
      path_with_namespace: `${group.path}/sub/${inSub.path}`,
      owner_name: 'Sub',
      owner_email: '',
    });
    expect((await root.delete(`/users/${user.id}`)).status).toBe(204);
    const userGone = await one('/all', 'user_destroy', (r) => r.body.user_id === user.id);
    expect(userGone.body).toMatchObject({ name: 'Hook Watcher', email: user.email, username: user.username });
    const mineGone = await one('/all', 'project_destroy', (r) => r.body.project_id === mine.id);
    expect(mineGone.body).toMatchObject({
      name: 'Mine',
      path_with_namespace: `${user.username}/${mine.path}`,
      owner_name: 'Hook Watcher',
      owner_email: user.email,
    });
    await new Promise((r) => setTimeout(r, 500));
    expect(received.filter((r) => r.path === '/pushes')).toHaveLength(heardBefore);
  });

  it('sent each event once to each hook, and a projection rebuild sends nothing', async () => {
    await new Promise((r) => setTimeout(r, 1000));
    const key = (r: Delivery) =>
      `${r.path} ${r.body.event_name} ${r.body.user_id ?? ''} ${r.body.project_id ?? ''} ${r.body.group_id ?? ''} ${r.body.id ?? ''} ${r.body.ref ?? ''}`;
    const keys = received.map(key);
    // Named, so a failure says which event came twice.
    expect(keys.filter((k, i) => keys.indexOf(k) !== i)).toEqual([]);
    const count = received.length;
    await t.app.get(ProjectionRebuilder).rebuild();
    await new Promise((r) => setTimeout(r, 1500));
    expect(received.length).toBe(count);
  });
});
