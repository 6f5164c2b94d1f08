import { createHash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';

const scryptAsync = promisify(scrypt) as (pw: string, salt: Buffer, len: number, opts: object) => Promise<Buffer>;
const SCRYPT = { N: 16384, r: 8, p: 1 };

/** A new access token secret: 20 URL-safe characters (120 random bits), GitLab's length. */
export function newTokenSecret(): string {
  return randomBytes(15).toString('base64url');
}

/** Tokens are stored only as this digest; looking one up means digesting what the caller sent. */
export function tokenDigest(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** `scrypt$N$r$p$salt$hash`, so the parameters can be raised later without breaking old digests. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scryptAsync(password, salt, 32, SCRYPT);
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64')}$${hash.toString('base64')}`;
}

export async function verifyPassword(password: string, digest: string | null): Promise<boolean> {
  const parts = digest?.split('$');
  if (!parts || parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [, N, r, p, salt, hash] = parts;
  const expected = Buffer.from(hash, 'base64');
  const actual = await scryptAsync(password, Buffer.from(salt, 'base64'), expected.length, {
    N: Number(N),
    r: Number(r),
    p: Number(p),
  });
  return timingSafeEqual(expected, actual);
}
