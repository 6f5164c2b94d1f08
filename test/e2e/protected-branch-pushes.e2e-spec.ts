import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { git, gitOk, tempDirs } from '../support/git';
import { createUser, type SeededUser } from '../support/seed';
import { freePort, startTestApp, type TestApp } from '../support/test-app';

/**
 * Protected branches enforced where every push passes, the pre-receive gate: over HTTP and over SSH
 * alike, in GitLab's words, and a refused push moves no ref and records nothing.
 */
describe('protected branches on push', () => {
  let t: TestApp;
  let base: string;
  let sshPort: number;
  let owner: SeededUser;
  let developer: SeededUser;
  let project: { id: number; path_with_namespace: string };
  let work: string;
  let developerKey: string;
  const tmp = tempDirs();

  const http = (user: SeededUser) => `http://git:${user.token}@${base}/${project.path_with_namespace}.git`;
  const ssh = () => `ssh://git@127.0.0.1:${sshPort}/${project.path_with_namespace}.git`;
  const sshEnv = (key: string) => ({
    GIT_SSH_COMMAND: `ssh -F /dev/null -i ${key} -p ${sshPort} -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR`,
  });
  const as = (user: SeededUser) => ({
    post: (path: string, body: object) => t.http().post(`/api/v4${path}`).set('PRIVATE-TOKEN', user.token).send(body),
  });
  async function commit(file: string): Promise<string> {
    writeFileSync(join(work, file), `${file}\n`);
    await gitOk(['add', '.'], work);
    await gitOk(['commit', '-q', '-m', file], work);
    return (await gitOk(['rev-parse', 'HEAD'], work)).trim();
  }
  const remoteRefs = async () => gitOk(['ls-remote', http(owner)]);
  const pushCount = async () =>
    (
      await t.db.query<{ n: number }[]>(
        `select count(*)::int as n from events where type = 'RepositoryPushed' and (data->>'projectId')::int = $1`,
        [project.id],
      )
    )[0].n;

  beforeAll(async () => {
    sshPort = await freePort();
    t = await startTestApp({ sshPort, sshHost: '127.0.0.1', defaultBranchProtection: 2 });
    await t.app.listen(0, '127.0.0.1');
    base = `127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    owner = await createUser(t);
    developer = await createUser(t);
    project = (await as(owner).post('/projects', { name: 'Guarded' })).body;
    expect(
      (await as(owner).post(`/projects/${project.id}/members`, { user_id: developer.id, access_level: 30 })).status,
    ).toBe(201);
    const keys = tmp.make();
    developerKey = join(keys, 'developer');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', developerKey]);
    expect(
      (
        await t
          .http()
          .post('/api/v4/user/keys')
          .set('PRIVATE-TOKEN', developer.token)
          .send({ title: 'dev', key: readFileSync(`${developerKey}.pub`, 'utf8').trim() })
      ).status,
    ).toBe(201);
    work = tmp.make();
    await gitOk(['init', '-q', '-b', 'master', work]);
  });
  afterAll(async () => {
    tmp.removeAll();
    await t.close();
  });

  it('lets only maintainers make the first push into an empty repository, then protects the default branch', async () => {
    await commit('one');
    const refused = await git(['push', http(developer), 'master'], work);
    expect(refused.status).not.toBe(0);
    expect(refused.out).toContain(
      'remote: GitLab: You are not allowed to push code to protected branches on this project.',
    );
    expect((await remoteRefs()).trim()).toBe('');
    expect(await pushCount()).toBe(0);
    expect(await t.db.query(`select 1 from pending_pushes where project_id = $1`, [project.id])).toEqual([]);

    await gitOk(['push', '-q', http(owner), 'master'], work);
    const rules = await t
      .http()
      .get(`/api/v4/projects/${project.id}/protected_branches`)
      .set('PRIVATE-TOKEN', owner.token);
    expect(rules.body).toEqual([expect.objectContaining({ name: 'master' })]);
  });

  it('refuses a developer on the protected branch over HTTP and SSH alike, and lets them push elsewhere', async () => {
    const before = await remoteRefs();
    const pushesBefore = await pushCount();
    await commit('two');
    const overHttp = await git(['push', http(developer), 'master'], work);
    expect(overHttp.status).not.toBe(0);
    expect(overHttp.out).toContain(
      'remote: GitLab: You are not allowed to push code to protected branches on this project.',
    );
    const overSsh = await git(['push', ssh(), 'master'], work, sshEnv(developerKey));
    expect(overSsh.status).not.toBe(0);
    expect(overSsh.out).toContain(
      'remote: GitLab: You are not allowed to push code to protected branches on this project.',
    );
    expect(await remoteRefs()).toBe(before);
    expect(await pushCount()).toBe(pushesBefore);

    await gitOk(['push', '-q', ssh(), 'master:topic'], work, sshEnv(developerKey));
    expect(await remoteRefs()).toContain('refs/heads/topic');
  });

  it('refuses force pushes and deletions of a protected branch to maintainers over git', async () => {
    await gitOk(['push', '-q', http(owner), 'master'], work);
    const before = await remoteRefs();
    await gitOk(['reset', '-q', '--hard', 'HEAD~1'], work);
    await commit('rewritten');
    const forced = await git(['push', '--force', http(owner), 'master'], work);
    expect(forced.out).toContain(
      'remote: GitLab: You are not allowed to force push code to a protected branch on this project.',
    );
    // A protected branch that is not the default: deleting it over git is refused too.
    expect((await as(owner).post(`/projects/${project.id}/protected_branches`, { name: 'release-*' })).status).toBe(
      201,
    );
    await gitOk(['push', '-q', http(owner), 'HEAD:release-1'], work);
    const deleted = await git(['push', http(owner), '--delete', 'release-1'], work);
    expect(deleted.out).toContain('remote: GitLab: You can only delete protected branches using the web interface.');
    const deletedDefault = await git(['push', http(owner), '--delete', 'master'], work);
    expect(deletedDefault.out).toContain('remote: GitLab: The default branch of a project cannot be deleted.');
    expect(await remoteRefs()).toContain('refs/heads/release-1');
    expect((await remoteRefs()).split('\n').find((l) => l.endsWith('refs/heads/master'))).toBe(
      before.split('\n').find((l) => l.endsWith('refs/heads/master')),
    );
  });

  it('follows the push level of a wildcard rule: developers where it says 30, nobody where it says 0', async () => {
    expect(
      (
        await as(owner).post(`/projects/${project.id}/protected_branches`, {
          name: 'team-*',
          push_access_level: 30,
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await as(owner).post(`/projects/${project.id}/protected_branches`, {
          name: 'frozen',
          push_access_level: 0,
        })
      ).status,
    ).toBe(201);
    await gitOk(['push', '-q', http(developer), 'HEAD:team-a'], work);
    const frozen = await git(
      ['push', `http://git:${t.rootToken}@${base}/${project.path_with_namespace}.git`, 'HEAD:frozen'],
      work,
    );
    expect(frozen.out).toContain(
      'remote: GitLab: You are not allowed to push code to protected branches on this project.',
    );
  });
});
