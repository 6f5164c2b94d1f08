import { spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { runCommand } from './command-runner';
import { trackProcess } from './process-gauges';

/** A file of a tree with its size: what GitLab's language statistics weigh. */
export interface SizedFile {
  path: string;
  size: number;
}

/**
 * Every blob of the tree of `sha` with its size (`git ls-tree -r -l -z`, one command from the helper,
 * no object read), at most `limit` of them (the first in git's order), so the work stays bounded
 * whatever the repository holds. Submodules and symbolic links are skipped, as linguist does.
 */
export async function sizedFiles(repo: string, sha: string, limit: number): Promise<SizedFile[]> {
  const { stdout } = await runCommand(
    'git',
    ['ls-tree', '-r', '-l', '-z', '--full-tree', sha],
    repo,
    256 * 1024 * 1024,
  );
  const files: SizedFile[] = [];
  for (const entry of stdout.toString('utf8').split('\0')) {
    // `<mode> SP <type> SP <object> SP+ <size> TAB <path>`
    const tab = entry.indexOf('\t');
    if (tab < 0) continue;
    const [mode, type, , size] = entry.slice(0, tab).split(/ +/);
    if (type !== 'blob' || mode === '120000') continue;
    files.push({ path: entry.slice(tab + 1), size: Number(size) });
    if (files.length >= limit) break;
  }
  return files;
}

/**
 * The bare repository directory as one tar stream (`tar -cf - .` in it), never held in memory: what
 * GitLab's snapshot (Gitaly's GetSnapshot) sends. No lock is taken, so a push meanwhile may leave it
 * "possibly inconsistent", as GitLab documents; temporary and lock files are left out.
 */
export function tarOfDirectory(dir: string): Readable {
  const tar = trackProcess(
    spawn('tar', ['-cf', '-', '--exclude=*.lock', '--exclude=tmp_*', '.'], {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'ignore'],
    }),
  );
  const out = tar.stdout;
  tar.on('error', (err) => out.destroy(err));
  tar.on('close', (code) => {
    if (code !== 0) out.destroy(new Error(`tar of ${dir} exited with ${code}`));
  });
  out.on('close', () => {
    if (tar.exitCode === null) tar.kill();
  });
  return out;
}
