import { createHash, createPublicKey, type JsonWebKey } from 'node:crypto';

/**
 * Parsing and validation of OpenSSH public key lines (`<type> <base64> [comment]`), the format
 * GitLab's `POST /user/keys` accepts. Pure: no I/O, no framework.
 */
export interface ParsedSshKey {
  /** e.g. 'ssh-rsa', 'ssh-ed25519', 'ecdsa-sha2-nistp256', 'sk-ssh-ed25519@openssh.com'. */
  type: string;
  /** RSA modulus bits, DSA p bits, 256 for (sk-)ed25519, 256/384/521 for (sk-)ecdsa: what `ssh-keygen -l` prints. */
  bits: number;
  /** GitLab 10.x's `fingerprint`: md5 of the blob as lowercase hex pairs joined by ':'. */
  fingerprintMd5: string;
  /** `SHA256:` + unpadded base64 of sha256(blob), as `ssh-keygen -l` prints it. */
  fingerprintSha256: string;
  /** `${type} ${base64}` plus ` ${comment}` when there is one, on a single line. */
  key: string;
}

export class SshKeyError extends Error {}

export const SSH_KEY_MAX_LENGTH = 8192;

const RSA_MIN_BITS = 768;
// Anything bigger is not a real key, just a way to make us hash and import megabytes.
const RSA_MAX_BITS = 16384;
const DSA_MIN_BITS = 768;
const DSA_MAX_BITS = 16384;

interface Curve {
  name: string; // the curve identifier inside the blob
  jwk: 'P-256' | 'P-384' | 'P-521';
  bits: number;
  fieldBytes: number;
}
const NISTP256: Curve = { name: 'nistp256', jwk: 'P-256', bits: 256, fieldBytes: 32 };
const NISTP384: Curve = { name: 'nistp384', jwk: 'P-384', bits: 384, fieldBytes: 48 };
const NISTP521: Curve = { name: 'nistp521', jwk: 'P-521', bits: 521, fieldBytes: 66 };

/** Reads the key material after the leading type string; returns the key size in bits. */
type BodyParser = (r: WireReader) => number;

const PARSERS: Record<string, BodyParser> = {
  'ssh-rsa': parseRsa,
  'ssh-dss': parseDsa,
  'ecdsa-sha2-nistp256': (r) => parseEcdsa(r, NISTP256),
  'ecdsa-sha2-nistp384': (r) => parseEcdsa(r, NISTP384),
  'ecdsa-sha2-nistp521': (r) => parseEcdsa(r, NISTP521),
  'ssh-ed25519': parseEd25519,
  // Security-key (FIDO) variants: the same public key followed by the application string
  // (usually "ssh:"), which is part of the blob and therefore of the fingerprint.
  'sk-ecdsa-sha2-nistp256@openssh.com': (r) => withApplication(r, parseEcdsa(r, NISTP256)),
  'sk-ssh-ed25519@openssh.com': (r) => withApplication(r, parseEd25519(r)),
};

export function parseSshPublicKey(text: string): ParsedSshKey {
  if (typeof text !== 'string') throw new SshKeyError('key must be a string');
  if (text.length > SSH_KEY_MAX_LENGTH) throw new SshKeyError(`key is longer than ${SSH_KEY_MAX_LENGTH} characters`);

  // GitLab deletes line breaks before parsing, so a key the browser or terminal wrapped in the
  // middle of its base64 is joined back together; other whitespace runs just separate fields.
  const line = text
    .replace(/[\r\n]/g, '')
    .replace(/\s+/g, ' ')
    .trim();
  if (line === '') throw new SshKeyError('key is empty');

  const [type, base64 = '', ...commentWords] = line.split(' ');
  const parseBody = Object.hasOwn(PARSERS, type) ? PARSERS[type] : undefined;
  if (!parseBody) {
    // authorized_keys allows `command="…",no-pty ssh-rsa …`; GitLab stores bare keys only.
    if (
      line
        .split(' ')
        .slice(1)
        .some((word) => Object.hasOwn(PARSERS, word))
    ) {
      throw new SshKeyError('key options are not allowed');
    }
    throw new SshKeyError('unknown key type');
  }
  if (base64 === '') throw new SshKeyError('key data is missing');

  const blob = decodeBase64(base64);
  const reader = new WireReader(blob);
  if (reader.readString().toString('latin1') !== type) throw new SshKeyError('key type does not match key data');
  const bits = parseBody(reader);
  if (!reader.atEnd()) throw new SshKeyError('key data has trailing bytes');

  const comment = commentWords.join(' ');
  return {
    type,
    bits,
    fingerprintMd5: createHash('md5')
      .update(blob)
      .digest('hex')
      .replace(/(..)(?!$)/g, '$1:'),
    fingerprintSha256: 'SHA256:' + createHash('sha256').update(blob).digest('base64').replace(/=+$/, ''),
    key: `${type} ${blob.toString('base64')}${comment ? ` ${comment}` : ''}`,
  };
}

/** Strict base64: Buffer.from() silently skips junk, so insist the text is the canonical encoding. */
function decodeBase64(text: string): Buffer {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text)) throw new SshKeyError('key data is not valid base64');
  const blob = Buffer.from(text, 'base64');
  const canonical = blob.toString('base64');
  if (text !== canonical && text !== canonical.replace(/=+$/, '')) {
    throw new SshKeyError('key data is not valid base64');
  }
  return blob;
}

