import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The stock git client, isolated from the machine's configuration and never prompting. */
export const GIT_ENV = {
  ...process.env,
  GIT_TERMINAL_PROMPT: '0',
  GIT_ASKPASS: '',
  SSH_ASKPASS: '',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'Tester',
  GIT_AUTHOR_EMAIL: 'tester@example.com',
  GIT_COMMITTER_NAME: 'Tester',
  GIT_COMMITTER_EMAIL: 'tester@example.com',
};

/**
 * Runs git; returns its status and output rather than throwing, so refusals can be asserted.
 * Asynchronous on purpose: the server runs in this process, and a synchronous spawn would block it.
 */
export function git(
  args: string[],
  cwd?: string,
  env: Record<string, string> = {},
): Promise<{ status: number; out: string }> {
  return new Promise((resolve) => {
    execFile(
      'git',
      ['-c', 'credential.helper=', '-c', 'init.defaultBranch=master', ...args],
      { cwd, env: { ...GIT_ENV, ...env }, encoding: 'utf8', timeout: 60_000, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) =>
        resolve({ status: err ? (typeof err.code === 'number' ? err.code : -1) : 0, out: `${stdout}${stderr}` }),
    );
  });
}

export async function gitOk(args: string[], cwd?: string, env: Record<string, string> = {}): Promise<string> {
  const r = await git(args, cwd, env);
  if (r.status !== 0) throw new Error(`git ${args.join(' ')} failed: ${r.out}`);
  return r.out;
}

/** Temporary directories removed together at the end of a suite. */
export function tempDirs(): { make: () => string; removeAll: () => void } {
  const dirs: string[] = [];
  return {
    make: () => {
      const d = mkdtempSync(join(tmpdir(), 'lode-git-'));
      dirs.push(d);
      return d;
    },
    removeAll: () => {
      for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
    },
  };
}

/** What a repository's commit-graph holds, read from its files as the server reads it. */
export { commitGraphCommits, commitGraphFiles } from '../../libs/git/src/git-cli';
