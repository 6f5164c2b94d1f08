import { ProjectionRebuilder } from '@app/platform';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expectShape } from '../contract/shape';
import { gitOk, tempDirs } from '../support/git';
import { readModels } from '../support/read-models';
import { createUser, type SeededUser } from '../support/seed';
import { startTestApp, type TestApp } from '../support/test-app';

/** A JSON request to the listening server from a chosen loopback address (all of 127/8 is this machine). */
function sendFrom(
  port: number,
  address: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<{ status: number; body: unknown }> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        path,
        method,
        localAddress: address,
        headers: { ...headers, ...(payload ? { 'Content-Type': 'application/json' } : {}) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

interface AuditEntry {
  id: number;
  author_id: number;
  entity_id: number;
  entity_type: string;
  details: Record<string, unknown>;
  created_at: string;
}

/**
 * GitLab's audit events API (doc/api/audit_events.md, 13.x) over Lode's event store: every write
 * with its author, the token, the administrator behind a sudo, the client's address, and from/to
 * folded from the stream.
 */
describe('audit events', () => {
  let t: TestApp;
  let port: number;
  let alice: SeededUser;
  let bob: SeededUser;
  let projectId: number;
  let groupId: number;
  let rootTokenId: number;
  const started = new Date(Date.now() - 1000).toISOString();
  const tmp = tempDirs();

  const as = (token?: string) => {
    const auth = <T extends { set(k: string, v: string): T }>(r: T) => (token ? r.set('PRIVATE-TOKEN', token) : r);
    return {
      get: (path: string) => auth(t.http().get(`/api/v4${path}`)),
      post: (path: string, body: object = {}) => auth(t.http().post(`/api/v4${path}`)).send(body),
      put: (path: string, body: object) => auth(t.http().put(`/api/v4${path}`)).send(body),
    };
  };
  const all = async (query = '') => {
    const res = await as(t.rootToken).get(`/audit_events?per_page=100${query}`);
    expect(res.status).toBe(200);
    return res.body as AuditEntry[];
  };

  beforeAll(async () => {
    t = await startTestApp({ trustedProxies: ['127.0.0.1'] });
    await t.app.listen(0, '127.0.0.1');
    port = (t.app.getHttpServer().address() as AddressInfo).port;
    alice = await createUser(t, { name: 'Alice Liddell' });
    bob = await createUser(t);
    const project = await as(alice.token).post('/projects', { name: 'Audited', visibility: 'private' });
    expect(project.status).toBe(201);
    projectId = project.body.id;
    const group = await as(alice.token).post('/groups', { name: 'Audit Group', path: `audit-group-${alice.id}` });
    expect(group.status).toBe(201);
    groupId = group.body.id;
    rootTokenId = (await as(t.rootToken).get('/personal_access_tokens/self')).body.id;
  });
  afterAll(async () => {
    tmp.removeAll();
    await t.close();
  });

  it('shows a change of visibility with its old and new value', async () => {
    expect((await as(alice.token).put(`/projects/${projectId}`, { visibility: 'internal' })).status).toBe(200);
    const res = await as(alice.token).get(`/projects/${projectId}/audit_events`);
    expect(res.status).toBe(200);
    const entry = (res.body as AuditEntry[]).find((e) => e.details.change === 'visibility');
    expect(entry).toMatchObject({
      author_id: alice.id,
      entity_id: projectId,
      entity_type: 'Project',
      details: {
        change: 'visibility',
        from: 'Private',
        to: 'Internal',
        author_name: 'Alice Liddell',
        target_id: projectId,
        target_type: 'Project',
        target_details: `${alice.username}/audited`,
        entity_path: `${alice.username}/audited`,
      },
    });
    expectShape(entry, 'audit-event');
    expect(Object.keys(entry!)).toEqual(['id', 'author_id', 'entity_id', 'entity_type', 'details', 'created_at']);
    // The test users' tokens are impersonation tokens root made: the entry says so.
    expect(entry!.details).toMatchObject({ impersonated_by_username: 'root', token_name: 'test' });
  });

  it('names both users and the token of a sudo, never its secret', async () => {
    const res = await as(t.rootToken)
      .put(`/projects/${projectId}`, { description: 'set through sudo' })
      .set('Sudo', alice.username);
    expect(res.status).toBe(200);
    const entries = await all(`&entity_type=Project&entity_id=${projectId}`);
    const entry = entries.find((e) => e.details.change === 'description');
    expect(entry).toMatchObject({
      author_id: alice.id,
      details: {
        from: null,
        to: 'set through sudo',
        author_name: 'Alice Liddell',
        token_id: rootTokenId,
        token_name: 'LODE_ROOT_TOKEN',
        sudo_by_id: 1,
        sudo_by_username: 'root',
        sudo_by_name: 'Administrator',
      },
    });
    expect(JSON.stringify(entries)).not.toContain(t.rootToken);
    expect(JSON.stringify(await all())).not.toContain(t.rootToken);
  });

  it('records pushes (the API writes go through the push path)', async () => {
    for (const content of ['one\n', 'two\n']) {
      const res = await as(alice.token).post(`/projects/${projectId}/repository/commits`, {
        branch: 'main',
        commit_message: 'write',
        actions: [{ action: content === 'one\n' ? 'create' : 'update', file_path: 'README.md', content }],
      });
      expect(res.status).toBe(201);
    }
    const pushes = (await all(`&entity_type=Project&entity_id=${projectId}`)).filter(
      (e) => e.details.change === 'push',
    );
    expect(pushes).toHaveLength(2);
    const [second, first] = pushes;
    expect(first.details).toMatchObject({ from: '0'.repeat(40), target_details: 'refs/heads/main' });
    expect(second.details.from).toBe(first.details.to);
    expect(second).toMatchObject({
      author_id: alice.id,
      details: { target_type: 'Project', author_name: 'Alice Liddell' },
    });
  });

  it('records a git push over HTTP with its address', async () => {
    const project = await as(alice.token).post('/projects', { name: 'Pushed' });
    const dir = tmp.make();
    await gitOk(['init', '-q', '-b', 'master', dir]);
    writeFileSync(join(dir, 'a.txt'), 'a\n');
    await gitOk(['add', '.'], dir);
    await gitOk(['commit', '-q', '-m', 'first'], dir);
    const url = `http://git:${alice.token}@127.0.0.1:${port}/${project.body.path_with_namespace}.git`;
    await gitOk(['push', '-q', url, 'master'], dir);
    const head = (await gitOk(['rev-parse', 'HEAD'], dir)).trim();
    const [push] = (await all(`&entity_type=Project&entity_id=${project.body.id}`)).filter(
      (e) => e.details.change === 'push',
    );
    expect(push).toMatchObject({
      author_id: alice.id,
      details: { from: '0'.repeat(40), to: head, target_details: 'refs/heads/master', ip_address: '127.0.0.1' },
    });
  });

  it('records member changes with the access levels and the member as target', async () => {
    expect(
      (await as(alice.token).post(`/projects/${projectId}/members`, { user_id: bob.id, access_level: 30 })).status,
    ).toBe(201);
    expect((await as(alice.token).put(`/projects/${projectId}/members/${bob.id}`, { access_level: 20 })).status).toBe(
      200,
    );
    const entries = await all(`&entity_type=Project&entity_id=${projectId}`);
    expect(entries.find((e) => e.details.change === 'added member')?.details).toMatchObject({
      to: 'Developer',
      target_id: bob.id,
      target_type: 'User',
      target_details: bob.username,
    });
    expect(entries.find((e) => e.details.change === 'access level')?.details).toMatchObject({
      from: 'Developer',
      to: 'Reporter',
    });
  });

  it('filters by created_after, created_before, entity_type and entity_id', async () => {
    const everything = await all();
    expect(everything.length).toBeGreaterThan(5);
    expect(await all(`&created_after=${encodeURIComponent(started)}`)).toHaveLength(everything.length);
    expect(await all('&created_after=2999-01-01T00:00:00Z')).toEqual([]);
    expect(await all('&created_before=2000-01-01T00:00:00Z')).toEqual([]);
    const users = await all('&entity_type=User');
    expect(users.length).toBeGreaterThan(0);
    expect(users.every((e) => e.entity_type === 'User')).toBe(true);
    const aliceOnly = await all(`&entity_type=User&entity_id=${alice.id}`);
    expect(aliceOnly.length).toBeGreaterThan(0);
    expect(aliceOnly.every((e) => e.entity_id === alice.id)).toBe(true);
    const groups = await all(`&entity_type=Group&entity_id=${groupId}`);
    expect(groups.map((e) => e.details.change)).toContain('created');
    // Newest first.
    expect(everything.map((e) => e.id)).toEqual([...everything.map((e) => e.id)].sort((a, b) => b - a));

    expect((await as(t.rootToken).get('/audit_events?entity_type=Issue')).status).toBe(400);
    const bad = await as(t.rootToken).get('/audit_events?created_after=yesterday');
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ error: 'created_after is invalid' });
  });

  it('paginates with GitLab headers', async () => {
    const total = (await all()).length;
    const res = await as(t.rootToken).get('/audit_events?per_page=2&page=2');
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(2);
    expect(res.headers['x-total']).toBe(String(total));
    expect(res.headers['x-total-pages']).toBe(String(Math.ceil(total / 2)));
    expect(res.headers['x-page']).toBe('2');
    expect(res.headers['x-per-page']).toBe('2');
    expect(res.headers['x-prev-page']).toBe('1');
    expect(res.headers['x-next-page']).toBe('3');
    expect(res.headers.link).toContain('rel="next"');
  });

  it('does not count a list past 10,000 entries: no X-Total, X-Total-Pages or last link (GitLab)', async () => {
    // Rows as the projector writes them, keyed past any stored event, removed at the end.
    await t.db.query(
      `insert into audit_events (id, global_position, author_id, entity_type, entity_id, details, created_at)
       select (1000000000000 + g) * 100, 1000000000000 + g, 1, 'User', 2147483000, '{}', now() - interval '1 day'
         from generate_series(1, 10001) g`,
    );
    try {
      const res = await as(t.rootToken).get('/audit_events?per_page=2&page=2');
      expect(res.status).toBe(200);
      expect(res.body).toHaveLength(2);
      expect(res.headers['x-total']).toBeUndefined();
      expect(res.headers['x-total-pages']).toBeUndefined();
      expect(res.headers['x-next-page']).toBe('3');
      expect(res.headers['x-prev-page']).toBe('1');
      expect(res.headers.link).toContain('rel="next"');
      expect(res.headers.link).not.toContain('rel="last"');
      // A filter that leaves fewer is counted as before.
      const few = await as(t.rootToken).get(`/audit_events?entity_type=Group&entity_id=${groupId}`);
      expect(Number(few.headers['x-total'])).toBeGreaterThan(0);
    } finally {
      await t.db.query(`delete from audit_events where global_position > 1000000000000`);
    }
  });

  it('answers one entry, and 404 for one that is not there or not in the entity', async () => {
    const [newest] = await all();
    const one = await as(t.rootToken).get(`/audit_events/${newest.id}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(newest);
    const none = await as(t.rootToken).get('/audit_events/999999999');
    expect(none.status).toBe(404);
    expect(none.body).toEqual({ message: '404 Audit Event Not Found' });
    const [groupEntry] = await all(`&entity_type=Group&entity_id=${groupId}`);
    expect((await as(alice.token).get(`/groups/${groupId}/audit_events/${groupEntry.id}`)).status).toBe(200);
    expect((await as(alice.token).get(`/projects/${projectId}/audit_events/${groupEntry.id}`)).status).toBe(404);
  });

  it('lets administrators, group owners and project maintainers read, as GitLab', async () => {
    expect((await as().get('/audit_events')).status).toBe(401);
    expect((await as(bob.token).get('/audit_events')).status).toBe(403);
    // bob is the project's reporter now: visible, not enough.
    expect((await as(bob.token).get(`/projects/${projectId}/audit_events`)).status).toBe(403);
    const stranger = await createUser(t);
    // The project is internal now: visible to every user, so 403; a private one is invisible: 404.
    expect((await as(stranger.token).get(`/projects/${projectId}/audit_events`)).status).toBe(403);
    const hidden = await as(alice.token).post('/projects', { name: 'Hidden', visibility: 'private' });
    expect((await as(stranger.token).get(`/projects/${hidden.body.id}/audit_events`)).status).toBe(404);
    expect((await as(t.rootToken).get(`/projects/${projectId}/audit_events`)).status).toBe(200);

    const groupEntries = await as(alice.token).get(`/groups/${groupId}/audit_events`);
    expect(groupEntries.status).toBe(200);
    expect((groupEntries.body as AuditEntry[]).every((e) => e.entity_type === 'Group' && e.entity_id === groupId)).toBe(
      true,
    );
    expect(
      (await as(alice.token).post(`/groups/${groupId}/members`, { user_id: bob.id, access_level: 40 })).status,
    ).toBe(201);
    expect((await as(bob.token).get(`/groups/${groupId}/audit_events`)).status).toBe(403);
    expect((await as(stranger.token).get(`/groups/${groupId}/audit_events`)).status).toBe(404);
  });

  it('records the client address, honouring X-Forwarded-For only from a trusted proxy', async () => {
    const headers = { 'PRIVATE-TOKEN': alice.token };
    const viaProxy = await sendFrom(
      port,
      '127.0.0.1',
      'PUT',
      `/api/v4/projects/${projectId}`,
      {
        ...headers,
        'X-Forwarded-For': '203.0.113.7',
      },
      { description: 'via the proxy' },
    );
    expect(viaProxy.status).toBe(200);
    const direct = await sendFrom(
      port,
      '127.0.0.2',
      'PUT',
      `/api/v4/projects/${projectId}`,
      {
        ...headers,
        'X-Forwarded-For': '203.0.113.8',
      },
      { description: 'direct' },
    );
    expect(direct.status).toBe(200);
    const entries = (await all(`&entity_type=Project&entity_id=${projectId}`)).filter(
      (e) => e.details.change === 'description',
    );
    expect(entries.find((e) => e.details.to === 'via the proxy')?.details.ip_address).toBe('203.0.113.7');
    expect(entries.find((e) => e.details.to === 'direct')?.details.ip_address).toBe('127.0.0.2');
    expect(entries.find((e) => e.details.to === 'direct')?.details.from).toBe('via the proxy');
  });

  it('gives the same entries after a rebuild', async () => {
    const live = await readModels(t);
    const entries = await all();
    expect(live.audit_events.length).toBeGreaterThan(0);
    await t.app.get(ProjectionRebuilder).rebuild();
    expect(await readModels(t)).toEqual(live);
    expect(await all()).toEqual(entries);
  });
});
