import { createRequire } from 'node:module';
import { join } from 'node:path';

declare const __filename: string | undefined;

/**
 * A package loaded by its first use instead of when the module naming it loads: for the large ones a
 * process may never need (nodegit, highlight.js; issue 23's memory target). The built code is
 * CommonJS; Jest runs the sources as ES modules, where there is no `__filename` and packages resolve
 * from the working directory (the project's root).
 */
export function loadPackage<T>(id: string): T {
  return createRequire(typeof __filename === 'string' ? __filename : join(process.cwd(), 'index.js'))(id) as T;
}
