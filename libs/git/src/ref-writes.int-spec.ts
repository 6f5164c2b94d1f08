import { LodeConfig } from '@app/platform';
import { gitOk, tempDirs } from '../../../test/support/git';
import { repositoryPath } from './git-cli';
import { projectRepo, type Person } from './git-repositories';
import { LocalGitRepositories } from './local-git-repositories';

const ZERO = '0'.repeat(40);

/** The port's tag objects and cherry-picks, written with libgit2 against a temporary bare repository. */
describe('LocalGitRepositories tag objects and cherry-picks', () => {
  const tmp = tempDirs();
  let git: LocalGitRepositories;
  let path: string;
  const repo = projectRepo(41);
  const ann: Person = { name: 'Ann Author', email: 'ann@example.com', when: new Date('2020-01-02T03:04:05Z') };
  const cy: Person = { name: 'Cy Caller', email: 'cy@example.com', when: new Date('2021-06-07T08:09:10Z') };
  let base: string;
  let change: string;
  let other: string;

  const commit = (parent: string | null, path: string, content: string, author = ann) =>
    git.writeCommit(repo, {
      parent,
      actions: [{ action: parent ? 'update' : 'create', filePath: path, content: Buffer.from(content) }],
      message: `write ${path}`,
      author,
      committer: author,
    });

  beforeAll(async () => {
    const config = new LodeConfig();
    config.dataDir = tmp.make();
    git = new LocalGitRepositories(config);
    await git.init(repo, 'main');
    path = repositoryPath(config.dataDir, 41);
    base = await git.writeCommit(repo, {
      parent: null,
      actions: [
        { action: 'create', filePath: 'a.txt', content: Buffer.from('one\ntwo\nthree\n') },
        { action: 'create', filePath: 'b.txt', content: Buffer.from('b\n') },
      ],
      message: 'base',
      author: ann,
      committer: ann,
    });
    change = await commit(base, 'b.txt', 'b changed\n');
    other = await commit(base, 'a.txt', 'one\nTWO\nthree\n');
    expect(await git.moveRef(repo, 'refs/heads/main', ZERO, other)).toBe(true);
  });

  afterAll(() => {
    git.onModuleDestroy();
    tmp.removeAll();
  });

  it('writes an annotated tag object with its tagger and message, which a moved ref makes a tag', async () => {
    const sha = await git.writeTagObject(repo, { name: 'v1.0', target: base, message: 'Release 1.0', tagger: cy });
    expect(await gitOk(['cat-file', '-p', sha], path)).toBe(
      `object ${base}\ntype commit\ntag v1.0\ntagger Cy Caller <cy@example.com> 1623053350 +0000\n\nRelease 1.0`,
    );
    expect(await git.tag(repo, 'v1.0')).toBeUndefined();
    expect(await git.moveRef(repo, 'refs/tags/v1.0', ZERO, sha)).toBe(true);
    expect(await git.tag(repo, 'v1.0')).toMatchObject({ target: sha, message: 'Release 1.0', commit: { id: base } });
  });

  it('reverts a commit on a tip by the caller, refuses an empty or conflicting revert, and finds merge bases', async () => {
    // `change` edited b.txt on `base`; undone on `other` (which kept b.txt as `base` had it) it is empty.
    expect(await git.writeRevert(repo, { commit: change, onto: other, message: 'Revert', person: cy })).toEqual({
      refused: 'empty',
    });
    const onChange = await commit(change, 'a.txt', 'one\ntwo\nthree\nfour\n');
    const reverted = await git.writeRevert(repo, { commit: change, onto: onChange, message: 'Revert "x"', person: cy });
    if (!('sha' in reverted)) throw new Error('refused');
    expect(await gitOk(['show', '-s', '--format=%an|%cn|%P|%B', reverted.sha], path)).toBe(
      `Cy Caller|Cy Caller|${onChange}|Revert "x"\n`,
    );
    expect(await gitOk(['show', `${reverted.sha}:b.txt`], path)).toBe('b\n');
    const clash = await commit(change, 'b.txt', 'b changed again\n');
    expect(await git.writeRevert(repo, { commit: change, onto: clash, message: 'm', person: cy })).toEqual({
      refused: 'conflict',
    });
    expect(await git.mergeBase(repo, [onChange, other])).toBe(base);
    expect(await git.mergeBase(repo, [onChange, clash, other])).toBe(change);
    const orphan = await git.writeCommit(repo, {
      parent: null,
      actions: [{ action: 'create', filePath: 'z', content: Buffer.from('z') }],
      message: 'orphan',
      author: ann,
      committer: ann,
    });
    expect(await git.mergeBase(repo, [orphan, other])).toBeUndefined();
  });

  it('cherry-picks a commit onto another: the original author, the caller as committer, one parent', async () => {
    const sha = (await git.writeCherryPick(repo, {
      commit: change,
      onto: other,
      message: 'write b.txt\n\n(cherry picked from commit x)',
      committer: cy,
    }))!;
    expect(sha).toMatch(/^[0-9a-f]{40}$/);
    const picked = (await git.resolveCommit(repo, sha))!;
    expect(picked).toMatchObject({
      parentIds: [other],
      authorName: 'Ann Author',
      authorEmail: 'ann@example.com',
      authoredDate: '2020-01-02T03:04:05+00:00',
      committerName: 'Cy Caller',
      committerEmail: 'cy@example.com',
      message: 'write b.txt\n\n(cherry picked from commit x)',
    });
    expect((await git.readFile(repo, sha, 'b.txt'))!.content.toString()).toBe('b changed\n');
    expect((await git.readFile(repo, sha, 'a.txt'))!.content.toString()).toBe('one\nTWO\nthree\n');
    // No ref moved.
    expect((await git.refs(repo)).get('refs/heads/main')).toBe(other);
  });

  it("cherry-picks a merge commit against its first parent (GitLab's mainline 1)", async () => {
    const merge = await gitOk(['commit-tree', `${change}^{tree}`, '-p', base, '-p', change, '-m', 'Merge'], path);
    const sha = (await git.writeCherryPick(repo, { commit: merge, onto: other, message: 'Merge', committer: cy }))!;
    expect((await git.resolveCommit(repo, sha))!.parentIds).toEqual([other]);
    expect((await git.readFile(repo, sha, 'b.txt'))!.content.toString()).toBe('b changed\n');
    expect((await git.readFile(repo, sha, 'a.txt'))!.content.toString()).toBe('one\nTWO\nthree\n');
  });

  it('refuses a cherry-pick that conflicts or changes nothing', async () => {
    const clash = await commit(base, 'a.txt', 'one\n2\nthree\n');
    expect(await git.writeCherryPick(repo, { commit: clash, onto: other, message: 'm', committer: cy })).toBe(
      undefined,
    );
    // `other` itself, onto a branch that already has its change.
    expect(await git.writeCherryPick(repo, { commit: other, onto: other, message: 'm', committer: cy })).toBe(
      undefined,
    );
  });
});
