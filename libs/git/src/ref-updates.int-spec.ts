import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gitOk, tempDirs } from '../../../test/support/git';
import type { RefCommand } from './git-repositories';
import { describeRefUpdates } from './ref-updates';

/**
 * A chain of updates on one branch (the repository API's batched commits: one update per commit,
 * each from the one before) is read with one `git log` of the whole range: it must describe each
 * update exactly as describing it alone does, and fall back to that where an update is no single commit.
 */
describe('describeRefUpdates of a chain', () => {
  const tmp = tempDirs();
  let bare: string;
  let work: string;
  const shas: string[] = [];

  async function commit(file: string, content: string, message: string): Promise<string> {
    writeFileSync(join(work, file), content);
    await gitOk(['add', '-A'], work);
    await gitOk(['commit', '-q', '-m', message], work);
    return (await gitOk(['rev-parse', 'HEAD'], work)).trim();
  }

  beforeAll(async () => {
    work = tmp.make();
    bare = join(tmp.make(), 'r.git');
    await gitOk(['init', '-q', '-b', 'master', work]);
    await gitOk(['init', '-q', '--bare', bare]);
    shas.push(await commit('a.txt', 'a\n', 'base'));
    shas.push(await commit('b.txt', 'b\n', 'add b'));
    shas.push(await commit('a.txt', 'a2\n', 'change a\n\nwith a body'));
    await gitOk(['rm', '-q', 'b.txt'], work);
    shas.push(await commit('c.txt', 'c\n', 'drop b, add c'));
    shas.push(await commit('d.txt', 'd\n', 'add d'));
    await gitOk(['push', '-q', bare, 'master'], work);
  });
  afterAll(() => tmp.removeAll());

  const update = (before: string, after: string): RefCommand => ({ ref: 'refs/heads/master', before, after });
  const alone = async (updates: RefCommand[]) =>
    (await Promise.all(updates.map((u) => describeRefUpdates(bare, [u], 'master')))).flat();

  it('describes a chain of single commits as each update alone', async () => {
    const chain = [1, 2, 3, 4].map((i) => update(shas[i - 1], shas[i]));
    const described = await describeRefUpdates(bare, chain, 'master');
    expect(described).toEqual(await alone(chain));
    expect(described.map((u) => [u.totalCommitsCount, u.commits.map((c) => c.id)])).toEqual(
      [1, 2, 3, 4].map((i) => [1, [shas[i]]]),
    );
    expect(described[2].commits[0]).toMatchObject({ added: ['c.txt'], removed: ['b.txt'], modified: [] });
    expect(described[1].commits[0].message).toBe('change a\n\nwith a body\n');
  });

  it('falls back to each update alone where an update brings more than one commit', async () => {
    const chain = [update(shas[0], shas[2]), update(shas[2], shas[3]), update(shas[3], shas[4])];
    const described = await describeRefUpdates(bare, chain, 'master');
    expect(described).toEqual(await alone(chain));
    expect(described[0].totalCommitsCount).toBe(2);
  });
});

/**
 * A branch update's total is the number of commits `git log` showed while it shows fewer than the
 * payload's 20; from 20 on it is counted by `git rev-list` (the payload still shows the last 20).
 */
describe('describeRefUpdates counting the commits of one update', () => {
  const tmp = tempDirs();
  let bare: string;
  const tips: string[] = [];

  beforeAll(async () => {
    const work = tmp.make();
    bare = join(tmp.make(), 'r.git');
    await gitOk(['init', '-q', '-b', 'master', work]);
    await gitOk(['init', '-q', '--bare', bare]);
    for (let i = 0; i <= 21; i++) {
      await gitOk(['commit', '-q', '--allow-empty', '-m', `commit ${i}`], work);
      tips.push((await gitOk(['rev-parse', 'HEAD'], work)).trim());
    }
    await gitOk(['push', '-q', bare, 'master'], work);
  });
  afterAll(() => tmp.removeAll());

  it.each([1, 19, 20, 21])('counts %i commits, showing at most the last 20', async (n) => {
    const [described] = await describeRefUpdates(
      bare,
      [{ ref: 'refs/heads/master', before: tips[0], after: tips[n] }],
      'master',
    );
    expect(described.totalCommitsCount).toBe(n);
    expect(described.commits.map((c) => c.id)).toEqual(tips.slice(Math.max(1, n - 19), n + 1));
  });

  it('keeps a commit whose message holds the record separator whole, and counts it once', async () => {
    const work = tmp.make();
    await gitOk(['clone', '-q', bare, work]);
    await gitOk(['commit', '-q', '--allow-empty', '-m', 'odd \x01 byte'], work);
    await gitOk(['commit', '-q', '--allow-empty', '-m', 'plain'], work);
    const head = (await gitOk(['rev-parse', 'HEAD'], work)).trim();
    await gitOk(['push', '-q', 'origin', 'HEAD:refs/heads/odd'], work);
    const [described] = await describeRefUpdates(
      bare,
      [{ ref: 'refs/heads/odd', before: tips[21], after: head }],
      'master',
    );
    expect(described.totalCommitsCount).toBe(2);
    expect(described.commits.map((c) => c.message)).toEqual(['odd \x01 byte\n', 'plain\n']);
  });

  it('counts a new branch against the base, and the first branch from its root', async () => {
    const [first] = await describeRefUpdates(
      bare,
      [{ ref: 'refs/heads/master', before: '0'.repeat(40), after: tips[21] }],
      null,
    );
    expect(first.totalCommitsCount).toBe(22);
    expect(first.commits).toHaveLength(20);
    const [topic] = await describeRefUpdates(
      bare,
      [{ ref: 'refs/heads/topic', before: '0'.repeat(40), after: tips[21] }],
      'master',
    );
    expect(topic).toMatchObject({ totalCommitsCount: 0, commits: [] });
  });
});