function parseRsa(r: WireReader): number {
  const e = r.readMpint();
  const n = r.readMpint();
  const bits = bitLength(n);
  if (bits < RSA_MIN_BITS) throw new SshKeyError(`RSA key must be at least ${RSA_MIN_BITS} bits`);
  if (bits > RSA_MAX_BITS) throw new SshKeyError(`RSA key must be at most ${RSA_MAX_BITS} bits`);
  if (e.length === 0 || (e[e.length - 1] & 1) === 0 || (e.length === 1 && e[0] < 3)) {
    throw new SshKeyError('RSA key has an invalid exponent');
  }
  importJwk({ kty: 'RSA', n: n.toString('base64url'), e: e.toString('base64url') });
  return bits;
}

function parseDsa(r: WireReader): number {
  const [p, q, g, y] = [r.readMpint(), r.readMpint(), r.readMpint(), r.readMpint()];
  const bits = bitLength(p);
  if (bits < DSA_MIN_BITS || bits > DSA_MAX_BITS) throw new SshKeyError('DSA key has an invalid size');
  if (![160, 224, 256].includes(bitLength(q))) throw new SshKeyError('DSA key has an invalid subgroup');
  const [P, G, Y] = [p, g, y].map(toBigInt);
  if (G <= 1n || G >= P || Y <= 1n || Y >= P) throw new SshKeyError('DSA key is invalid');
  // JWK has no DSA form; hand Node a DER SubjectPublicKeyInfo instead.
  const dsaOid = Buffer.from('2a8648ce380401', 'hex'); // 1.2.840.10040.4.1
  const spki = der(0x30, [
    der(0x30, [der(0x06, [dsaOid]), der(0x30, [derInt(p), derInt(q), derInt(g)])]),
    der(0x03, [Buffer.from([0]), derInt(y)]),
  ]);
  try {
    createPublicKey({ key: spki, format: 'der', type: 'spki' });
  } catch {
    throw new SshKeyError('DSA key is invalid');
  }
  return bits;
}

function parseEcdsa(r: WireReader, curve: Curve): number {
  if (r.readString().toString('latin1') !== curve.name) throw new SshKeyError('ECDSA curve does not match key type');
  const point = r.readString();
  // Only the uncompressed form (0x04 || X || Y), which is all OpenSSH ever writes.
  if (point.length !== 1 + 2 * curve.fieldBytes || point[0] !== 0x04) {
    throw new SshKeyError('ECDSA key has an invalid point');
  }
  const x = point.subarray(1, 1 + curve.fieldBytes);
  const y = point.subarray(1 + curve.fieldBytes);
  // Node refuses points that are not on the curve.
  importJwk({ kty: 'EC', crv: curve.jwk, x: x.toString('base64url'), y: y.toString('base64url') });
  return curve.bits;
}

function parseEd25519(r: WireReader): number {
  const pk = r.readString();
  if (pk.length !== 32) throw new SshKeyError('Ed25519 key must be 32 bytes');
  importJwk({ kty: 'OKP', crv: 'Ed25519', x: pk.toString('base64url') });
  return 256;
}

function withApplication(r: WireReader, bits: number): number {
  r.readString();
  return bits;
}

function importJwk(jwk: JsonWebKey): void {
  try {
    createPublicKey({ key: jwk, format: 'jwk' });
  } catch {
    throw new SshKeyError('key material is invalid');
  }
}

/** SSH wire format (RFC 4251 §5): uint32 big-endian lengths in front of strings and mpints. */
class WireReader {
  private offset = 0;

  constructor(private readonly buf: Buffer) {}

  atEnd(): boolean {
    return this.offset === this.buf.length;
  }

  readString(): Buffer {
    if (this.buf.length - this.offset < 4) throw new SshKeyError('key data is truncated');
    const length = this.buf.readUInt32BE(this.offset);
    this.offset += 4;
    if (length > this.buf.length - this.offset) throw new SshKeyError('key data is truncated');
    const value = this.buf.subarray(this.offset, this.offset + length);
    this.offset += length;
    return value;
  }

  /** A non-negative mpint's magnitude, without leading zero bytes. */
  readMpint(): Buffer {
    const raw = this.readString();
    if (raw.length > 0 && raw[0] & 0x80) throw new SshKeyError('key data has a negative integer');
    let start = 0;
    while (start < raw.length && raw[start] === 0) start++;
    return raw.subarray(start);
  }
}

function bitLength(magnitude: Buffer): number {
  return magnitude.length === 0 ? 0 : (magnitude.length - 1) * 8 + (32 - Math.clz32(magnitude[0]));
}

function toBigInt(magnitude: Buffer): bigint {
  return magnitude.length === 0 ? 0n : BigInt('0x' + magnitude.toString('hex'));
}

function der(tag: number, parts: Buffer[]): Buffer {
  const body = Buffer.concat(parts);
  if (body.length < 0x80) return Buffer.concat([Buffer.from([tag, body.length]), body]);
  // Long form: minimal big-endian length bytes, as DER requires.
  const hex = body.length.toString(16);
  const lengthBytes = Buffer.from(hex.length % 2 ? '0' + hex : hex, 'hex');
  return Buffer.concat([Buffer.from([tag, 0x80 | lengthBytes.length]), lengthBytes, body]);
}

/** DER INTEGER from an unsigned magnitude: a 0x00 in front keeps it positive. */
function derInt(magnitude: Buffer): Buffer {
  const content =
    magnitude.length === 0 || magnitude[0] & 0x80 ? Buffer.concat([Buffer.from([0]), magnitude]) : magnitude;
  return der(0x02, [content]);
}
