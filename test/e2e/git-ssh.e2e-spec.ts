import { execFile, spawn } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { connect, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { repositoryPath } from '@app/git';
import { GitJobsProcessor } from '../../libs/projects/src/repository-jobs/git-jobs';
import { git, gitOk, tempDirs } from '../support/git';
import { createUser, type SeededUser } from '../support/seed';
import { eventually, freePort, startTestApp, type TestApp } from '../support/test-app';
import { startWebhookReceiver } from '../support/webhook-receiver';

const ZERO = '0'.repeat(40);

/** Runs a command and answers its status and output; never throws (refusals are asserted). */
function run(
  file: string,
  args: string[],
  env: Record<string, string> = {},
  cwd?: string,
): Promise<{ status: number; out: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { env: { ...process.env, ...env }, cwd, timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ status: err ? (typeof err.code === 'number' ? err.code : -1) : 0, out: `${stdout}${stderr}` }),
    );
  });
}

/** `git upload-pack` / `receive-pack` processes serving one repository directory, counted from /proc. */
async function gitProcessesFor(repoDir: string): Promise<number> {
  const r = await run('pgrep', ['-f', `(upload|receive)-pack ${repoDir}`]);
  return r.out.split('\n').filter((l) => l.trim()).length;
}

describe('git over SSH', () => {
  let t: TestApp;
  let port: number;
  let httpBase: string;
  let knownHosts: string;
  let owner: SeededUser;
  let other: SeededUser;
  let reporter: SeededUser;
  const keys: Record<string, string> = {};
  const tmp = tempDirs();
  let keyDir: string;

  /** The ssh options every command here uses: these keys only, this known_hosts file, no user configuration. */
  const sshArgs = (key: string | string[], extra: string[] = []) => [
    '-F',
    '/dev/null',
    ...[key].flat().flatMap((k) => ['-i', k]),
    '-p',
    String(port),
    '-o',
    'IdentitiesOnly=yes',
    '-o',
    'BatchMode=yes',
    '-o',
    `UserKnownHostsFile=${knownHosts}`,
    '-o',
    'StrictHostKeyChecking=accept-new',
    '-o',
    'LogLevel=ERROR',
    ...extra,
  ];
  const sshEnv = (key: string, extra: string[] = []) => ({
    GIT_SSH_COMMAND: `ssh ${sshArgs(key, extra).join(' ')}`,
  });
  const sshUrl = (fullPath: string) => `ssh://git@127.0.0.1:${port}/${fullPath}.git`;
  const ssh = (key: string, command: string[] = [], extra: string[] = []) =>
    run('ssh', [...sshArgs(key, extra), 'git@127.0.0.1', ...command]);

  async function newKey(name: string, type: string, bits?: number): Promise<string> {
    const path = join(keyDir, name);
    const r = await run('ssh-keygen', ['-q', '-t', type, ...(bits ? ['-b', String(bits)] : []), '-N', '', '-f', path]);
    if (r.status !== 0) throw new Error(r.out);
    return path;
  }
  async function addKey(user: SeededUser, keyPath: string): Promise<number> {
    const res = await t
      .http()
      .post('/api/v4/user/keys')
      .set('PRIVATE-TOKEN', user.token)
      .send({ title: keyPath, key: readFileSync(`${keyPath}.pub`, 'utf8').trim() });
    expect(res.status).toBe(201);
    return res.body.id;
  }
  async function project(user: SeededUser, name: string, visibility = 'private') {
    const res = await t.http().post('/api/v4/projects').set('PRIVATE-TOKEN', user.token).send({ name, visibility });
    expect(res.status).toBe(201);
    return res.body as { id: number; path_with_namespace: string; ssh_url_to_repo: string };
  }
  async function workingCopy(files: string[], branch = 'master'): Promise<string> {
    const dir = tmp.make();
    await gitOk(['init', '-q', '-b', branch, dir]);
    for (const f of files) {
      writeFileSync(join(dir, f), `${f}\n`);
      await gitOk(['add', '.'], dir);
      await gitOk(['commit', '-q', '-m', `add ${f}`], dir);
    }
    return dir;
  }
  const rev = async (dir: string, what = 'HEAD') => (await gitOk(['rev-parse', what], dir)).trim();
  async function pushes(projectId: number) {
    const rows: { data: { userId: number; updates: { ref: string; before: string; after: string }[] } }[] =
      await t.db.query(
        `select data from events where type = 'RepositoryPushed' and (data->>'projectId')::int = $1
          order by global_position`,
        [projectId],
      );
    return rows.map((r) => r.data);
  }

  beforeAll(async () => {
    port = await freePort();
    t = await startTestApp({
      sshPort: port,
      sshHost: '127.0.0.1',
      sshExternalHost: 'lode.test',
      sshExternalPort: port,
      allowLocalWebhooks: true,
    });
    await t.app.listen(0, '127.0.0.1');
    httpBase = `127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    keyDir = tmp.make();
    knownHosts = join(keyDir, 'known_hosts');
    owner = await createUser(t);
    other = await createUser(t);
    reporter = await createUser(t);
    keys.owner = await newKey('owner_ed25519', 'ed25519');
    keys.ownerRsa = await newKey('owner_rsa', 'rsa', 3072);
    keys.ownerEcdsa = await newKey('owner_ecdsa', 'ecdsa', 256);
    keys.other = await newKey('other_ed25519', 'ed25519');
    keys.reporter = await newKey('reporter_ed25519', 'ed25519');
    keys.unknown = await newKey('unknown_ed25519', 'ed25519');
    for (const k of ['owner', 'ownerRsa', 'ownerEcdsa']) await addKey(owner, keys[k]);
    await addKey(other, keys.other);
    await addKey(reporter, keys.reporter);
  }, 60_000);
  afterAll(async () => {
    tmp.removeAll();
    await t.close();
  });

  it('generates its host keys once, private and 0600, and advertises ssh:// clone URLs on a port other than 22', async () => {
    for (const name of ['ssh_host_ed25519_key', 'ssh_host_ecdsa_key', 'ssh_host_rsa_key']) {
      const path = join(t.config.dataDir, 'ssh', name);
      expect(statSync(path).mode & 0o777).toBe(0o600);
      const fingerprint = await run('ssh-keygen', ['-lf', `${path}.pub`]);
      expect(fingerprint.out).toMatch(/SHA256:/);
    }
    const p = await project(owner, 'Urls', 'public');
    expect(p.ssh_url_to_repo).toBe(`ssh://git@lode.test:${port}/${p.path_with_namespace}.git`);
  });

  it('welcomes a bare `ssh git@host` by name, with each key type (RSA with SHA-2 signatures)', async () => {
    const r = await ssh(keys.owner, [], ['-T']);
    expect(r).toEqual({ status: 0, out: `Welcome to Lode, @${owner.username}!\n` });
    expect((await ssh(keys.ownerEcdsa, [], ['-T'])).out).toContain(`@${owner.username}!`);
    for (const algorithm of ['rsa-sha2-256', 'rsa-sha2-512']) {
      const rsa = await ssh(keys.ownerRsa, [], ['-T', '-o', `PubkeyAcceptedAlgorithms=${algorithm}`]);
      expect(rsa).toEqual({ status: 0, out: `Welcome to Lode, @${owner.username}!\n` });
    }
  });

  it('refuses an unknown key, another user name, and passwords', async () => {
    const unknown = await ssh(keys.unknown, [], ['-T']);
    expect(unknown.status).toBe(255);
    expect(unknown.out).toContain('Permission denied (publickey)');
    const named = await run('ssh', [...sshArgs(keys.owner, ['-T']), 'root@127.0.0.1']);
    expect(named.status).toBe(255);
    expect(named.out).toContain('Permission denied (publickey)');
    // The server offers publickey alone, so a client set on passwords has nothing to try.
    const password = await run('ssh', [
      ...sshArgs(keys.owner, ['-T', '-o', 'PubkeyAuthentication=no', '-o', 'PreferredAuthentications=password']),
      'git@127.0.0.1',
    ]);
    expect(password.status).toBe(255);
    expect(password.out).toContain('Permission denied (publickey)');
  });

  it('clones, fetches and pushes (new branch, force push, deletion, tags) and records each push as RepositoryPushed', async () => {
    const p = await project(owner, 'Pushed');
    const dir = await workingCopy(['a.txt', 'b.txt']);
    const first = await rev(dir);
    const env = sshEnv(keys.owner);
    await gitOk(['push', '-q', sshUrl(p.path_with_namespace), 'master'], dir, env);
    let recorded = await pushes(p.id);
    expect(recorded).toHaveLength(1);
    expect(recorded[0].userId).toBe(owner.id);
    expect(recorded[0].updates).toEqual([
      expect.objectContaining({ ref: 'refs/heads/master', before: ZERO, after: first }),
    ]);
    // The client's address is in the event's metadata (the audit events' ip_address).
    const [{ metadata }] = await t.db.query(
      `select metadata from events where type = 'RepositoryPushed' and (data->>'projectId')::int = $1`,
      [p.id],
    );
    expect(metadata).toMatchObject({ actorId: owner.id, origin: 'git', ipAddress: '127.0.0.1' });
    expect((await t.http().get(`/api/v4/projects/${p.id}`).set('PRIVATE-TOKEN', owner.token)).body.default_branch).toBe(
      'master',
    );

    const clone = join(tmp.make(), 'clone');
    await gitOk(['clone', '-q', sshUrl(p.path_with_namespace), clone], undefined, env);
    expect(await rev(clone)).toBe(first);
    expect(readFileSync(join(clone, 'b.txt'), 'utf8')).toBe('b.txt\n');

    // A new branch and a tag, then a force push and a deletion.
    await gitOk(['checkout', '-q', '-b', 'feature'], dir);
    writeFileSync(join(dir, 'c.txt'), 'c\n');
    await gitOk(['add', '.'], dir);
    await gitOk(['commit', '-q', '-m', 'add c'], dir);
    const feature = await rev(dir);
    await gitOk(['tag', '-a', 'v1.0', '-m', 'Release 1.0'], dir);
    await gitOk(['push', '-q', sshUrl(p.path_with_namespace), 'feature', 'v1.0'], dir, env);
    await gitOk(['fetch', '-q', 'origin'], clone, env);
    expect(await rev(clone, 'origin/feature')).toBe(feature);

    await gitOk(['reset', '-q', '--hard', 'HEAD~1'], dir);
    writeFileSync(join(dir, 'd.txt'), 'd\n');
    await gitOk(['add', '.'], dir);
    await gitOk(['commit', '-q', '-m', 'rewrite'], dir);
    const rewritten = await rev(dir);
    await gitOk(['push', '-q', '--force', sshUrl(p.path_with_namespace), 'feature'], dir, env);
    await gitOk(['push', '-q', sshUrl(p.path_with_namespace), '--delete', 'feature'], dir, env);

    recorded = await pushes(p.id);
    expect(recorded.map((e) => e.updates.map((u) => [u.ref, u.before, u.after]))).toEqual([
      [['refs/heads/master', ZERO, first]],
      [
        ['refs/heads/feature', ZERO, feature],
        ['refs/tags/v1.0', ZERO, expect.stringMatching(/^[0-9a-f]{40}$/)],
      ],
      [['refs/heads/feature', feature, rewritten]],
      [['refs/heads/feature', rewritten, ZERO]],
    ]);
    const ls = await gitOk(['ls-remote', sshUrl(p.path_with_namespace)], undefined, env);
    expect(ls).toContain('refs/tags/v1.0');
    expect(ls).not.toContain('refs/heads/feature');
  });

  it('serves shallow clones and protocol v2 (GIT_PROTOCOL passed on)', async () => {
    const p = await project(owner, 'Shallow', 'public');
    const dir = await workingCopy(['1', '2', '3']);
    const env = sshEnv(keys.owner);
    await gitOk(['push', '-q', sshUrl(p.path_with_namespace), 'master'], dir, env);
    const shallow = join(tmp.make(), 'shallow');
    await gitOk(['clone', '-q', '--depth', '1', sshUrl(p.path_with_namespace), shallow], undefined, env);
    expect((await gitOk(['rev-list', '--count', 'HEAD'], shallow)).trim()).toBe('1');

    const v2 = await git(['-c', 'protocol.version=2', 'ls-remote', sshUrl(p.path_with_namespace)], undefined, {
      ...env,
      GIT_TRACE_PACKET: '1',
    });
    expect(v2.status).toBe(0);
    expect(v2.out).toContain('version 2');
    expect(v2.out).toContain('ls-refs');
    expect(v2.out).toContain(`${await rev(dir)}\trefs/heads/master`);
  });

  it('serves git archive --remote (git-upload-archive)', async () => {
    const p = await project(owner, 'Archived Remote', 'public');
    const dir = await workingCopy(['readme.md']);
    const env = sshEnv(keys.owner);
    await gitOk(['push', '-q', sshUrl(p.path_with_namespace), 'master'], dir, env);
    const out = join(tmp.make(), 'a.tar');
    await gitOk(['archive', `--remote=${sshUrl(p.path_with_namespace)}`, '-o', out, 'master'], dir, env);
    expect((await run('tar', ['-tf', out])).out).toContain('readme.md');
  });

  it('gives internal and public projects to any signed-in user and private ones to members, in GitLab words otherwise', async () => {
    const priv = await project(owner, 'Secret');
    const internal = await project(owner, 'Inside', 'internal');
    const dir = await workingCopy(['x']);
    const ownerEnv = sshEnv(keys.owner);
    await gitOk(['push', '-q', sshUrl(priv.path_with_namespace), 'master'], dir, ownerEnv);
    await gitOk(['push', '-q', sshUrl(internal.path_with_namespace), 'master'], dir, ownerEnv);
    const otherEnv = sshEnv(keys.other);

    const hidden = await git(['ls-remote', sshUrl(priv.path_with_namespace)], undefined, otherEnv);
    expect(hidden.status).not.toBe(0);
    expect(hidden.out).toContain('GitLab: The project you were looking for could not be found.');
    const missing = await git(['ls-remote', sshUrl(`${owner.username}/no-such-project`)], undefined, otherEnv);
    expect(missing.out).toContain('GitLab: The project you were looking for could not be found.');

    expect((await git(['ls-remote', sshUrl(internal.path_with_namespace)], undefined, otherEnv)).status).toBe(0);
    const pushInternal = await git(['push', sshUrl(internal.path_with_namespace), 'master:other'], dir, otherEnv);
    expect(pushInternal.status).not.toBe(0);
    expect(pushInternal.out).toContain('GitLab: You are not allowed to push code to this project.');

    // A reporter clones a private project and may not push to it.
    const member = await t
      .http()
      .post(`/api/v4/projects/${priv.id}/members`)
      .set('PRIVATE-TOKEN', owner.token)
      .send({ user_id: reporter.id, access_level: 20 });
    expect(member.status).toBe(201);
    const reporterEnv = sshEnv(keys.reporter);
    expect((await git(['ls-remote', sshUrl(priv.path_with_namespace)], undefined, reporterEnv)).status).toBe(0);
    const refused = await git(['push', sshUrl(priv.path_with_namespace), 'master:reporter'], dir, reporterEnv);
    expect(refused.status).not.toBe(0);
    expect(refused.out).toContain('GitLab: You are not allowed to push code to this project.');
    expect(await pushes(priv.id)).toHaveLength(1);
  });

  it('refuses pushes into an archived project, and finds a renamed project by its new path', async () => {
    const p = await project(owner, 'Old Name', 'public');
    const dir = await workingCopy(['x']);
    const env = sshEnv(keys.owner);
    await gitOk(['push', '-q', sshUrl(p.path_with_namespace), 'master'], dir, env);
    const renamed = await t
      .http()
      .put(`/api/v4/projects/${p.id}`)
      .set('PRIVATE-TOKEN', owner.token)
      .send({ path: 'new-name' });
    expect(renamed.status).toBe(200);
    expect((await git(['ls-remote', sshUrl(`${owner.username}/new-name`)], undefined, env)).status).toBe(0);

    expect((await t.http().post(`/api/v4/projects/${p.id}/archive`).set('PRIVATE-TOKEN', owner.token)).status).toBe(
      201,
    );
    const refused = await git(['push', sshUrl(`${owner.username}/new-name`), 'master:more'], dir, env);
    expect(refused.status).not.toBe(0);
    expect(refused.out).toContain('GitLab: You are not allowed to push code to this project.');
  });

  it("refuses a fork's repository until its copy finishes, in GitLab's words, and serves it after", async () => {
    const p = await project(owner, 'Copied Later', 'public');
    const dir = await workingCopy(['x']);
    await gitOk(['push', '-q', sshUrl(p.path_with_namespace), 'master'], dir, sshEnv(keys.owner));
    const worker = t.app.get(GitJobsProcessor).worker;
    await worker.pause();
    let forkPath = '';
    try {
      const fork = await t.http().post(`/api/v4/projects/${p.id}/fork`).set('PRIVATE-TOKEN', other.token);
      expect([fork.status, fork.body.import_status]).toEqual([201, 'scheduled']);
      forkPath = fork.body.path_with_namespace;
      const [clone, push] = await Promise.all([
        git(['ls-remote', sshUrl(forkPath)], undefined, sshEnv(keys.other)),
        git(['push', sshUrl(forkPath), 'master:more'], dir, sshEnv(keys.other)),
      ]);
      for (const refused of [clone, push]) {
        expect(refused.status).not.toBe(0);
        expect(refused.out).toContain('A repository for this project does not exist yet.');
      }
    } finally {
      worker.resume();
    }
    await eventually(
      async () => (await git(['ls-remote', sshUrl(forkPath)], undefined, sshEnv(keys.other))).status === 0,
    );
    await gitOk(['push', '-q', sshUrl(forkPath), 'master:more'], dir, sshEnv(keys.other));
  });

  it('stops a key the moment it is deleted, and a blocked user at once', async () => {
    const user = await createUser(t);
    const key = await newKey(`${user.username}_ed25519`, 'ed25519');
    const keyId = await addKey(user, key);
    expect((await ssh(key, [], ['-T'])).status).toBe(0);
    expect((await t.http().delete(`/api/v4/user/keys/${keyId}`).set('PRIVATE-TOKEN', user.token)).status).toBe(204);
    expect((await ssh(key, [], ['-T'])).out).toContain('Permission denied (publickey)');

    const blocked = await createUser(t);
    const blockedKey = await newKey(`${blocked.username}_ed25519`, 'ed25519');
    await addKey(blocked, blockedKey);
    expect((await ssh(blockedKey, [], ['-T'])).status).toBe(0);
    expect((await t.http().post(`/api/v4/users/${blocked.id}/block`).set('PRIVATE-TOKEN', t.rootToken)).status).toBe(
      201,
    );
    const refused = await ssh(blockedKey, [], ['-T']);
    expect(refused.status).toBe(255);
    expect(refused.out).toContain('Permission denied (publickey)');
  });

  it('lets a deploy key clone where it is enabled (and public projects), push only with can_push, as the user who added it', async () => {
    const target = await project(owner, 'Deployed');
    const elsewhere = await project(owner, 'Not Deployed');
    const open = await project(other, 'Open To All', 'public');
    const dir = await workingCopy(['app.js']);
    for (const p of [target, elsewhere])
      await gitOk(['push', '-q', sshUrl(p.path_with_namespace), 'master'], dir, sshEnv(keys.owner));
    await gitOk(['push', '-q', sshUrl(open.path_with_namespace), 'master'], dir, sshEnv(keys.other));
    const deployKey = await newKey('deploy_ed25519', 'ed25519');
    const added = await t
      .http()
      .post(`/api/v4/projects/${target.id}/deploy_keys`)
      .set('PRIVATE-TOKEN', owner.token)
      .send({ title: 'ci', key: readFileSync(`${deployKey}.pub`, 'utf8').trim(), can_push: false });
    expect(added.status).toBe(201);
    const env = sshEnv(deployKey);

    expect(await ssh(deployKey, [], ['-T'])).toEqual({ status: 0, out: 'Welcome to Lode, Anonymous!\n' });
    expect((await git(['ls-remote', sshUrl(target.path_with_namespace)], undefined, env)).status).toBe(0);
    expect((await git(['ls-remote', sshUrl(open.path_with_namespace)], undefined, env)).status).toBe(0);
    const hidden = await git(['ls-remote', sshUrl(elsewhere.path_with_namespace)], undefined, env);
    expect(hidden.status).not.toBe(0);
    expect(hidden.out).toContain('GitLab: The project you were looking for could not be found.');

    await gitOk(['checkout', '-q', '-b', 'deployed'], dir);
    const readOnly = await git(['push', sshUrl(target.path_with_namespace), 'deployed'], dir, env);
    expect(readOnly.status).not.toBe(0);
    expect(readOnly.out).toContain('GitLab: This deploy key does not have write access to this project.');
    const publicPush = await git(['push', sshUrl(open.path_with_namespace), 'deployed'], dir, env);
    expect(publicPush.out).toContain('GitLab: This deploy key does not have write access to this project.');

    const writable = await t
      .http()
      .put(`/api/v4/projects/${target.id}/deploy_keys/${added.body.id}`)
      .set('PRIVATE-TOKEN', owner.token)
      .send({ can_push: true });
    expect(writable.status).toBe(200);
    await gitOk(['push', '-q', sshUrl(target.path_with_namespace), 'deployed'], dir, env);
    const recorded = await pushes(target.id);
    expect(recorded.at(-1)).toMatchObject({
      userId: owner.id,
      updates: [expect.objectContaining({ ref: 'refs/heads/deployed', before: ZERO, after: await rev(dir) })],
    });
    // can_push is per project: the key still may not push to the public project it is not enabled on.
    expect((await git(['push', sshUrl(open.path_with_namespace), 'deployed'], dir, env)).status).not.toBe(0);

    // Removed from its project, the key opens nothing there any more.
    const removed = await t
      .http()
      .delete(`/api/v4/projects/${target.id}/deploy_keys/${added.body.id}`)
      .set('PRIVATE-TOKEN', owner.token);
    expect(removed.status).toBe(204);
    expect((await git(['ls-remote', sshUrl(target.path_with_namespace)], undefined, env)).status).not.toBe(0);
  });

  it('runs no other command, no pty, no subsystem and no port forwarding', async () => {
    const shell = await ssh(keys.owner, ['ls', '-la', '/']);
    expect(shell.status).toBe(1);
    expect(shell.out).toContain('GitLab: Disallowed command');
    const injected = await ssh(keys.owner, [`git-upload-pack 'a/b.git'; id`]);
    expect(injected.status).toBe(1);
    expect(injected.out).toContain('GitLab: Disallowed command');
    const sftpNamed = await run('ssh', [...sshArgs(keys.owner, ['-s']), 'git@127.0.0.1', 'sftp']);
    expect(sftpNamed.status).not.toBe(0);
    expect(sftpNamed.out).not.toContain('Welcome');

    const forwardPort = await freePort();
    const remoteForward = await run('ssh', [
      ...sshArgs(keys.owner, ['-N', '-o', 'ExitOnForwardFailure=yes', '-R', `${forwardPort}:127.0.0.1:${forwardPort}`]),
      'git@127.0.0.1',
    ]);
    expect(remoteForward.status).toBe(255);
    expect(remoteForward.out).toMatch(/remote port forwarding failed/i);

    // A local forward opens a direct-tcpip channel when something connects: refused.
    const local = await freePort();
    const tunnel = spawn('ssh', [
      ...sshArgs(keys.owner, ['-N', '-L', `${local}:127.0.0.1:${httpBase.split(':')[1]}`]),
      'git@127.0.0.1',
    ]);
    try {
      // Once ssh listens on the local port, what comes through it is the server's answer to the channel.
      const got = await eventually(
        () =>
          new Promise<string>((resolve, reject) => {
            const socket = connect(local, '127.0.0.1');
            let answer = '';
            // Before ssh listens: ECONNREFUSED, tried again. Once it does, the refused channel closes the
            // local socket, with a reset when ssh had not read the request yet (a faster machine's
            // usual case): either way nothing of the server's came through.
            socket.on('error', (err: NodeJS.ErrnoException) =>
              err.code === 'ECONNRESET' ? resolve(answer) : reject(err),
            );
            socket.on('connect', () => socket.write('GET /-/health HTTP/1.0\r\n\r\n'));
            socket.on('data', (c: Buffer) => (answer += c.toString()));
            socket.on('close', () => resolve(answer));
          }),
        10_000,
      );
      expect(got).toBe('');
    } finally {
      tunnel.kill('SIGKILL');
    }
  });

  it('pushes the same webhook payload for an SSH push as for an HTTP push', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const p = await project(owner, 'Hooked');
      const hook = await t
        .http()
        .post(`/api/v4/projects/${p.id}/hooks`)
        .set('PRIVATE-TOKEN', owner.token)
        .send({ url: `${receiver.url}/hook` });
      expect(hook.status).toBe(201);
      const dir = await workingCopy(['one']);
      await gitOk(['push', '-q', `http://git:${owner.token}@${httpBase}/${p.path_with_namespace}.git`, 'master'], dir);
      await gitOk(['checkout', '-q', '-b', 'over-ssh'], dir);
      await gitOk(['push', '-q', sshUrl(p.path_with_namespace), 'over-ssh'], dir, sshEnv(keys.owner));
      await eventually(() => receiver.received.length >= 2, 15_000);
      const [overHttp, overSsh] = receiver.received.map((d) => d.body as Record<string, unknown>);
      expect(receiver.received[1].headers['x-gitlab-event']).toBe('Push Hook');
      expect(overSsh).toMatchObject({
        object_kind: 'push',
        ref: 'refs/heads/over-ssh',
        before: ZERO,
        after: await rev(dir),
        user_id: owner.id,
        user_username: owner.username,
        project_id: p.id,
      });
      // Same shape, same project and user fields: only what the ref update itself changes differs.
      expect(Object.keys(overSsh).sort()).toEqual(Object.keys(overHttp).sort());
      for (const key of ['project', 'repository', 'user_id', 'user_name', 'user_email', 'user_avatar'])
        expect(overSsh[key]).toEqual(overHttp[key]);
      expect(overSsh.project).toMatchObject({ git_ssh_url: p.ssh_url_to_repo });
    } finally {
      await receiver.close();
    }
  });

  it('leaves no git process behind when the client goes away mid-exchange', async () => {
    const p = await project(owner, 'Abandoned', 'public');
    const dir = await workingCopy(['x']);
    await gitOk(['push', '-q', sshUrl(p.path_with_namespace), 'master'], dir, sshEnv(keys.owner));
    const repoDir = repositoryPath(t.config.dataDir, p.id);
    // upload-pack advertises its refs, then waits for the client's wants: the client dies there.
    const client = spawn('ssh', [
      ...sshArgs(keys.owner),
      'git@127.0.0.1',
      `git-upload-pack '${p.path_with_namespace}.git'`,
    ]);
    await new Promise<void>((resolve) => client.stdout.once('data', () => resolve()));
    expect(await gitProcessesFor(repoDir)).toBe(1);
    client.kill('SIGKILL');
    await eventually(async () => (await gitProcessesFor(repoDir)) === 0, 10_000);
  });

  it('closes a connection after six refused keys, even when a seventh would do', async () => {
    const refused: string[] = [];
    for (let i = 0; i < 6; i++) refused.push(await newKey(`many_${i}`, 'ed25519'));
    const args = [...sshArgs([...refused, keys.owner], ['-T']), 'git@127.0.0.1'];
    const r = await run('ssh', args);
    expect(r.status).toBe(255);
    expect(r.out).not.toContain('Welcome');
  });

  it('caps connections per address and cuts a connection that does not log in in time', async () => {
    const { sshMaxConnectionsPerAddress, sshLoginTimeout } = t.config;
    t.config.sshMaxConnectionsPerAddress = 2;
    t.config.sshLoginTimeout = 1;
    const open = () =>
      new Promise<{ banner: string; closedAfterMs: Promise<number> }>((resolve) => {
        const started = Date.now();
        const socket = connect(port, '127.0.0.1');
        let banner = '';
        const closed = new Promise<number>((r) => socket.on('close', () => r(Date.now() - started)));
        socket.on('error', () => undefined);
        socket.on('data', (c) => {
          banner += c.toString('latin1');
          if (banner.includes('\n')) resolve({ banner, closedAfterMs: closed });
        });
        socket.on('close', () => resolve({ banner, closedAfterMs: closed }));
      });
    try {
      const a = await open();
      const b = await open();
      const c = await open();
      expect(a.banner).toMatch(/^SSH-2\.0-Lode/);
      expect(b.banner).toMatch(/^SSH-2\.0-Lode/);
      expect(c.banner).toBe(''); // the third from one address is cut before a byte is sent
      // Neither of the first two authenticates: both are cut at the login timeout, not the idle one.
      expect(await a.closedAfterMs).toBeLessThan(5000);
      expect(await b.closedAfterMs).toBeLessThan(5000);
    } finally {
      t.config.sshMaxConnectionsPerAddress = sshMaxConnectionsPerAddress;
      t.config.sshLoginTimeout = sshLoginTimeout;
    }
  });

  it('keeps its host keys across a restart: known_hosts still matches', async () => {
    const fingerprints = readFileSync(knownHosts, 'utf8');
    expect(fingerprints).toContain(`[127.0.0.1]:${port}`);
    const { config } = t;
    await t.app.close();
    const again = await startTestApp({ ...config, rootToken: config.rootToken });
    t = again;
    // StrictHostKeyChecking=yes: a changed host key would fail the connection.
    const r = await run('ssh', [...sshArgs(keys.owner, ['-T', '-o', 'StrictHostKeyChecking=yes']), 'git@127.0.0.1']);
    expect(r).toEqual({ status: 0, out: `Welcome to Lode, @${owner.username}!\n` });
    expect(readFileSync(knownHosts, 'utf8')).toBe(fingerprints);
  });
});
