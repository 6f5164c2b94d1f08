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
