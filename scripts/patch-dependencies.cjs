// Runs after `npm install` (package.json "postinstall"): small fixes to dependencies whose releases
// lack them, each an exact text replacement that is skipped once the installed version has the fix.
// A replacement whose text is in neither form stops the install: the dependency changed and the
// patch must be looked at again.
const { readFileSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

const PATCHES = [
  {
    // ssh2 1.17.0 advertises `server-sig-algs` with a comma missing ("...nistp521rsa-sha2-512,..."),
    // so OpenSSH clients see neither ecdsa-sha2-nistp521 nor rsa-sha2-512 and refuse an RSA key
    // restricted to rsa-sha2-512 ("no mutual signature algorithm"). Upstream: mscdex/ssh2 PR 1485.
    file: 'node_modules/ssh2/lib/protocol/Protocol.js',
    broken: "'ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,ecdsa-sha2-nistp521'\n      + 'rsa-sha2-512,",
    fixed: "'ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,ecdsa-sha2-nistp521,'\n      + 'rsa-sha2-512,",
  },
];

for (const patch of PATCHES) {
  const path = join(__dirname, '..', patch.file);
  const text = readFileSync(path, 'utf8');
  if (text.includes(patch.fixed)) continue;
  if (!text.includes(patch.broken)) {
    console.error(`patch-dependencies: ${patch.file} has neither the known bug nor its fix; look at the patch again`);
    process.exit(1);
  }
  writeFileSync(path, text.replace(patch.broken, patch.fixed));
  console.log(`patch-dependencies: patched ${patch.file}`);
}
