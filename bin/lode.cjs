#!/usr/bin/env node
// `npx lode <command>` (and `npm run lode -- <command>`): compiles Lode first when dist/ is missing or
// older than the sources (scripts/build-if-needed.cjs, which reports on stderr), then runs the
// compiled command line in this process, so its exit code and output are the command's own.
const { execFileSync } = require('node:child_process');
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
const cli = join(root, 'dist', 'apps', 'lode', 'src', 'cli.js');
// In an image built without the sources (the Dockerfile's), dist/ is all there is: run it as it is.
if (existsSync(join(root, 'apps'))) {
  try {
    execFileSync(process.execPath, [join(root, 'scripts', 'build-if-needed.cjs')], { stdio: ['ignore', 2, 2] });
  } catch {
    process.stderr.write('lode: could not build Lode (see above)\n');
    process.exit(1);
  }
}
require(cli);
