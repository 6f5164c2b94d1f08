import { LodeConfig, collector, mallocTrimAddon } from '@app/platform';
import { spawnSync } from 'node:child_process';
import { tempDirs } from '../../../test/support/git';
import { repositoryPath } from './git-cli';
import { projectRepo } from './git-repositories';
import { LocalGitRepositories } from './local-git-repositories';

const MB = 1024 * 1024;

/**
 * What a compare leaves in the server's memory once it is answered and collected: nothing. nodegit's
 * line-by-line patch API (`patches()`, `hunks()`, `lines()`) kept a copy of every line it handed out
 * for good: 300 compares of 50 changed files left 75-88 MB that no collection gave back.
 */
describe('compare and commit diff memory', () => {
  const tmp = tempDirs();
  let git: LocalGitRepositories;
  const repo = projectRepo(21);
  const limits = { maxFiles: 1000, maxLines: 100_000, maxBytes: 10 * MB };

  /** Resident bytes once everything dropped is collected and glibc's free pages are given back. */
  const settled = () => {
    collector()({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    mallocTrimAddon()?.mallocTrim();
    return process.memoryUsage.rss();
  };

  beforeAll(async () => {
    const config = new LodeConfig();
    config.dataDir = tmp.make();
    git = new LocalGitRepositories(config);
    await git.init(repo, 'main');
    // 400 commits, each changing one of 50 files by 20 lines, and a last one rewriting all 50: `topic`
    // is 300 commits behind `main`, so the compare walks 300 commits and prints 50 files.
    const commands: string[] = [];
    for (let i = 1; i <= 400; i++) {
      const data = `line ${i}\n`.repeat(20);
      const message = `commit ${i}\n`;
      commands.push(`blob\nmark :${2 * i}\ndata ${data.length}\n${data}`);
      commands.push(
        `commit refs/heads/main\nmark :${2 * i + 1}\ncommitter A <a@example.com> ${1_600_000_000 + i} +0000\n` +
          `data ${message.length}\n${message}${i > 1 ? `from :${2 * i - 1}\n` : ''}M 100644 :${2 * i} f${i % 50}.txt\n`,
      );
    }
    // And a last commit that rewrites all 50 files: its own diff has 50 files of 120 changed lines too.
    const rewritten = `rewritten\n`.repeat(100);
    commands.push(
      `commit refs/heads/main\ncommitter A <a@example.com> 1600000401 +0000\ndata 4\nlast\nfrom :801\n` +
        Array.from({ length: 50 }, (_, f) => `M 100644 inline f${f}.txt\ndata ${rewritten.length}\n${rewritten}`).join(
          '\n',
        ) +
        '\n',
    );
    commands.push(`reset refs/heads/topic\nfrom :${2 * 101 + 1}\n`);
    const imported = spawnSync('git', ['fast-import', '--quiet'], {
      cwd: repositoryPath(config.dataDir, repo.projectId),
      input: commands.join('\n'),
    });
    expect(imported.status).toBe(0);
  });
  afterAll(() => tmp.removeAll());

  it('gives back what 300 compares allocated', async () => {
    const once = await git.compare(repo, 'topic', 'main', limits);
    expect(once.commits).toHaveLength(300);
    expect(once.diffs).toHaveLength(50);
    expect(once.diffs[0].diff).toMatch(/^@@ /);
    for (let i = 0; i < 20; i++) await git.compare(repo, 'topic', 'main', limits);
    const before = settled();
    for (let i = 0; i < 300; i++) await git.compare(repo, 'topic', 'main', limits);
    const after = settled();
    expect((after - before) / MB).toBeLessThan(10);
  });

  it('gives back what 300 commit diffs allocated', async () => {
    const sha = (await git.compare(repo, 'topic', 'main', limits)).commits[299].id;
    expect((await git.commitDiff(repo, sha, limits)).diffs).toHaveLength(50);
    for (let i = 0; i < 20; i++) await git.commitDiff(repo, sha, limits);
    const before = settled();
    for (let i = 0; i < 300; i++) expect((await git.commitDiff(repo, sha, limits)).diffs).toHaveLength(50);
    const after = settled();
    expect((after - before) / MB).toBeLessThan(10);
  });
});
