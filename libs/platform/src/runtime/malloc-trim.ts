import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { loadPackage } from '../load-when-needed';

declare const __dirname: string | undefined;

/** Lode's one native addon (native/malloc-trim), as `npm install`'s postinstall builds it. */
export interface MallocTrimAddon {
  /** glibc's `malloc_trim(0)`: true when it gave memory back. */
  mallocTrim(): boolean;
  /** Whether the process runs on glibc; elsewhere `mallocTrim` does nothing. */
  readonly available: boolean;
}

/** Where node-gyp leaves the addon, from the project's root. */
const ADDON = join('native', 'malloc-trim', 'build', 'Release', 'malloc_trim.node');

let loaded: MallocTrimAddon | null | undefined;
/** Why the addon did not load, when it was there and did not (built for another Node or machine). */
let loadFailure: unknown;

/**
 * The addon, or undefined when it was not built (a failed or skipped postinstall: the process then
 * keeps glibc's free pages, as it did before the addon). Found by walking up from this file (the
 * sources in Jest, dist/ in a build, /app in the image) to the directory that holds it.
 */
export function mallocTrimAddon(): MallocTrimAddon | undefined {
  if (loaded !== undefined) return loaded ?? undefined;
  loaded = null;
  let dir = typeof __dirname === 'string' ? __dirname : process.cwd();
  for (;;) {
    const path = join(dir, ADDON);
    if (existsSync(path)) {
      try {
        loaded = loadPackage<MallocTrimAddon>(path);
      } catch (err) {
        loadFailure = err;
      }
      break;
    }
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return loaded ?? undefined;
}

/** Why `mallocTrimAddon()` found none: for the warning at start. */
export function mallocTrimMissing(): string {
  return loadFailure === undefined
    ? `${ADDON} is not built (npm install builds it)`
    : `${ADDON} did not load: ${String(loadFailure)}`;
}
