import { execFile } from 'node:child_process';

/**
 * Debian's python3 with its python3-gitlab (3.12), the client people point at a GitLab: `/usr/bin/python3`
 * by name, since a python3 earlier on PATH (pyenv) may lack the module. `.ci/run` installs the package.
 */
export const PYTHON = '/usr/bin/python3';

/** Runs a python-gitlab script with `args` as `sys.argv[1:]` and answers what it printed; rejects with its stderr. */
export function runPython(script: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(PYTHON, ['-c', script, ...args], { timeout: 60_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout),
    ),
  );
}
