import { LodeConfig } from '@app/platform';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { git as git_, gitOk, tempDirs } from '../../../test/support/git';
import { commitGraphCommits, commitGraphFiles, repositoryPath, writeCommitGraph } from './git-cli';
import { projectRepo } from './git-repositories';
import { LocalGitRepositories } from './local-git-repositories';

const ZERO = '0'.repeat(40);

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * Adds `count` commits to `source`'s main through fast-import, each changing one of ten files, and
 * pushes main to the bare repository at `target` (one pack: fewer loose objects than a repack waits for).
 */
async function growHistory(source: string, target: string, from: number, count: number): Promise<void> {
  let stream = '';
  for (let i = from; i < from + count; i++) {
    const content = `v${i}\n`;
    stream += `commit refs/heads/main\ncommitter Ann <ann@example.com> ${1_700_000_000 + i} +0000\ndata 3\nc${i % 10}\n`;
    // A later import goes on from the branch as it stands (fast-import's own way to resume).
    if (i === from && from > 0) stream += `from refs/heads/main^0\n`;
    stream += `M 100644 inline f${i % 10}.txt\ndata ${content.length}\n${content}\n`;
  }
  await new Promise<void>((resolve, reject) => {
    const child = spawn('git', ['fast-import', '--quiet'], { cwd: source, stdio: ['pipe', 'ignore', 'inherit'] });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`fast-import: ${code}`))));
    child.stdin.end(stream);
  });
  await gitOk(['push', '-q', target, 'main'], source);
}

