import { LodeConfig } from '@app/platform';
import { symlinkSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { git, gitOk, tempDirs } from '../../../test/support/git';
import { repositoryPath } from './git-cli';
import { gitHttpTestServer } from '../../../test/support/git-http-server';
import { projectRepo, type ProposedRefUpdate, type RefUpdateCheck } from './git-repositories';
import { LocalGitRepositories } from './local-git-repositories';

const ZERO = '0'.repeat(40);

/**
 * The pre-receive gate through the real transport: `git push` over smart HTTP to `git http-backend`
 * run by the port, with a check that records what it was asked and answers as the test says.
 */
describe('ref updates checked before git applies them', () => {
  const tmp = tempDirs();
  let repos: LocalGitRepositories;
  let server: Awaited<ReturnType<typeof gitHttpTestServer>>;
  let remote: string;
  let work: string;
  const repo = projectRepo(11);
  const asked: ProposedRefUpdate[][] = [];
  let answer: RefUpdateCheck = async () => undefined;

  const commit = async (file: string) => {
    writeFileSync(join(work, file), `${file}\n`);
    await gitOk(['add', '.'], work);
    await gitOk(['commit', '-q', '-m', file], work);
    return (await gitOk(['rev-parse', 'HEAD'], work)).trim();
  };
  const remoteRefs = async () => (await repos.refs(repo)) as Map<string, string>;

  beforeAll(async () => {
    const config = new LodeConfig();
    // Reached through a symlink, as a data directory on a mounted volume often is: git names the
    // push's quarantine by the real path, and a fast-forward must still read as one.
    config.dataDir = join(tmp.make(), 'data-link');
    symlinkSync(tmp.make(), config.dataDir);
    repos = new LocalGitRepositories(config);
    await repos.onModuleInit();
    await repos.init(repo, 'master');
    server = await gitHttpTestServer((req, res, service) =>
      repos.serveHttp(req, res, repo, service, 'tester', {
        checkRefUpdates: async (updates) => {
          asked.push(updates);
          return answer(updates);
        },
      }),
    );
    remote = server.url;
    work = tmp.make();
    await gitOk(['init', '-q', '-b', 'master', work]);
  });
  afterAll(async () => {
    await server.close();
    await repos.onModuleDestroy();
    tmp.removeAll();
  });

  it('asks once per push, before the refs move, with each update and whether it is forced', async () => {
    const first = await commit('a');
    let refsWhenAsked: Map<string, string> | undefined;
    answer = async () => {
      refsWhenAsked = await remoteRefs();
      return undefined;
    };
    await gitOk(['push', '-q', remote, 'master', 'master:side'], work);
    expect(asked.at(-1)).toEqual(
      expect.arrayContaining([
        { before: ZERO, after: first, ref: 'refs/heads/master', forced: false },
        { before: ZERO, after: first, ref: 'refs/heads/side', forced: false },
      ]),
    );
    expect(refsWhenAsked?.size).toBe(0);
    expect((await remoteRefs()).get('refs/heads/master')).toBe(first);

    answer = async () => undefined;
    const second = await commit('b');
    await gitOk(['push', '-q', remote, 'master'], work);
    expect(asked.at(-1)).toEqual([{ before: first, after: second, ref: 'refs/heads/master', forced: false }]);
  });

  it('refuses every update of a push the check refuses, showing its words as GitLab: lines', async () => {
    const before = await remoteRefs();
    await gitOk(['reset', '-q', '--hard', 'HEAD~1'], work);
    const rewritten = await commit('c');
    answer = async (updates) =>
      updates.some((u) => u.forced)
        ? 'You are not allowed to force push code to a protected branch on this project.'
        : undefined;
    const refused = await git(['push', '--force', remote, 'master', `${rewritten}:refs/heads/other`], work);
    expect(refused.status).not.toBe(0);
    expect(refused.out).toContain(
      'remote: GitLab: You are not allowed to force push code to a protected branch on this project.',
    );
    expect(refused.out).toContain('pre-receive hook declined');
    expect(asked.at(-1)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ ref: 'refs/heads/master', after: rewritten, forced: true }),
        { before: ZERO, after: rewritten, ref: 'refs/heads/other', forced: false },
      ]),
    );
    // Nothing moved, also not the update the check had nothing against.
    expect(await remoteRefs()).toEqual(before);
  });

  it('sees deletions, and refuses the push when the check fails', async () => {
    answer = async () => undefined;
    await gitOk(['push', '-q', remote, '--delete', 'side'], work);
    expect(asked.at(-1)).toEqual([expect.objectContaining({ ref: 'refs/heads/side', after: ZERO, forced: false })]);
    expect((await remoteRefs()).has('refs/heads/side')).toBe(false);

    const before = await remoteRefs();
    answer = async () => {
      throw new Error('database away');
    };
    const refused = await git(['push', remote, 'master:later'], work);
    expect(refused.status).not.toBe(0);
    expect(refused.out).toContain('remote: GitLab: Lode could not check this push; try again.');
    expect(await remoteRefs()).toEqual(before);
  });

  it("refuses a request it cannot read whole, and counts updates as forced where the quarantine is not the push's own", async () => {
    const bare = repositoryPath(repos['config'].dataDir, 11);
    const second = (await remoteRefs()).get('refs/heads/master')!;
    const first = (await gitOk(['rev-parse', `${second}~1`], bare)).trim();
    expect(first).toMatch(/^[0-9a-f]{40}$/);
    const registration = repos['hooks'].register(
      async (updates) => {
        asked.push(updates);
        return undefined;
      },
      repositoryPath(repos['config'].dataDir, 11),
    );
    const ask = (request: string) =>
      new Promise<string>((resolve) => {
        let answer = '';
        const socket = connect(Number(registration.env.LODE_HOOK_PORT), '127.0.0.1', () => socket.write(request));
        socket.setEncoding('latin1');
        socket.on('data', (chunk: string) => (answer += chunk));
        socket.on('close', () => resolve(answer));
      });
    const secret = registration.env.LODE_HOOK_SECRET!;
    try {
      const refused = 'refused\nGitLab: Lode could not check this push; try again.\n';
      const count = asked.length;
      // A hook of the last release (a fourth field, no quarantine line), a cut line, no updates at all.
      expect(await ask(`${secret}\n${first} ${second} refs/heads/master 0\n\n`)).toBe(refused);
      expect(await ask(`${secret}\nquarantine=\n${first} ${second} refs/heads/master 0\n\n`)).toBe(refused);
      expect(await ask(`${secret}\nquarantine=\n${first} ${second.slice(0, 20)}\n\n`)).toBe(refused);
      expect(await ask(`${secret}\nquarantine=\n\n`)).toBe(refused);
      expect(asked).toHaveLength(count);
      // A quarantine elsewhere is not read (the objects are the repository's own here, so the answer holds).
      expect(
        await ask(`${secret}\nquarantine=/tmp/tmp_objdir-incoming-abc123\n${first} ${second} refs/heads/master\n\n`),
      ).toBe('ok\n');
      expect(asked.at(-1)).toEqual([{ before: first, after: second, ref: 'refs/heads/master', forced: false }]);
      expect(await ask(`${secret}\nquarantine=\n${second} ${first} refs/heads/master\n\n`)).toBe('ok\n');
      expect(asked.at(-1)).toEqual([{ before: second, after: first, ref: 'refs/heads/master', forced: true }]);
    } finally {
      registration.release();
    }
  });

  it('refuses a hook whose secret is not a registered push', async () => {
    const { execFile } = await import('node:child_process');
    const registration = repos['hooks'].register(async () => undefined, repositoryPath(repos['config'].dataDir, 11));
    registration.release();
    const out = await new Promise<{ code: number; err: string }>((resolve) => {
      const child = execFile(
        'bash',
        [join(repos['config'].dataDir, 'hooks', 'pre-receive')],
        { env: { ...process.env, ...registration.env } },
        (err, _stdout, stderr) => resolve({ code: err ? Number(err.code) : 0, err: stderr }),
      );
      child.stdin?.end(`${ZERO} ${'1'.repeat(40)} refs/heads/x\n`);
    });
    expect(out.code).toBe(1);
    expect(out.err).toContain('GitLab: Lode could not check this push; try again.');
  });
});
