import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LodeConfig } from '../config/lode-config';

/** The key file Lode writes into its data directory when `LODE_SECRET_KEY` is not set. */
export const SECRET_KEY_FILE = 'secret.key';

const VERSION = 'v1';
const IV_BYTES = 12; // GCM's standard nonce size
const TAG_BYTES = 16;

/**
 * Secrets at rest (a hook's token, the password in a hook's URL): AES-256-GCM with a random nonce per
 * value, so the database, its dumps and its backups hold only ciphertext. Sealed text is
 * `v1:<base64 of nonce | tag | ciphertext>`; the version leaves room for a key rotation.
 */
export class SecretBox {
  private constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('a secret key is 32 bytes');
  }

  /**
   * The key from `LODE_SECRET_KEY` (64 hex digits are taken as the key itself; any other text is
   * hashed with SHA-256 into one), else from `$LODE_DATA_DIR/secret.key`, created on first use with
   * mode 0600. Every process of one installation must see the same key.
   */
  static forConfig(config: Pick<LodeConfig, 'secretKey' | 'dataDir'>): SecretBox {
    if (config.secretKey) return new SecretBox(keyFromText(config.secretKey));
    return new SecretBox(keyFromFile(join(config.dataDir, SECRET_KEY_FILE)));
  }

  static withKey(key: Buffer): SecretBox {
    return new SecretBox(key);
  }

  seal(plain: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `${VERSION}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')}`;
  }

  /** Throws when the text was sealed with another key or altered. */
  open(sealed: string): string {
    const [version, payload] = sealed.split(':', 2);
    if (version !== VERSION || payload === undefined) throw new Error('not a sealed secret');
    const raw = Buffer.from(payload, 'base64');
    const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, IV_BYTES));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  }
}

function keyFromText(text: string): Buffer {
  return /^[0-9a-f]{64}$/i.test(text) ? Buffer.from(text, 'hex') : createHash('sha256').update(text, 'utf8').digest();
}

/**
 * Reads the key file, or creates it. Several processes may start at once on one data directory: the
 * key is written to a private temporary file and linked into place, which fails when another process
 * got there first; then its key is read, so all agree.
 */
function keyFromFile(path: string): Buffer {
  const read = (): Buffer | undefined => {
    try {
      const text = readFileSync(path, 'utf8').trim();
      if (!/^[0-9a-f]{64}$/i.test(text)) throw new Error(`${path} does not hold a 64-hex-digit key`);
      return Buffer.from(text, 'hex');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  };
  const existing = read();
  if (existing) return existing;
  mkdirSync(join(path, '..'), { recursive: true });
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(temporary, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  try {
    linkSync(temporary, path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    rmSync(temporary, { force: true });
  }
  const key = read();
  if (!key) throw new Error(`${path} could not be created`);
  return key;
}
