#!/usr/bin/env node
// `npm start` on a fresh clone: compile when dist/ is missing or older than any source file.
const { execFileSync } = require('node:child_process');
const { existsSync, readdirSync, statSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
const stamp = join(root, 'dist', '.build-stamp');

function newest(dir) {
  let t = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) t = Math.max(t, newest(p));
    else if (entry.name.endsWith('.ts')) t = Math.max(t, statSync(p).mtimeMs);
  }
  return t;
}

const sources = Math.max(
  newest(join(root, 'apps')),
  newest(join(root, 'libs')),
  ...['tsconfig.json', 'tsconfig.build.json', 'package.json', 'nest-cli.json'].map(
    (f) => statSync(join(root, f)).mtimeMs,
  ),
);
if (existsSync(stamp) && statSync(stamp).mtimeMs >= sources) process.exit(0);
process.stderr.write('building Lode (dist/ is missing or out of date)...\n');
execFileSync(process.execPath, [join(root, 'node_modules', '@nestjs', 'cli', 'bin', 'nest.js'), 'build', 'lode'], {
  cwd: root,
  stdio: 'inherit',
});
writeFileSync(stamp, new Date().toISOString() + '\n');
