import { LodeConfig } from '@app/platform';
import { chmodSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gitOk, tempDirs } from '../../../test/support/git';
import { repositoryPath } from './git-cli';
import { projectRepo, type RefCommand } from './git-repositories';
import { LocalGitRepositories } from './local-git-repositories';
import { NodegitRepositories } from './nodegit-repositories';
import { describeRefUpdates, PAYLOAD_COMMITS } from './ref-updates';

/**
 * A branch moved forward by a plain line of commits is described from libgit2 in process
 * (`commitLine`); everything else by `git log`. Both must say the same of the same push, to the byte:
 * commits of every shape are described both ways and compared.
 */
describe('push descriptions in process and from git', () => {
  const tmp = tempDirs();
  let git: LocalGitRepositories;
  let reads: NodegitRepositories;
  let bare: string;
  let work: string;
  const line: string[] = [];
  const repo = projectRepo(5);
  const update = (before: string, after: string): RefCommand => ({ ref: 'refs/heads/master', before, after });

  async function commit(message: string, env: Record<string, string> = {}, stage = true): Promise<string> {
    if (stage) await gitOk(['add', '-A'], work);
    await gitOk(
      ['commit', '-q', '--allow-empty', '--allow-empty-message', '--cleanup=verbatim', '-m', message],
      work,
      env,
    );
    return (await gitOk(['rev-parse', 'HEAD'], work)).trim();
  }

  beforeAll(async () => {
    const dataDir = tmp.make();
    const config = new LodeConfig();
    config.dataDir = dataDir;
    git = new LocalGitRepositories(config);
    reads = new NodegitRepositories();
    await git.init(repo, 'master');
    bare = repositoryPath(dataDir, 5);
    work = tmp.make();
    await gitOk(['init', '-q', '-b', 'master', work]);
    writeFileSync(join(work, 'a.txt'), 'a\n');
    line.push(await commit('base\n'));
    // Names git sorts in tree order (`a-b` < `a.b` < `a/` < `a0`), spaces, non-ASCII, nested directories.
    mkdirSync(join(work, 'a'), { recursive: true });
    mkdirSync(join(work, 'dir', 'deep'), { recursive: true });
    for (const name of ['a-b', 'a.b', 'a/b', 'a0', 'dir/ä b.txt', 'dir/deep/x.txt'])
      writeFileSync(join(work, name), name);
    line.push(await commit('many files\n\nwith a body\n'));
    writeFileSync(join(work, 'a.b'), 'changed');
    rmSync(join(work, 'a-b'));
    chmodSync(join(work, 'a0'), 0o755);
    line.push(await commit('modify, remove, chmod'));
    // A file that becomes a symlink (git's T), and one that becomes a directory.
    rmSync(join(work, 'a.txt'));
    symlinkSync('a.b', join(work, 'a.txt'));
    rmSync(join(work, 'a0'));
    mkdirSync(join(work, 'a0'));
    writeFileSync(join(work, 'a0', 'inside'), 'x');
    line.push(await commit('typechange  \r\nand a dir  '));
    line.push(await commit(''));
    line.push(await commit('empty commit\n\n\n', { GIT_COMMITTER_DATE: '2024-03-01T10:00:00-0730' }));
    line.push(await commit('zero offset written -0000', { GIT_COMMITTER_DATE: '1700000000 -0000' }));
    // A submodule's gitlink (only in the index: no directory of its own).
    await gitOk(['update-index', '--add', '--cacheinfo', `160000,${line[1]},sub`], work);
    line.push(
      await commit(
        'Ünïcödé, a gitlink',
        { GIT_AUTHOR_NAME: 'Zoë Ünicode', GIT_AUTHOR_EMAIL: 'zoe@example.com' },
        false,
      ),
    );
    await gitOk(['update-index', '--cacheinfo', `160000,${line[2]},sub`], work);
    line.push(await commit('the gitlink moved', {}, false));
    // A message without a final newline (git commit always writes one; commit-tree takes it as given).
    const tree = (await gitOk(['write-tree'], work)).trim();
    writeFileSync(join(work, '..', 'message'), 'no newline');
    const unterminated = (
      await gitOk(['commit-tree', tree, '-p', 'HEAD', '-F', join(work, '..', 'message')], work)
    ).trim();
    await gitOk(['update-ref', 'refs/heads/master', unterminated], work);
    line.push(unterminated);
    for (let i = 0; i < PAYLOAD_COMMITS + 1; i++) {
      writeFileSync(join(work, 'counter'), String(i));
      line.push(await commit(`step ${i}`));
    }
    await gitOk(['push', '-q', bare, 'master'], work);
  });
  afterAll(async () => {
    await git.onModuleDestroy();
    tmp.removeAll();
  });

  it('describes each commit of every shape in process exactly as git log does', async () => {
    for (let i = 1; i < line.length; i++) {
      const fromGit = (await describeRefUpdates(bare, [update(line[i - 1], line[i])], 'master'))[0];
      const inProcess = await reads.commitLine(bare, line[i - 1], line[i], PAYLOAD_COMMITS);
      expect(inProcess).toEqual(fromGit.commits);
      expect(await git.describeRefUpdates(repo, [update(line[i - 1], line[i])], 'master')).toEqual([fromGit]);
    }
  });

  it('describes a line of up to twenty commits in process, and leaves longer ones, merges and rewrites to git', async () => {
    const base = line.length - 1 - PAYLOAD_COMMITS;
    const twenty = update(line[base], line[line.length - 1]);
    expect(await reads.commitLine(bare, twenty.before, twenty.after, PAYLOAD_COMMITS)).toHaveLength(PAYLOAD_COMMITS);
    const longer = update(line[base - 1], line[line.length - 1]);
    expect(await reads.commitLine(bare, longer.before, longer.after, PAYLOAD_COMMITS)).toBeUndefined();
    const rewrite = update(line[5], line[3]);
    expect(await reads.commitLine(bare, rewrite.before, rewrite.after, PAYLOAD_COMMITS)).toBeUndefined();
    // A merge on the way.
    await gitOk(['checkout', '-q', '-b', 'side', line[2]], work);
    writeFileSync(join(work, 'side.txt'), 'side');
    await commit('side');
    await gitOk(['checkout', '-q', 'master'], work);
    await gitOk(['merge', '-q', '--no-edit', 'side'], work);
    const merged = (await gitOk(['rev-parse', 'HEAD'], work)).trim();
    await gitOk(['push', '-q', bare, 'master'], work);
    const merge = update(line[line.length - 1], merged);
    expect(await reads.commitLine(bare, merge.before, merge.after, PAYLOAD_COMMITS)).toBeUndefined();
    // Mixed in one push, in order: each described as git describes it.
    const created: RefCommand = { ref: 'refs/heads/created', before: '0'.repeat(40), after: line[4] };
    const updates = [twenty, merge, longer, created, update(line[1], line[2])];
    const fromGit = await Promise.all(updates.map(async (u) => (await describeRefUpdates(bare, [u], 'master'))[0]));
    expect(await git.describeRefUpdates(repo, updates, 'master')).toEqual(fromGit);
    // A commit written in another encoding: git log answers it in UTF-8, so git describes it.
    writeFileSync(join(work, '..', 'latin1'), Buffer.from('caf\xe9 cr\xe8me\n', 'latin1'));
    await gitOk(
      ['-c', 'i18n.commitEncoding=ISO-8859-1', 'commit', '-q', '--allow-empty', '-F', join(work, '..', 'latin1')],
      work,
    );
    const latin1 = (await gitOk(['rev-parse', 'HEAD'], work)).trim();
    await gitOk(['push', '-q', bare, 'master'], work);
    expect(await reads.commitLine(bare, merged, latin1, PAYLOAD_COMMITS)).toBeUndefined();
    const described = await git.describeRefUpdates(repo, [update(merged, latin1)], 'master');
    expect(described).toEqual(await describeRefUpdates(bare, [update(merged, latin1)], 'master'));
    expect(described[0].commits[0].message).toBe('café crème\n');
  });
});
