import { Controller, Get } from '@nestjs/common';
import { execFileSync } from 'node:child_process';
import { Authenticated } from './current-actor.decorator';

/** The GitLab release whose API v4 surface Lode follows; clients compare it to pick features. */
export const GITLAB_API_VERSION = '10.8.0';

let revision: string | undefined;
function currentRevision(): string {
  if (revision === undefined) {
    try {
      revision =
        process.env.LODE_REVISION ||
        execFileSync('git', ['rev-parse', '--short', 'HEAD'], { stdio: ['ignore', 'pipe', 'ignore'] })
          .toString()
          .trim();
    } catch {
      revision = 'unknown';
    }
  }
  return revision;
}

@Controller('version')
export class VersionController {
  /** GitLab answers this to signed-in callers only. */
  @Get()
  @Authenticated()
  version() {
    return { version: GITLAB_API_VERSION, revision: currentRevision() };
  }
}
