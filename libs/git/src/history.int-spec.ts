import { LodeConfig } from '@app/platform';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gitOk, tempDirs } from '../../../test/support/git';
import { repositoryPath } from './git-cli';
import { projectRepo } from './git-repositories';
import { LocalGitRepositories } from './local-git-repositories';

/** The history reads of the port (log pages, stats, blame, tags, files) on a temporary bare repository. */
describe('LocalGitRepositories history reads', () => {
  const tmp = tempDirs();
  let git: LocalGitRepositories;
  let work: string;
  const repo = projectRepo(11);
  const sha: Record<string, string> = {};
  const page = { all: false, offset: 0, limit: 100, withStats: false };

  // A minute apart, so the newest-first order does not rest on commits made in one second.
  let minute = 0;
  const at = () => {
    const date = `2021-01-01T00:${String(minute++).padStart(2, '0')}:00Z`;
    return { GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date };
  };
  const commit = async (name: string, message = name) => {
    await gitOk(['add', '-A'], work);
    await gitOk(['commit', '-q', '-m', message], work, at());
    sha[name] = (await gitOk(['rev-parse', 'HEAD'], work)).trim();
  };

  beforeAll(async () => {
    const dataDir = tmp.make();
    const config = new LodeConfig();
    config.dataDir = dataDir;
    git = new LocalGitRepositories(config);
    await git.init(repo, 'main');
    work = tmp.make();
    await gitOk(['init', '-q', '-b', 'main', work]);
    // Lines that start with a tab, or look like blame's own header lines, are content all the same.
    writeFileSync(join(work, 'odd.txt'), `\tindented\n${'a'.repeat(40)} 1 1 1\nplain\n`);
    await commit('base');
    await gitOk(['checkout', '-q', '-b', 'side'], work);
    writeFileSync(join(work, 'side.txt'), 'one\ntwo\n');
    await commit('side');
    await gitOk(['checkout', '-q', 'main'], work);
    writeFileSync(join(work, 'odd.txt'), `\tindented\n${'a'.repeat(40)} 1 1 1\nchanged\n`);
    await commit('main');
    await gitOk(['merge', '-q', '--no-ff', '-m', 'merge side', 'side'], work, at());
    sha.merge = (await gitOk(['rev-parse', 'HEAD'], work)).trim();
    await gitOk(['tag', '-a', 'multi', '-m', 'line one\n\nline three\n', sha.base], work);
    const tree = (await gitOk(['rev-parse', 'HEAD^{tree}'], work)).trim();
    await gitOk(['tag', 'a-tree', tree], work);
    await gitOk(['push', '-q', repositoryPath(dataDir, 11), 'main', 'side', '--tags'], work);
  });

  afterAll(() => {
    git.onModuleDestroy();
    tmp.removeAll();
  });

  it("pages a history with a merge, newest first, a merge's stats against its first parent", async () => {
    const all = await git.commitLog(repo, { ...page, ref: 'main', withStats: true });
    expect(all.total).toBe(4);
    expect(all.commits.map((c) => c.id)).toEqual([sha.merge, sha.main, sha.side, sha.base]);
    expect(all.commits[0].stats).toEqual({ additions: 2, deletions: 0, total: 2 });
    expect(all.commits[1].stats).toEqual({ additions: 1, deletions: 1, total: 2 });
    expect(await git.commitStats(repo, sha.merge)).toEqual({ additions: 2, deletions: 0, total: 2 });
    const second = await git.commitLog(repo, { ...page, ref: 'main', offset: 1, limit: 2 });
    expect(second.commits.map((c) => c.id)).toEqual([sha.main, sha.side]);
    expect(second.commits[0]).not.toHaveProperty('stats');
    expect((await git.commitLog(repo, { ...page, ref: 'nope' })).total).toBe(0);
    // Dates git's ISO parser misreads (2100 on) and before 1970 still filter as they say.
    const far = new Date('2100-01-01T00:00:00Z');
    const early = new Date('1960-01-01T00:00:00Z');
    expect((await git.commitLog(repo, { ...page, ref: 'main', until: far })).total).toBe(4);
    expect((await git.commitLog(repo, { ...page, ref: 'main', since: far })).total).toBe(0);
    expect((await git.commitLog(repo, { ...page, ref: 'main', since: early })).total).toBe(4);
    expect((await git.commitLog(repo, { ...page, ref: 'main', until: early })).total).toBe(0);
    // git's default history simplification, as GitLab's `git log`: the merge is TREESAME to `side` for side.txt.
    expect(await git.commitLog(repo, { ...page, ref: 'main', path: 'side.txt' })).toMatchObject({
      total: 1,
      commits: [{ id: sha.side }],
    });
  });

  it('blames lines that start with a tab or look like a header as content', async () => {
    const ranges = await git.blame(repo, sha.merge, 'odd.txt');
    expect(ranges.map((r) => [r.commit.id, r.lines])).toEqual([
      [sha.base, ['\tindented', `${'a'.repeat(40)} 1 1 1`]],
      [sha.main, ['changed']],
    ]);
  });

  it("reads an annotated tag's whole message less its last newline, and lists no tag of a tree", async () => {
    const tags = await git.tags(repo);
    expect(tags.map((t) => t.name)).toEqual(['multi']);
    expect(tags[0]).toMatchObject({ message: 'line one\n\nline three', commit: { id: sha.base } });
    expect(tags[0].target).not.toBe(sha.base);
    expect(await git.tag(repo, 'a-tree')).toBeUndefined();
    expect(await git.tag(repo, 'mult*')).toBeUndefined();
    expect((await git.tag(repo, 'multi'))?.name).toBe('multi');
  });

  it('finds blobs by path, not directories, and the last commit that changed them', async () => {
    expect(await git.fileEntry(repo, sha.merge, '/side.txt')).toMatchObject({ path: 'side.txt', name: 'side.txt' });
    expect(await git.fileEntry(repo, sha.merge, '')).toBeUndefined();
    const read = await git.readFile(repo, sha.merge, 'side.txt');
    expect(read?.content.toString()).toBe('one\ntwo\n');
    expect(read?.blobId).toBe((await git.fileEntry(repo, sha.merge, 'side.txt'))?.blobId);
    expect(await git.readFile(repo, sha.merge, 'nope')).toBeUndefined();
    expect(await git.fileEntry(repo, sha.base, 'side.txt')).toBeUndefined();
    expect(await git.lastCommitFor(repo, sha.merge, 'side.txt')).toBe(sha.side);
    expect(await git.lastCommitFor(repo, sha.merge, 'odd.txt')).toBe(sha.main);
    expect(await git.refsContaining(repo, sha.side)).toEqual([
      { type: 'branch', name: 'main' },
      { type: 'branch', name: 'side' },
    ]);
  });
});
