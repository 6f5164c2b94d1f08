import { Controller, Get } from '@nestjs/common';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { LodeConfig } from '../config/lode-config';
import { Authenticated } from './current-actor.decorator';

/**
 * The commit Lode was built from: `LODE_REVISION` when set (the Dockerfile does not set it, and the
 * image has no `.git`: set it in the container's environment), else read from the checkout's `.git`
 * by hand, so that only libs/git starts processes; `unknown` outside a checkout.
 */
export function buildRevision(env: NodeJS.ProcessEnv = process.env, root = process.cwd()): string {
  if (env.LODE_REVISION) return env.LODE_REVISION;
  try {
    let gitDir = join(root, '.git');
    // A worktree's `.git` is a file naming its git directory, which names the shared one (refs).
    if (statSync(gitDir).isFile())
      gitDir = resolve(
        root,
        readFileSync(gitDir, 'utf8')
          .replace(/^gitdir: /, '')
          .trim(),
      );
    const commonDir = existsSync(join(gitDir, 'commondir'))
      ? resolve(gitDir, readFileSync(join(gitDir, 'commondir'), 'utf8').trim())
      : gitDir;
    const head = readFileSync(join(gitDir, 'HEAD'), 'utf8').trim();
    const ref = /^ref: (.+)$/.exec(head)?.[1];
    let sha: string | undefined = ref ? undefined : head;
    if (ref && existsSync(join(commonDir, ref))) sha = readFileSync(join(commonDir, ref), 'utf8').trim();
    else if (ref) {
      // A ref that `git gc` packed lives only in packed-refs: `<sha> <ref>` lines.
      const packed = readFileSync(join(commonDir, 'packed-refs'), 'utf8');
      sha = packed
        .split('\n')
        .find((line) => line.endsWith(` ${ref}`))
        ?.split(' ')[0];
    }
    return sha && /^[0-9a-f]{40,64}$/.test(sha) ? sha.slice(0, 7) : 'unknown';
  } catch {
    return 'unknown';
  }
}

let revision: string | undefined;

@Controller('version')
export class VersionController {
  constructor(private readonly config: LodeConfig) {}

  /** GitLab answers this to signed-in callers only. */
  @Get()
  @Authenticated()
  version() {
    revision ??= buildRevision();
    return { version: this.config.gitlabVersion, revision };
  }
}