/** The port against temporary bare repositories, named by project id under a temporary data directory. */
describe('LocalGitRepositories', () => {
  const tmp = tempDirs();
  let git: LocalGitRepositories;
  let dataDir: string;
  let work: string;
  const repo = projectRepo(7);

  beforeAll(async () => {
    dataDir = tmp.make();
    const config = new LodeConfig();
    config.dataDir = dataDir;
    git = new LocalGitRepositories(config);
    work = tmp.make();
    await gitOk(['init', '-q', work]);
    await gitOk(['commit', '-q', '--allow-empty', '-m', 'first'], work);
  });

  afterAll(() => {
    git.onModuleDestroy();
    tmp.removeAll();
  });

  /** Project `id`'s new repository and a work repository whose main `growHistory` pushes to it. */
  const pushedRepository = async (id: number) => {
    const pushed = projectRepo(id);
    await git.init(pushed, 'main');
    const source = tmp.make();
    await gitOk(['init', '-q', '-b', 'main', source]);
    return { pushed, path: repositoryPath(dataDir, id), source };
  };

  /** `work` against a second LocalGitRepositories on the same data directory: another process, or this one restarted. */
  const inAnotherProcess = async (work: (other: LocalGitRepositories) => Promise<void>) => {
    const other = new LocalGitRepositories(Object.assign(new LodeConfig(), { dataDir }));
    try {
      await work(other);
    } finally {
      await other.onModuleDestroy();
    }
  };

  it('makes a bare repository under the hashed path, with HEAD on the default branch; twice is a no-op', async () => {
    expect(await git.exists(repo)).toBe(false);
    await git.init(repo, 'main');
    await git.init(repo, 'other');
    expect(existsSync(join(repositoryPath(dataDir, 7), 'HEAD'))).toBe(true);
    expect(await git.headBranch(repo)).toBe('main');
    expect(await git.statistics(repo, 'main')).toEqual({ commitCount: 0, repositorySize: expect.any(Number) });
    await expect(git.init(projectRepo(8), 'bad name')).rejects.toThrow(/bad branch name/);
  });

  it('reads a repository not on disk yet (a fork being copied) as an empty one, and the real one once it is there', async () => {
    const later = projectRepo(77);
    expect(await git.resolveCommit(later, 'master')).toBeUndefined();
    expect(await git.fileAtRef(later, 'master', 'README.md')).toBeUndefined();
    expect(await git.tree(later, 'master', '', false)).toBeUndefined();
    expect(await git.branches(later, 'master')).toEqual([]);
    expect(await git.tags(later)).toEqual([]);
    expect(await git.tag(later, 'v1')).toBeUndefined();
    expect(await git.refs(later)).toEqual(new Map());
    expect((await git.commitLog(later, { all: true, offset: 0, limit: 20, withStats: false })).commits).toEqual([]);
    // Made behind this object's back, as another process's copy is: nothing of the empty stand-in
    // was kept for the path, so the next read finds the commit.
    const path = repositoryPath(dataDir, 77);
    await gitOk(['init', '-q', '--bare', path]);
    await gitOk(['push', '-q', path, 'HEAD:refs/heads/master'], work);
    const head = (await gitOk(['rev-parse', 'HEAD'], work)).trim();
    expect((await git.resolveCommit(later, 'master'))?.id).toBe(head);
    // A directory that is there but is no repository is no "not there yet": it fails as before.
    mkdirSync(repositoryPath(dataDir, 78), { recursive: true });
    await expect(git.resolveCommit(projectRepo(78), 'master')).rejects.toThrow();
  });

  it("writes what git's own `init --bare --template=` writes, with pushes over HTTP on, and git reads it as such", async () => {
    await git.init(projectRepo(9), 'trunk/next');
    const ours = repositoryPath(dataDir, 9);
    const theirs = join(tmp.make(), 'theirs.git');
    await gitOk(['init', '-q', '--bare', '--template=', '--initial-branch=trunk/next', theirs]);
    await gitOk(['config', 'http.receivepack', 'true'], theirs);
    const tree = (root: string): string[] =>
      readdirSync(root, { recursive: true, encoding: 'utf8' })
        .map((p) => (statSync(join(root, p)).isDirectory() ? `${p}/` : p))
        .sort();
    expect(tree(ours)).toEqual(tree(theirs));
    for (const file of ['HEAD', 'config'])
      expect(readFileSync(join(ours, file), 'utf8')).toBe(readFileSync(join(theirs, file), 'utf8'));
    expect(await gitOk(['config', '--list', '--local'], ours)).toBe(
      await gitOk(['config', '--list', '--local'], theirs),
    );
    expect((await gitOk(['rev-parse', '--is-bare-repository'], ours)).trim()).toBe('true');
    expect((await gitOk(['symbolic-ref', 'HEAD'], ours)).trim()).toBe('refs/heads/trunk/next');
    await gitOk(['push', '-q', ours, 'HEAD:refs/heads/trunk/next'], work);
    expect(await gitOk(['fsck', '--strict', '--no-dangling'], ours)).toBe('');
    expect(await git.headBranch(projectRepo(9))).toBe('trunk/next');
    // Names git's check-ref-format refuses make no repository at all.
    for (const bad of ['a..b', 'main.lock', '-main', 'x'.repeat(251)]) {
      await expect(git.init(projectRepo(10), bad)).rejects.toThrow(/bad branch name/);
      expect(await git.exists(projectRepo(10))).toBe(false);
    }
  });

  it('describes what a push brought, and answers reads of what it wrote', async () => {
    await gitOk(['push', '-q', repositoryPath(dataDir, 7), 'HEAD:refs/heads/main'], work);
    await gitOk(['commit', '-q', '--allow-empty', '-m', 'second'], work);
    await gitOk(['push', '-q', repositoryPath(dataDir, 7), 'HEAD:refs/heads/topic'], work);
    const refs = await git.refs(repo);
    const main = refs.get('refs/heads/main')!;
    const topic = refs.get('refs/heads/topic')!;
    const [update] = await git.describeRefUpdates(
      repo,
      [{ ref: 'refs/heads/topic', before: ZERO, after: topic }],
      'main',
    );
    // A new branch shows the commits its base lacks.
    expect(update).toMatchObject({ checkoutSha: topic, totalCommitsCount: 1, message: null });
    expect(update.commits.map((c) => c.message.trim())).toEqual(['second']);
    expect((await git.statistics(repo, 'topic')).commitCount).toBe(2);
    expect((await git.resolveCommit(repo, 'main'))?.id).toBe(main);
    expect((await git.branches(repo, 'main')).map((b) => [b.name, b.merged])).toEqual([
      ['main', false],
      ['topic', false],
    ]);
    await git.setHeadBranch(repo, 'topic');
    expect(await git.headBranch(repo)).toBe('topic');
  });

  it('counts commits forward from the last count after a fast-forward, and from scratch after a rewrite', async () => {
    const target = repositoryPath(dataDir, 7);
    const push = (spec: string, ...flags: string[]) => gitOk(['push', '-q', ...flags, target, spec], work);
    await gitOk(['checkout', '-q', '-b', 'counted'], work);
    await push('HEAD:refs/heads/counted');
    expect((await git.statistics(repo, 'counted')).commitCount).toBe(2);
    for (const m of ['third', 'fourth', 'fifth']) await gitOk(['commit', '-q', '--allow-empty', '-m', m], work);
    await push('HEAD:refs/heads/counted');
    expect((await git.statistics(repo, 'counted')).commitCount).toBe(5);
    // Rewritten to a shorter history: the last count is no ancestor, so the whole history is walked.
    await gitOk(['reset', '-q', '--hard', 'HEAD~2'], work);
    await gitOk(['commit', '-q', '--allow-empty', '-m', 'rewritten'], work);
    await push('HEAD:refs/heads/counted', '--force');
    expect((await git.statistics(repo, 'counted')).commitCount).toBe(4);
    // Another branch of the same repository: a count of its own, not a step from the other's.
    expect((await git.statistics(repo, 'main')).commitCount).toBe(1);
    expect((await git.statistics(repo, 'counted')).commitCount).toBe(4);
    expect((await git.statistics(repo, 'missing')).commitCount).toBe(0);
    // The tip taken from refs the caller has just read (a push's record): the same counts.
    await gitOk(['commit', '-q', '--allow-empty', '-m', 'sixth'], work);
    await push('HEAD:refs/heads/counted');
    const refs = await git.refs(repo);
    expect((await git.statistics(repo, 'counted', refs)).commitCount).toBe(5);
    expect((await git.statistics(repo, 'main', refs)).commitCount).toBe(1);
    expect((await git.statistics(repo, 'missing', refs)).commitCount).toBe(0);
    // Known fast-forwards from the last count to the tip step it forward without a walk: the count
    // is what they say (a made-up 100 here shows they were used); ones that do not lead from the
    // last count to the tip are ignored and git counts (from the last count, made up or not).
    const last = refs.get('refs/heads/counted')!;
    expect((await git.statistics(repo, 'counted', refs)).commitCount).toBe(5);
    const tips: string[] = [];
    for (const m of ['seventh', 'eighth']) {
      await gitOk(['commit', '-q', '--allow-empty', '-m', m], work);
      tips.push((await gitOk(['rev-parse', 'HEAD'], work)).trim());
    }
    await push('HEAD:refs/heads/counted');
    const stepped = [
      { from: last, to: tips[0], commits: 1 },
      { from: tips[0], to: tips[1], commits: 100 },
    ];
    expect((await git.statistics(repo, 'counted', await git.refs(repo), stepped)).commitCount).toBe(106);
    await gitOk(['commit', '-q', '--allow-empty', '-m', 'ninth'], work);
    await push('HEAD:refs/heads/counted');
    const elsewhere = [{ from: tips[0], to: tips[1], commits: 100 }];
    expect((await git.statistics(repo, 'counted', undefined, elsewhere)).commitCount).toBe(107);
  });

  it('reads named refs as for-each-ref lists them, loose or packed, moved since the last read', async () => {
    const named = projectRepo(19);
    await git.init(named, 'main');
    const target = repositoryPath(dataDir, 19);
    const push = (spec: string) => gitOk(['push', '-q', '--force', target, spec], work);
    await push('HEAD:refs/heads/main');
    await gitOk(['tag', '-a', '-m', 'annotated', 'named-v1'], work);
    await push('refs/tags/named-v1');
    const names = ['refs/heads/main', 'refs/tags/named-v1', 'refs/heads/missing', 'refs/heads/a..b'];
    const listed = async () => new Map([...(await git.refs(named))].filter(([ref]) => names.includes(ref)));
    expect(await git.refsNamed(named, names)).toEqual(await listed());
    expect((await git.refsNamed(named, names)).get('refs/tags/named-v1')).not.toBe(
      (await gitOk(['rev-parse', 'named-v1^{commit}'], work)).trim(),
    );
    // Packed, then moved again (a loose ref in front of its packed one): read as it stands each time.
    await gitOk(['pack-refs', '--all'], target);
    expect(await git.refsNamed(named, names)).toEqual(await listed());
    await gitOk(['commit', '-q', '--allow-empty', '-m', 'moved'], work);
    await push('HEAD:refs/heads/main');
    expect((await git.refsNamed(named, ['refs/heads/main'])).get('refs/heads/main')).toBe(
      (await gitOk(['rev-parse', 'HEAD'], work)).trim(),
    );
    expect(await git.refsNamed(named, names)).toEqual(await listed());
  });

  it('answers a size it measured within sizeMaxAgeMs again, and measures anew past it or when asked to', async () => {
    const weighed = projectRepo(18);
    await git.init(weighed, 'main');
    const target = repositoryPath(dataDir, 18);
    const first = (await git.statistics(weighed, 'main')).repositorySize;
    // A push of a few kilobytes of incompressible content: the store grows.
    writeFileSync(join(work, 'noise.bin'), randomBytes(64 * 1024));
    await gitOk(['add', 'noise.bin'], work);
    await gitOk(['commit', '-q', '-m', 'noise'], work);
    await gitOk(['push', '-q', target, 'HEAD:refs/heads/main'], work);
    expect((await git.statistics(weighed, 'main', undefined, [], 60_000)).repositorySize).toBe(first);
    const grown = (await git.statistics(weighed, 'main')).repositorySize;
    expect(grown).toBeGreaterThan(first + 60 * 1024);
    expect((await git.statistics(weighed, 'main', undefined, [], 60_000)).repositorySize).toBe(grown);
    await new Promise((resolve) => setTimeout(resolve, 30));
    // Another push, and a measure older than the allowed age: measured again.
    writeFileSync(join(work, 'more.bin'), randomBytes(64 * 1024));
    await gitOk(['add', 'more.bin'], work);
    await gitOk(['commit', '-q', '-m', 'more'], work);
    await gitOk(['push', '-q', target, 'HEAD:refs/heads/main'], work);
    expect((await git.statistics(weighed, 'main', undefined, [], 20)).repositorySize).toBeGreaterThan(
      grown + 60 * 1024,
    );
  });

  it('packs loose objects once they pile up past 256, keeping every object, reachable or not', async () => {
    const packed = projectRepo(17);
    const path = repositoryPath(dataDir, 17);
    await git.init(packed, 'main');
    const person = { name: 'Ann', email: 'ann@example.com', when: new Date('2024-01-01T00:00:00Z') };
    let tip: string | null = null;
    const tips: string[] = [];
    // Each API-style commit leaves a blob, two trees and a commit loose: 70 of them pass 256.
    for (let i = 0; i < 70; i++) {
      tip = await git.writeCommit(packed, {
        parent: tip,
        actions: [{ action: tip ? 'update' : 'create', filePath: `dir/f.txt`, content: Buffer.from(`v${i}\n`) }],
        message: `c${i}`,
        author: person,
        committer: person,
      });
      tips.push(tip);
    }
    expect(await git.moveRef(packed, 'refs/heads/main', ZERO, tip!)).toBe(true);
    const loose = join(tmp.make(), 'loose.txt');
    writeFileSync(loose, 'nobody refers to me\n');
    const unreachable = (await gitOk(['hash-object', '-w', loose], path)).trim();
    const counted = async () =>
      Object.fromEntries(
        (await gitOk(['count-objects', '-v'], path))
          .trim()
          .split('\n')
          .map((l) => l.split(': '))
          .map(([k, v]) => [k, Number(v)]),
      ) as Record<string, number>;
    expect((await counted()).count).toBeGreaterThan(256);

    expect(await commitGraphFiles(path)).toEqual([]);
    const stats = await git.statistics(packed, 'main');
    expect(stats.commitCount).toBe(70);
    await git.upkeepDone();
    const after = await counted();
    expect(after).toMatchObject({ count: 0, packs: 1 });
    // The packed history joined the commit-graph (without changed-path filters), and git finds it whole.
    expect(await commitGraphFiles(path)).toEqual([{ commits: 70, bloom: false }]);
    await gitOk(['commit-graph', 'verify'], path);
    expect(after['in-pack']).toBeGreaterThan(256);
    // Nothing was lost: the history, every version of the file, and the object nobody refers to.
    await gitOk(['fsck', '--no-progress', '--no-dangling'], path);
    await gitOk(['cat-file', '-e', unreachable], path);
    for (const [i, sha] of tips.entries())
      expect((await git.readFile(packed, sha, 'dir/f.txt'))!.content.toString()).toBe(`v${i}\n`);
    // The size after the repack is the pack's, and a second look starts nothing more.
    expect((await git.statistics(packed, 'main')).repositorySize).toBe(after['size-pack'] * 1024);
    await git.upkeepDone();
    expect((await counted()).packs).toBe(1);

    // The next pile of commits joins the graph too (a layer of its own, or merged with the one below
    // when it is as big), and a path's history read through the graph answers as without.
    for (let i = 70; i < 140; i++) {
      tip = await git.writeCommit(packed, {
        parent: tip,
        actions: [
          {
            action: i === 70 ? 'create' : 'update',
            filePath: i % 2 ? 'dir/f.txt' : 'dir/g.txt',
            content: Buffer.from(`v${i}\n`),
          },
        ],
        message: `c${i}`,
        author: person,
        committer: person,
      });
    }
    expect(await git.moveRef(packed, 'refs/heads/main', tips[69], tip!)).toBe(true);
    expect((await git.statistics(packed, 'main')).commitCount).toBe(140);
    await git.upkeepDone();
    expect(await commitGraphCommits(path)).toBe(140);
    await gitOk(['commit-graph', 'verify'], path);
    const history = (args: string[]) =>
      gitOk(['--literal-pathspecs', ...args, 'rev-list', 'main', '--', 'dir/g.txt'], path);
    expect(await history([])).toBe(await history(['-c', 'core.commitGraph=false']));
    expect((await history([])).trim().split('\n')).toHaveLength(35);
  });

  it('writes the commit-graph after the answer once a pushed history reaches 1,000 commits, and again 1,000 later', async () => {
    const { pushed, path, source } = await pushedRepository(20);
    await growHistory(source, path, 0, 600);
    expect((await git.statistics(pushed, 'main')).commitCount).toBe(600);
    await git.upkeepDone();
    // One pack, no pile of loose objects: no repack, and under 1,000 commits no graph either.
    expect(await commitGraphFiles(path)).toEqual([]);

    await growHistory(source, path, 600, 600);
    expect((await git.statistics(pushed, 'main')).commitCount).toBe(1200);
    await git.upkeepDone();
    expect(await commitGraphFiles(path)).toEqual([{ commits: 1200, bloom: false }]);
    await gitOk(['commit-graph', 'verify'], path);

    // 900 more are not worth a write; past 1,000 more the new commits join the graph.
    await growHistory(source, path, 1200, 900);
    expect((await git.statistics(pushed, 'main')).commitCount).toBe(2100);
    await git.upkeepDone();
    expect(await commitGraphCommits(path)).toBe(1200);
    await growHistory(source, path, 2100, 200);
    expect((await git.statistics(pushed, 'main')).commitCount).toBe(2300);
    // Housekeeping's gc right behind the write waits for it, then writes the graph anew.
    await git.gc(pushed);
    await git.upkeepDone();
    expect(await commitGraphCommits(path)).toBe(2300);
    await gitOk(['commit-graph', 'verify'], path);
    const walk = await git_(['rev-list', '--count', 'main'], path);
    expect(walk).toEqual({ status: 0, out: '2300\n' });
    const history = (args: string[]) =>
      gitOk(['--literal-pathspecs', ...args, 'rev-list', 'main', '--', 'f3.txt'], path);
    expect((await history([])).trim().split('\n')).toHaveLength(230);
    expect(await history([])).toBe(await history(['-c', 'core.commitGraph=false']));

    // Another process meets the repository: it reads how much the graph holds and counts from there.
    await inAnotherProcess(async (other) => {
      await growHistory(source, path, 2300, 50);
      expect((await other.statistics(pushed, 'main')).commitCount).toBe(2350);
      await other.upkeepDone();
      expect(await commitGraphCommits(path)).toBe(2300);
    });
  });

  it('writes the commit-graph for a history pushed past a small graph, as a process first meets it', async () => {
    const { pushed, path, source } = await pushedRepository(21);
    await growHistory(source, path, 0, 70);
    expect(await writeCommitGraph(path)).toBe(true);
    expect(await commitGraphCommits(path)).toBe(70);
    await growHistory(source, path, 70, 1500);
    // A process that has not seen the repository yet (a restart) finds a graph there, of 70 commits.
    await inAnotherProcess(async (fresh) => {
      expect((await fresh.statistics(pushed, 'main')).commitCount).toBe(1570);
      await fresh.upkeepDone();
      expect(await commitGraphCommits(path)).toBe(1570);
    });
  });

  it('leaves the commit-graph to a writer holding its lock, and removes locks a killed writer left', async () => {
    const { pushed, path, source } = await pushedRepository(22);
    await growHistory(source, path, 0, 10);
    expect(await writeCommitGraph(path)).toBe(true);
    const chain = join(path, 'objects', 'info', 'commit-graphs', 'commit-graph-chain');
    const lock = `${chain}.lock`;
    const before = readFileSync(chain, 'utf8');
    await growHistory(source, path, 10, 5);
    writeFileSync(lock, '');
    expect(await writeCommitGraph(path)).toBe(false);
    expect(readFileSync(chain, 'utf8')).toBe(before);
    expect(existsSync(lock)).toBe(true);
    // Eleven minutes old: no write takes that long, so its writer is gone.
    const old = new Date(Date.now() - 11 * 60_000);
    utimesSync(lock, old, old);
    expect(await writeCommitGraph(path)).toBe(true);
    expect(existsSync(lock)).toBe(false);
    expect(await commitGraphCommits(path)).toBe(15);
    await gitOk(['commit-graph', 'verify'], path);

    // Filters another git wrote (a one-file graph here, as git gc writes it) are not carried on, and
    // a lock on that file a killed writer left does not stop housekeeping.
    await gitOk(['commit-graph', 'write', '--reachable', '--changed-paths'], path);
    expect(await commitGraphFiles(path)).toEqual([{ commits: 15, bloom: true }]);
    const gcLock = join(path, 'objects', 'info', 'commit-graph.lock');
    writeFileSync(gcLock, '');
    utimesSync(gcLock, old, old);
    await git.gc(pushed);
    expect(existsSync(gcLock)).toBe(false);
    expect(existsSync(join(path, 'objects', 'info', 'commit-graph'))).toBe(false);
    expect(await commitGraphFiles(path)).toEqual([{ commits: 15, bloom: false }]);
    await gitOk(['commit-graph', 'verify'], path);
  });

  it("lists a branch's tree as the branch moves, each path and depth apart (listings kept by commit and by tree)", async () => {
    const names = async (ref: string, dir: string, recursive: boolean) =>
      (await git.tree(repo, ref, dir, recursive))?.map((e) => e.path);
    mkdirSync(join(work, 'listed'), { recursive: true });
    writeFileSync(join(work, 'listed', 'a.txt'), 'a\n');
    await gitOk(['add', 'listed'], work);
    await gitOk(['commit', '-q', '-m', 'listed a'], work);
    await gitOk(['push', '-q', repositoryPath(dataDir, 7), 'HEAD:refs/heads/listing'], work);
    const first = (await git.resolveCommit(repo, 'listing'))!.id;
    expect(await names('listing', 'listed', false)).toEqual(['listed/a.txt']);
    expect(await names('listing', 'listed', false)).toEqual(['listed/a.txt']);
    writeFileSync(join(work, 'listed', 'b.txt'), 'b\n');
    await gitOk(['add', 'listed'], work);
    await gitOk(['commit', '-q', '-m', 'listed b'], work);
    await gitOk(['push', '-q', repositoryPath(dataDir, 7), 'HEAD:refs/heads/listing'], work);
    expect(await names('listing', 'listed', false)).toEqual(['listed/a.txt', 'listed/b.txt']);
    expect(await names(first, 'listed', false)).toEqual(['listed/a.txt']);
    expect(await names('listing', '', false)).toContain('listed');
    expect(await names('listing', '', true)).toEqual(
      expect.arrayContaining(['listed', 'listed/a.txt', 'listed/b.txt']),
    );
    expect(await names('listing', 'missing', false)).toBeUndefined();
    // The tests after this one start from the work tree as it was.
    await gitOk(['rm', '-q', '-r', 'listed'], work);
    await gitOk(['commit', '-q', '-m', 'unlisted'], work);
  });

  it('reads a raw blob and makes an archive once, then serves it from the cache', async () => {
    writeFileSync(join(work, 'README'), 'hello\n');
    await gitOk(['add', 'README'], work);
    await gitOk(['commit', '-q', '-m', 'readme'], work);
    await gitOk(['push', '-q', repositoryPath(dataDir, 7), 'HEAD:refs/heads/files'], work);
    const [entry] = (await git.tree(repo, 'files', '', false))!;
    expect(await git.rawBlob(repo, entry.id)).toMatchObject({
      size: 6,
      binary: false,
      content: Buffer.from('hello\n'),
    });
    const head = (await git.resolveCommit(repo, 'files'))!.id;
    const first = await git.archive(repo, head, 'tar', 'p');
    expect(first.cached).toBe(false);
    expect((await readAll(first.read())).length).toBe(first.size);
    const again = await git.archive(repo, head, 'tar', 'p');
    expect(again).toMatchObject({ cached: true, size: first.size, etag: first.etag });
  });

  it('keeps small blobs read by id in memory (LODE_BLOB_CACHE_BYTES), by full id and repository only', async () => {
    writeFileSync(join(work, 'tiny.txt'), 'hi\n');
    writeFileSync(join(work, 'big.bin'), Buffer.alloc(100 * 1024, 7));
    await gitOk(['add', 'tiny.txt', 'big.bin'], work);
    await gitOk(['commit', '-q', '-m', 'blobs'], work);
    await gitOk(['push', '-q', repositoryPath(dataDir, 7), 'HEAD:refs/heads/blobs'], work);
    const entries = (await git.tree(repo, 'blobs', '', false))!;
    const tiny = entries.find((e) => e.name === 'tiny.txt')!.id;
    const big = entries.find((e) => e.name === 'big.bin')!.id;
    const hits = () => git.blobCache().hits;

    expect(git.keptBlob(repo, tiny)).toBeUndefined();
    // Read by an abbreviation: kept by the full id it names, never looked up by one.
    expect(await git.rawBlob(repo, tiny.slice(0, 10))).toMatchObject({ sha: tiny, size: 3 });
    expect(git.keptBlob(repo, tiny.slice(0, 10))).toBeUndefined();
    const kept = git.keptBlob(repo, tiny)!;
    expect(kept).toMatchObject({ sha: tiny, size: 3, binary: false, content: Buffer.from('hi\n') });
    // Memory of its own, not a view into one of Node's shared 8 KB slabs.
    expect(kept.content.buffer.byteLength).toBe(3);
    const before = hits();
    expect(await git.rawBlob(repo, tiny)).toBe(kept);
    expect(hits()).toBe(before + 1);
    // Another repository holds no such blob: never answered from this one's.
    expect(git.keptBlob(projectRepo(8), tiny)).toBeUndefined();
    // Over 64 KB: read whole (under 1 MB) but not kept.
    expect(await git.rawBlob(repo, big)).toMatchObject({ sha: big, size: 100 * 1024, binary: false });
    expect(git.keptBlob(repo, big)).toBeUndefined();
    expect(git.blobCache().bytes).toBeGreaterThan(3);
    expect(git.blobCache().bytes).toBeLessThan(4096);
    // The files API reads the kept bytes after the path's entry.
    const file = await git.fileAtRef(repo, 'blobs', 'tiny.txt');
    expect(file?.file).toMatchObject({ blobId: tiny, content: Buffer.from('hi\n') });
    expect(hits()).toBe(before + 2);
  });

  it('keeps no blob when LODE_BLOB_CACHE_BYTES is 0', async () => {
    const config = new LodeConfig();
    config.dataDir = dataDir;
    config.blobCacheBytes = 0;
    const uncached = new LocalGitRepositories(config);
    try {
      const [entry] = (await uncached.tree(repo, 'blobs', '', false))!.filter((e) => e.name === 'tiny.txt');
      expect(await uncached.rawBlob(repo, entry.id)).toMatchObject({ size: 3 });
      expect(uncached.keptBlob(repo, entry.id)).toBeUndefined();
      expect(uncached.blobCache()).toEqual({ bytes: 0, hits: 0 });
    } finally {
      await uncached.onModuleDestroy();
    }
  });

  it('names each repository as repositoryPath does, and remembers at most 10,000 names', () => {
    const remembered = (git as unknown as { paths: Map<number, string> }).paths;
    const sha = 'a'.repeat(40);
    for (let id = 1; id <= 10_500; id++) git.keptBlob(projectRepo(id), sha);
    expect(remembered.size).toBeLessThanOrEqual(10_000);
    expect(remembered.size).toBeGreaterThan(0);
    for (const [id, path] of remembered) expect(path).toBe(repositoryPath(dataDir, id));
  });

  it('clones a fork from its source and removes a repository with its archive cache', async () => {
    const fork = projectRepo(31);
    await git.cloneBare(repo, fork);
    expect(await git.refs(fork)).toEqual(await git.refs(repo));
    // The job made again (its recording failed after the copy landed) keeps the copy and what the fork got since.
    const [, tip] = [...(await git.refs(fork))].find(([ref]) => ref.startsWith('refs/heads/'))!;
    expect(await git.moveRef(fork, 'refs/heads/fork-own', '0'.repeat(40), tip)).toBe(true);
    await git.cloneBare(repo, fork);
    expect((await git.refs(fork)).get('refs/heads/fork-own')).toBe(tip);
    await expect(git.cloneBare(projectRepo(10), projectRepo(11))).rejects.toThrow(
      /source repository of project 10 is missing/,
    );
    await git.remove(repo);
    await git.remove(repo);
    expect(await git.exists(repo)).toBe(false);
    expect(existsSync(join(dataDir, 'cache', 'archives', '7'))).toBe(false);
    expect(await git.exists(fork)).toBe(true);
  });

  it('removes at start the half-built repositories a crash left mid-init or mid-fork, not one being built', async () => {
    await git.init(projectRepo(31), 'main');
    const real = repositoryPath(dataDir, 31);
    const crashed = [`${real}.tmp-0badc0de`, `${repositoryPath(dataDir, 32)}.tmp-1234abcd`];
    const building = `${repositoryPath(dataDir, 33)}.tmp-feedf00d`;
    const longAgo = new Date(Date.now() - 3600_000);
    for (const dir of [...crashed, building]) {
      mkdirSync(join(dir, 'objects', 'pack'), { recursive: true });
      writeFileSync(join(dir, 'HEAD'), 'ref: refs/heads/main\n');
      writeFileSync(join(dir, 'objects', 'pack', 'pack-1.pack'), 'x');
    }
    for (const dir of crashed)
      for (const p of [
        join(dir, 'objects', 'pack', 'pack-1.pack'),
        join(dir, 'objects', 'pack'),
        join(dir, 'objects'),
        join(dir, 'HEAD'),
        dir,
      ])
        utimesSync(p, longAgo, longAgo);

    await git.onModuleInit();

    for (const dir of crashed) expect(existsSync(dir)).toBe(false);
    expect(existsSync(building)).toBe(true);
    expect(await git.exists(projectRepo(31))).toBe(true);
  });
});
