// A namespace import works both ways this file runs: compiled to CommonJS by tsc, `require('openpgp')`
// picks the package's "require" build (dist/node/openpgp.min.cjs); under Jest's native ESM it picks
// the "import" build (dist/node/openpgp.mjs), which has only named exports (no default).
import * as openpgp from 'openpgp';

/**
 * Validation of an ASCII-armored OpenPGP public key, as GitLab's `POST /user/gpg_keys` takes it.
 * Pure apart from openpgp's parsing: no I/O, no framework.
 */
export interface ParsedGpgKey {
  /** The armored public key block, trimmed, with CRLF normalised to LF. */
  key: string;
  /** Uppercase hex of the primary key's fingerprint (40 chars for v4 keys, 64 for v6). */
  fingerprint: string;
  /** Uppercase hex of the primary key's 64-bit key ID. */
  primaryKeyId: string;
  /** Lower-cased e-mail addresses of the user IDs, without duplicates, in key order. */
  emails: string[];
}

export class GpgKeyError extends Error {}

export const GPG_KEY_MAX_BYTES = 64 * 1024;

const BEGIN = '-----BEGIN PGP PUBLIC KEY BLOCK-----';
const END = '-----END PGP PUBLIC KEY BLOCK-----';

export async function parseGpgPublicKey(armored: string): Promise<ParsedGpgKey> {
  if (typeof armored !== 'string') throw new GpgKeyError('key must be a string');
  if (Buffer.byteLength(armored, 'utf8') > GPG_KEY_MAX_BYTES) {
    throw new GpgKeyError(`key is larger than ${GPG_KEY_MAX_BYTES / 1024} KiB`);
  }
  const key = armored.replace(/\r\n?/g, '\n').trim();
  if (key === '') throw new GpgKeyError('key is empty');
  if (key.startsWith('-----BEGIN PGP PRIVATE KEY BLOCK-----')) {
    throw new GpgKeyError('key is a private key; submit the public key');
  }
  if (!key.startsWith(BEGIN) || !key.endsWith(END)) throw new GpgKeyError('key is not an armored PGP public key block');
  // openpgp only reads the first armor block and silently ignores the rest.
  if (key.indexOf(BEGIN, BEGIN.length) !== -1) throw new GpgKeyError('key must contain exactly one public key');

  let keys: openpgp.Key[];
  try {
    keys = await openpgp.readKeys({ armoredKeys: key });
  } catch {
    throw new GpgKeyError('key is not a valid PGP public key');
  }
  // `gpg --export --armor a b` puts several keys in one block; GitLab stores one key per record.
  if (keys.length !== 1) throw new GpgKeyError('key must contain exactly one public key');
  const [publicKey] = keys;
  if (publicKey.isPrivate()) throw new GpgKeyError('key is a private key; submit the public key');

  return {
    key,
    fingerprint: publicKey.getFingerprint().toUpperCase(),
    primaryKeyId: publicKey.getKeyID().toHex().toUpperCase(),
    emails: emailsOf(publicKey),
  };
}

function emailsOf(key: openpgp.Key): string[] {
  const emails = new Set<string>();
  for (const user of key.users) {
    // User attribute packets (photo IDs) have no userID; name-only user IDs have an empty email.
    const email = user.userID?.email;
    if (email) emails.add(email.toLowerCase());
  }
  return [...emails];
}
