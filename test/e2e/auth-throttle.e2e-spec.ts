import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { gitOk, tempDirs } from '../support/git';
import { getFrom } from '../support/from-address';
import { createUser, type SeededUser } from '../support/seed';
import { eventually, freePort, startTestApp, type TestApp } from '../support/test-app';

/** Failed authentication is throttled per address, on the API and git alike (GitLab's Rack::Attack). */
describe('failed-authentication throttle', () => {
  const LIMIT = 5;
  let t: TestApp;
  let port: number;
  let user: SeededUser;
  const tmp = tempDirs();

  const from = (address: string, path: string, headers: Record<string, string> = {}) =>
    getFrom(port, address, path, headers);
  const basic = (secret: string) => `Basic ${Buffer.from(`git:${secret}`).toString('base64')}`;

  let sshPort: number;

  beforeAll(async () => {
    sshPort = await freePort();
    t = await startTestApp({ authFailures: LIMIT, sshPort, sshHost: '127.0.0.1' });
    await t.app.listen(0, '127.0.0.1');
    port = (t.app.getHttpServer().address() as AddressInfo).port;
    user = await createUser(t);
  });
  afterAll(async () => {
    tmp.removeAll();
    await t.close();
  });

  it('refuses an address for an hour once it passes the limit, valid credentials included', async () => {
    const a = '127.0.0.21';
    for (let i = 0; i <= LIMIT; i++) {
      const r = await from(a, '/api/v4/user', { 'PRIVATE-TOKEN': `wrong-${i}` });
      expect(r.status).toBe(401);
    }
    const refused = await from(a, '/api/v4/user', { 'PRIVATE-TOKEN': user.token });
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body)).toEqual({ message: '403 Forbidden' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(3500);
    // Git over HTTP from the same address is refused too, with the same wait.
    const git = await from(a, `/${user.username}/anything.git/info/refs?service=git-upload-pack`, {
      Authorization: basic(user.token),
    });
    expect(git.status).toBe(403);
    expect(Number(git.headers['retry-after'])).toBeGreaterThan(3500);
    // Another address is not affected.
    expect((await from('127.0.0.22', '/api/v4/user', { 'PRIVATE-TOKEN': user.token })).status).toBe(200);
  });

  it('counts refused git credentials, but never anonymous requests or accepted credentials', async () => {
    const b = '127.0.0.23';
    // Anonymous requests (git's first request of every clone is one) and good tokens never count.
    for (let i = 0; i < LIMIT * 3; i++) {
      expect((await from(b, '/api/v4/projects')).status).toBe(200);
      expect((await from(b, '/api/v4/user', { 'PRIVATE-TOKEN': user.token })).status).toBe(200);
    }
    for (let i = 0; i < LIMIT; i++) {
      const r = await from(b, `/${user.username}/x.git/info/refs?service=git-upload-pack`, {
        Authorization: basic(`guess-${i}`),
      });
      expect(r.status).toBe(401);
    }
    // At the limit, not past it: still served.
    expect((await from(b, '/api/v4/user', { 'PRIVATE-TOKEN': user.token })).status).toBe(200);
    expect((await from(b, '/api/v4/user', { 'PRIVATE-TOKEN': 'one-more' })).status).toBe(401);
    expect((await from(b, '/api/v4/user', { 'PRIVATE-TOKEN': user.token })).status).toBe(403);
  });

  it('lets the stock git client through from an address that is not throttled', async () => {
    const work = tmp.make();
    const project = await t
      .http()
      .post('/api/v4/projects')
      .set('PRIVATE-TOKEN', user.token)
      .send({ name: 'Throttled', visibility: 'private' });
    await gitOk([
      'clone',
      '-q',
      `http://git:${user.token}@127.0.0.1:${port}/${project.body.path_with_namespace}.git`,
      work,
    ]);
  });

  it('counts an SSH connection that offered only refused keys once, and then cuts that address off, valid key or not', async () => {
    const keys = tmp.make();
    const ssh = (address: string, key: string) =>
      new Promise<{ status: number; out: string }>((resolve) => {
        execFile(
          'ssh',
          [
            ...['-F', '/dev/null', '-b', address, '-i', key, '-p', String(sshPort), '-T'],
            ...['-o', 'IdentitiesOnly=yes', '-o', 'BatchMode=yes', '-o', 'StrictHostKeyChecking=no'],
            ...['-o', `UserKnownHostsFile=${join(keys, 'known_hosts')}`, '-o', 'LogLevel=ERROR'],
            'git@127.0.0.1',
          ],
          (err, stdout, stderr) =>
            resolve({ status: err ? (typeof err.code === 'number' ? err.code : -1) : 0, out: `${stdout}${stderr}` }),
        );
      });
    const keygen = (name: string) =>
      new Promise<string>((resolve, reject) =>
        execFile('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(keys, name)], (err) =>
          err ? reject(err) : resolve(join(keys, name)),
        ),
      );
    const good = await keygen('good');
    const bad = await keygen('bad');
    const added = await t
      .http()
      .post('/api/v4/user/keys')
      .set('PRIVATE-TOKEN', user.token)
      .send({ title: 'good', key: readFileSync(`${good}.pub`, 'utf8').trim() });
    expect(added.status).toBe(201);
    const c = '127.0.0.24';
    expect((await ssh(c, good)).out).toContain(`Welcome to Lode, @${user.username}!`);
    for (let i = 0; i <= LIMIT; i++) expect((await ssh(c, bad)).out).toContain('Permission denied (publickey)');
    // Past the limit the valid key is cut off too, and the API refuses the address as well.
    await eventually(async () => (await ssh(c, good)).status === 255, 5000);
    expect((await from(c, '/api/v4/user', { 'PRIVATE-TOKEN': user.token })).status).toBe(403);
    expect((await ssh('127.0.0.25', good)).status).toBe(0);
  });
});
