import { LodeConfig } from '@app/platform';
import { execFile } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gitOk, tempDirs } from '../../../test/support/git';
import { repositoryPath } from './git-cli';
import { countHandedToGit, gitHttpTestServer } from '../../../test/support/git-http-server';
import { projectRepo } from './git-repositories';
import { LocalGitRepositories } from './local-git-repositories';
import { pktLine } from './receive-pack-advertisement';

/**
 * A push's ref advertisement is written by Lode; it must be, byte for byte, what git's receive-pack
 * (behind http-backend's preamble) answers for the same repository, in every state a repository
 * goes through.
 */
describe("a push's ref advertisement written in process", () => {
  const tmp = tempDirs();
  let repos: LocalGitRepositories;
  /** The instance the server answers with (another one stands for a process started afresh). */
  let serving: LocalGitRepositories;
  let server: Awaited<ReturnType<typeof gitHttpTestServer>>;
  let base: string;
  let work: string;
  let bare: string;
  const repo = projectRepo(21);

  /** What git itself answers: http-backend's preamble, then `receive-pack --advertise-refs`. */
  const fromGit = (protocol?: string) =>
    new Promise<string>((resolve, reject) =>
      execFile(
        'git',
        ['receive-pack', '--advertise-refs', bare],
        {
          env: { PATH: process.env.PATH, GIT_TERMINAL_PROMPT: '0', ...(protocol ? { GIT_PROTOCOL: protocol } : {}) },
          encoding: 'latin1',
        },
        (err, stdout) => (err ? reject(err) : resolve(`${pktLine('# service=git-receive-pack\n')}0000${stdout}`)),
      ),
    );
  const fromLode = async (protocol?: string) => {
    const res = await fetch(`${base}/info/refs?service=git-receive-pack`, {
      headers: protocol ? { 'Git-Protocol': protocol } : {},
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-git-receive-pack-advertisement');
    expect(res.headers.get('cache-control')).toBe('no-cache, max-age=0, must-revalidate');
    return Buffer.from(await res.arrayBuffer()).toString('latin1');
  };
  /** How many requests were handed to git's own services. */
  let handedToGit: { readonly count: number };
  const same = async () => {
    for (const protocol of [undefined, 'version=1', 'version=0:foo=bar', 'version=1:version=0', 'version=01']) {
      const handed = handedToGit.count;
      expect(await fromLode(protocol)).toBe(await fromGit(protocol));
      // Written in process, with no git process started for it (the first one's capabilities aside).
      expect(handedToGit.count).toBe(handed);
    }
  };
  const commit = async (file: string) => {
    writeFileSync(join(work, file), file);
    await gitOk(['add', '.'], work);
    await gitOk(['commit', '-q', '-m', file], work);
  };

  beforeAll(async () => {
    const config = new LodeConfig();
    config.dataDir = tmp.make();
    repos = new LocalGitRepositories(config);
    await repos.onModuleInit();
    await repos.init(repo, 'master');
    serving = repos;
    bare = repositoryPath(config.dataDir, 21);
    handedToGit = countHandedToGit(repos);
    server = await gitHttpTestServer((req, res, service) =>
      serving.serveHttp(req, res, repo, service, 'tester', { checkRefUpdates: async () => undefined }),
    );
    base = server.url;
    work = tmp.make();
    await gitOk(['init', '-q', '-b', 'master', work]);
  });
  afterAll(async () => {
    await server.close();
    await repos.onModuleDestroy();
    tmp.removeAll();
  });

  it('answers as git does for an empty repository, then one with branches and tags, loose and packed', async () => {
    await same();
    await commit('a');
    await gitOk(['push', '-q', `${base}`, 'master'], work);
    await same();
    await commit('b');
    await gitOk(['tag', 'light'], work);
    await gitOk(['tag', '-a', '-m', 'annotated', 'v1.0'], work);
    await gitOk(
      ['push', '-q', base, 'master', 'master:feature/x', 'master:zeta', 'master:Zeta', 'light', 'v1.0'],
      work,
    );
    await same();
    await gitOk(['pack-refs', '--all'], bare);
    await commit('c');
    // Loose refs in front of packed ones, names git sorts by bytes (non-ASCII after ASCII).
    await gitOk(['push', '-q', base, 'master', 'master:ünïcode', 'master:refs/keep/other'], work);
    await same();
    await gitOk(['push', '-q', base, ':zeta'], work);
    await same();
  });

  it('shows a broken ref (its object missing), as receive-pack does', async () => {
    writeFileSync(join(bare, 'refs', 'heads', 'broken'), `${'1'.repeat(40)}\n`);
    try {
      expect(await fromGit()).toContain(`${'1'.repeat(40)} refs/heads/broken`);
      await same();
    } finally {
      rmSync(join(bare, 'refs', 'heads', 'broken'));
    }
  });

  it("leaves protocol v2 and a repository with alternates to git, and git's push works either way", async () => {
    // Asked for v2, receive-pack speaks v0: git's own answer, without http-backend's preamble.
    const handed = handedToGit.count;
    const v2 = await fromLode('version=2');
    expect(v2).toBe((await fromGit('version=2')).slice(`${pktLine('# service=git-receive-pack\n')}0000`.length));
    writeFileSync(join(bare, 'objects', 'info', 'alternates'), `${join(bare, 'objects')}\n`);
    await commit('d');
    await gitOk(['push', '-q', base, 'master'], work);
    expect(await fromLode()).toBe(await fromGit());
    expect(handedToGit.count - handed).toBe(1 + 2 + 1); // v2; the push's advertisement and POST; the last
  });

  it('leaves to git a repository whose configuration changes the advertisement, and a process whose probes keep differing', async () => {
    const config = new LodeConfig();
    config.dataDir = repos['config'].dataDir;
    const fresh = new LocalGitRepositories(config);
    await fresh.onModuleInit();
    const freshToGit = countHandedToGit(fresh);
    serving = fresh;
    try {
      rmSync(join(bare, 'objects', 'info', 'alternates'));
      // A fresh process writes it, once its probe matched git's.
      expect(await fromLode()).toBe(await fromGit());
      expect(freshToGit.count).toBe(0);
      // Refs hidden by the repository's configuration: git's answer, which leaves them out.
      await gitOk(['config', 'receive.hideRefs', 'refs/keep'], bare);
      expect(await fromLode()).toBe(await fromGit());
      expect(await fromGit()).not.toContain('refs/keep/other');
      expect(freshToGit.count).toBe(1);
      await gitOk(['config', '--unset', 'receive.hideRefs'], bare);
      // Probes whose refs differ from git's (a ref moved between the two reads, or the machine's
      // configuration hides some): asked again three times, then every advertisement is git's.
      (fresh as unknown as { receivePackProbe?: unknown }).receivePackProbe = undefined;
      const reads = fresh['reads'];
      const refsUnder = reads.refsUnder.bind(reads);
      reads.refsUnder = async (path, max) => (await refsUnder(path, max))?.slice(1);
      for (let i = 0; i < 5; i++) expect(await fromLode()).toBe(await fromGit());
      expect(freshToGit.count).toBe(1 + 5);
      reads.refsUnder = refsUnder;
      expect(await fromLode()).toBe(await fromGit());
      expect(freshToGit.count).toBe(1 + 5 + 1);
    } finally {
      serving = repos;
      await fresh.onModuleDestroy();
    }
  });
});
