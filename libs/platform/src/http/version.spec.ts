import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildRevision } from './version.controller';

/** buildRevision reads `.git` by hand; `git rev-parse` is the judge of what it should find. */
describe('buildRevision', () => {
  let dir: string;
  const git = (cwd: string, ...args: string[]): string =>
    execFileSync('git', args, {
      cwd,
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 't',
        GIT_AUTHOR_EMAIL: 't@x',
        GIT_COMMITTER_NAME: 't',
        GIT_COMMITTER_EMAIL: 't@x',
      },
    })
      .toString()
      .trim();
  const short = (cwd: string): string => git(cwd, 'rev-parse', '--short=7', 'HEAD');

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'lode-revision-'));
    git(dir, 'init', '-q', '-b', 'main');
    git(dir, 'commit', '-q', '--allow-empty', '-m', 'one');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('prefers LODE_REVISION', () => {
    expect(buildRevision({ LODE_REVISION: 'abc1234' }, dir)).toBe('abc1234');
  });

  it('reads a loose branch ref', () => {
    expect(buildRevision({}, dir)).toBe(short(dir));
  });

  it('reads a packed branch ref', () => {
    git(dir, 'pack-refs', '--all');
    expect(buildRevision({}, dir)).toBe(short(dir));
  });

  it('reads a detached HEAD', () => {
    git(dir, 'checkout', '-q', '--detach');
    expect(buildRevision({}, dir)).toBe(short(dir));
  });

  it('reads a worktree, whose refs live in the shared git directory', () => {
    git(dir, 'worktree', 'add', '-q', '-b', 'side', join(dir, 'wt'));
    git(join(dir, 'wt'), 'commit', '-q', '--allow-empty', '-m', 'two');
    expect(buildRevision({}, join(dir, 'wt'))).toBe(short(join(dir, 'wt')));
    expect(buildRevision({}, join(dir, 'wt'))).not.toBe(short(dir));
  });

  it('answers unknown outside a checkout', () => {
    expect(buildRevision({}, tmpdir())).toBe('unknown');
  });
});
