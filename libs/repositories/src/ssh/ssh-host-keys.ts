import { createHash, randomBytes } from 'node:crypto';
import { link, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { utils } from 'ssh2';

/** A host key the SSH server presents: its private key (OpenSSH format) and what clients see of it. */
export interface HostKey {
  /** OpenSSH's name for the key type: `ssh-ed25519`, `ecdsa-sha2-nistp256`, `ssh-rsa`. */
  type: string;
  privateKey: Buffer;
  /** `SHA256:<base64>`, as `ssh-keygen -lf` and the client's first-connection prompt print it. */
  fingerprint: string;
  /** The public key in SSH wire format. */
  publicBlob: Buffer;
}

/**
 * The server's host keys, as OpenSSH's: ed25519 first, ECDSA P-256, and RSA 3072 for old clients
 * (OpenSSH's own files and sizes).
 */
const KINDS = [
  { file: 'ssh_host_ed25519_key', generate: () => utils.generateKeyPairSync('ed25519') },
  { file: 'ssh_host_ecdsa_key', generate: () => utils.generateKeyPairSync('ecdsa', { bits: 256 }) },
  { file: 'ssh_host_rsa_key', generate: () => utils.generateKeyPairSync('rsa', { bits: 3072 }) },
] as const;

/**
 * The host keys in `dir` (`$LODE_DATA_DIR/ssh`), generated on the first start and reused on every
 * later one, so clients never see a changed host key after a restart (they would refuse to connect).
 * The private keys are written with mode 0600 beside a `.pub` for `ssh-keygen -lf`. Several processes
 * starting at once on one data directory agree: each key is written under a temporary name and linked
 * into place, and whoever links second reads the winner's key.
 */
export async function loadHostKeys(dir: string): Promise<HostKey[]> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const keys: HostKey[] = [];
  for (const kind of KINDS) {
    const path = join(dir, kind.file);
    let privateKey = await readFile(path).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return undefined;
      throw err;
    });
    if (!privateKey) {
      const pair = readableKeyPair(kind.generate);
      const tmp = `${path}.tmp-${randomBytes(4).toString('hex')}`;
      await writeFile(tmp, pair.private, { mode: 0o600, flag: 'wx' });
      await link(tmp, path).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'EEXIST') throw err;
      });
      await rm(tmp, { force: true });
      privateKey = await readFile(path);
      const winner = describe(privateKey, path);
      await writeFile(`${path}.pub`, `${winner.type} ${winner.publicBlob.toString('base64')}\n`, { mode: 0o644 });
    }
    keys.push(describe(privateKey, path));
  }
  return keys;
}

/**
 * A freshly generated key that ssh2 reads back. ssh2's generateKeyPairSync writes about one ed25519
 * key in 256 that its own parser refuses ("Malformed OpenSSH private key", mscdex/ssh2#1390): such a
 * key would stop every later start, so it is never written; another is made instead.
 */
export function readableKeyPair(generate: () => { private: string }): { private: string } {
  for (let attempt = 1; ; attempt++) {
    const pair = generate();
    if (!(utils.parseKey(pair.private) instanceof Error)) return pair;
    if (attempt >= 20) throw new Error('could not generate a host key ssh2 can read');
  }
}

function describe(privateKey: Buffer, path: string): HostKey {
  const key = utils.parseKey(privateKey);
  if (key instanceof Error) throw new Error(`${path} is not a private key ssh2 can read: ${key.message}`);
  const publicBlob = key.getPublicSSH();
  const digest = createHash('sha256').update(publicBlob).digest('base64').replace(/=+$/, '');
  return { type: key.type, privateKey, fingerprint: `SHA256:${digest}`, publicBlob };
}
