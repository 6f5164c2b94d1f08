import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gitOk } from './git';

/** The commits, tag objects and work tree of the sample history. */
export interface SampleHistory {
  work: string;
  /** c1 (Ann, January), c2 (Bob, February), c3 (Ann, March) on master; cf (Ann, mid-February) on feature/x from c1. */
  sha: { c1: string; c2: string; c3: string; cf: string };
  /** The tag object of the annotated tag v1.2. */
  annotatedTag: string;
}

/**
 * A small history with fixed dates, for the repository API's suites:
 *
 * - master: c1 (README.md, src/a.txt) <- c2 (changes a line of src/a.txt, adds docs/naïve.md) <- c3 (NEW.md)
 * - feature/x: c1 <- cf (feature.txt); old: c1; level: c3 (level with master)
 * - tags: v1.0 (lightweight, c1), v1.2 (annotated "Release 1.2", c2), v1.10 (lightweight, c3)
 */
export async function buildSampleHistory(work: string): Promise<SampleHistory> {
  const commit = async (message: string, month: string, who: 'Ann' | 'Bob') => {
    const date = `2020-${month}T10:00:00+02:00`;
    await gitOk(['add', '-A'], work);
    await gitOk(['commit', '-q', '-m', message], work, {
      GIT_AUTHOR_NAME: who,
      GIT_AUTHOR_EMAIL: `${who.toLowerCase()}@example.com`,
      GIT_AUTHOR_DATE: date,
      GIT_COMMITTER_DATE: date,
    });
    return (await gitOk(['rev-parse', 'HEAD'], work)).trim();
  };
  await gitOk(['init', '-q', '-b', 'master', work]);
  mkdirSync(join(work, 'src'));
  mkdirSync(join(work, 'docs'));
  writeFileSync(join(work, 'README.md'), '# Sample\n');
  writeFileSync(join(work, 'src/a.txt'), 'a1\na2\na3\n');
  const c1 = await commit('first', '01-01', 'Ann');
  writeFileSync(join(work, 'src/a.txt'), 'a1\nB2\na3\n');
  writeFileSync(join(work, 'docs/naïve.md'), 'naïve\n');
  const c2 = await commit('second\n\nwith a body', '02-01', 'Bob');
  writeFileSync(join(work, 'NEW.md'), 'new\n');
  const c3 = await commit('third', '03-01', 'Ann');
  await gitOk(['checkout', '-q', '-b', 'feature/x', c1], work);
  writeFileSync(join(work, 'feature.txt'), 'f\n');
  const cf = await commit('feature', '02-15', 'Ann');
  await gitOk(['checkout', '-q', 'master'], work);
  await gitOk(['branch', 'old', c1], work);
  await gitOk(['branch', 'level', c3], work);
  await gitOk(['tag', 'v1.0', c1], work);
  await gitOk(['tag', '-a', 'v1.2', '-m', 'Release 1.2', c2], work);
  await gitOk(['tag', 'v1.10', c3], work);
  const annotatedTag = (await gitOk(['rev-parse', 'v1.2'], work)).trim();
  return { work, sha: { c1, c2, c3, cf }, annotatedTag };
}

/** Pushes every branch and tag of the sample history into a bare repository. */
export async function pushSampleHistory(history: SampleHistory, bare: string): Promise<void> {
  await gitOk(['push', '-q', bare, 'refs/heads/*:refs/heads/*', 'refs/tags/*:refs/tags/*'], history.work);
}
