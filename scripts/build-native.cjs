// Runs after `npm install` (package.json "postinstall"), on every install, so a clone whose
// node_modules came from a cache still gets it: builds native/malloc-trim, Lode's one native addon
// (glibc's malloc_trim, called by the idle memory trim), with the node-gyp that builds nodegit and the
// same Node headers (npm_config_nodedir). Without it Lode runs as before, keeping glibc's free pages
// resident, and says so at start; so a failed build warns instead of failing the install.
const { spawnSync } = require('node:child_process');
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
const gyp = join(root, 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
const dir = join(root, 'native', 'malloc-trim');
if (!existsSync(gyp)) {
  console.warn('build-native: node-gyp is not installed; native/malloc-trim not built (Lode runs without malloc_trim)');
  process.exit(0);
}
const run = spawnSync(process.execPath, [gyp, 'rebuild', `--directory=${dir}`], {
  stdio: ['ignore', 'pipe', 'pipe'],
  encoding: 'utf8',
});
if (run.status !== 0) {
  process.stderr.write(run.stdout + run.stderr);
  console.warn('build-native: native/malloc-trim did not build (above); Lode runs without malloc_trim');
  process.exit(0);
}
console.log('build-native: built native/malloc-trim');
