import { execFileSync } from 'node:child_process';
import { validRefName } from './ref-names';

/** What `git check-ref-format --branch` (the command GitLab's GitRefValidator runs) answers. */
const gitSays = (name: string) => {
  try {
    execFileSync('git', ['check-ref-format', '--branch', name], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

describe('validRefName', () => {
  const names = [
    'master',
    'feature/x',
    'release-1.0',
    'v1.2.3',
    'a@b',
    'ünïcode',
    '',
    '-dash',
    'a..b',
    'a b',
    'a~1',
    'a^',
    'a:b',
    'a?',
    'a*',
    'a[b',
    'a\\b',
    'a\tb',
    'a@{1}',
    'trailing.',
    'trailing/',
    '/leading',
    'double//slash',
    '.hidden',
    'dir/.hidden',
    'x.lock',
    'dir/x.lock/y',
    'a\x7fb',
  ];

  it.each(names)('agrees with git check-ref-format --branch on %j', (name) => {
    expect(validRefName(name)).toBe(gitSays(name));
  });

  it('refuses what GitLab refuses beyond git: names that read as full refs', () => {
    expect(validRefName('refs/heads/x')).toBe(false);
    expect(validRefName('refs/remotes/origin/x')).toBe(false);
    expect(validRefName('refs/tags/x')).toBe(true);
    // git's --branch reads a lone `@` as HEAD's branch; as a ref name it is refused.
    expect(validRefName('@')).toBe(false);
  });

  it('refuses a part git cannot write as a loose ref: its lock file would pass 255 bytes', () => {
    expect(validRefName('a'.repeat(250))).toBe(true);
    expect(validRefName('a'.repeat(251))).toBe(false);
    expect(validRefName(`feature/${'b'.repeat(251)}`)).toBe(false);
    expect(validRefName(`${'c'.repeat(200)}/${'d'.repeat(200)}`)).toBe(true);
    // Bytes, not characters: 126 two-byte letters are 252 bytes.
    expect(validRefName('é'.repeat(126))).toBe(false);
  });
});
