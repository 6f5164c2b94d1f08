import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseSshPublicKey, SshKeyError, SSH_KEY_MAX_LENGTH } from './ssh-public-key';

// --- SSH wire-format helpers for hand-built blobs -----------------------------------------

function sshString(value: Buffer | string): Buffer {
  const bytes = typeof value === 'string' ? Buffer.from(value) : value;
  const length = Buffer.alloc(4);
  length.writeUInt32BE(bytes.length);
  return Buffer.concat([length, bytes]);
}

/** mpint from an unsigned big-endian magnitude (a 0x00 in front keeps the high bit from meaning "negative"). */
function sshMpint(magnitude: Buffer): Buffer {
  return sshString(magnitude[0] & 0x80 ? Buffer.concat([Buffer.from([0]), magnitude]) : magnitude);
}

function line(type: string, blob: Buffer, comment?: string): string {
  return `${type} ${blob.toString('base64')}${comment ? ` ${comment}` : ''}`;
}

function ed25519Raw(): Buffer {
  const { publicKey } = generateKeyPairSync('ed25519');
  return Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
}

/** Uncompressed SEC1 point 0x04 || X || Y of a fresh key. */
function ecPoint(namedCurve: 'P-256' | 'P-384' | 'P-521'): Buffer {
  const { publicKey } = generateKeyPairSync('ec', { namedCurve });
  const jwk = publicKey.export({ format: 'jwk' });
  return Buffer.concat([Buffer.from([4]), Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')]);
}

function rsaBlob(modulusLength: number): Buffer {
  const { publicKey } = generateKeyPairSync('rsa', { modulusLength });
  const jwk = publicKey.export({ format: 'jwk' });
  return Buffer.concat([
    sshString('ssh-rsa'),
    sshMpint(Buffer.from(jwk.e!, 'base64url')),
    sshMpint(Buffer.from(jwk.n!, 'base64url')),
  ]);
}

function expectRejected(text: string, reason: RegExp): void {
  let thrown: unknown;
  try {
    parseSshPublicKey(text);
  } catch (e) {
    thrown = e;
  }
  expect(thrown).toBeInstanceOf(SshKeyError);
  expect((thrown as Error).message).toMatch(reason);
}

// --- ssh-keygen as the oracle ---------------------------------------------------------------

let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'lode-ssh-key-'));
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** `ssh-keygen -l` on a .pub file: bits and fingerprint (without the hash-name prefix for MD5). */
function keygenFingerprint(pubFile: string, hash: 'sha256' | 'md5'): { bits: number; fingerprint: string } {
  const out = execFileSync('ssh-keygen', ['-l', '-E', hash, '-f', pubFile], { encoding: 'utf8' });
  const [bits, fingerprint] = out.trim().split(' ');
  return { bits: Number(bits), fingerprint: hash === 'md5' ? fingerprint.replace(/^MD5:/, '') : fingerprint };
}

function generate(name: string, args: string[], comment: string): string {
  const file = join(dir, name);
  execFileSync('ssh-keygen', ['-q', ...args, '-N', '', '-C', comment, '-f', file]);
  return `${file}.pub`;
}

function expectMatchesKeygen(pubFile: string, type: string): void {
  const text = readFileSync(pubFile, 'utf8');
  const parsed = parseSshPublicKey(text);
  const sha256 = keygenFingerprint(pubFile, 'sha256');
  const md5 = keygenFingerprint(pubFile, 'md5');

  expect(parsed.type).toBe(type);
  expect(parsed.bits).toBe(sha256.bits);
  expect(parsed.fingerprintSha256).toBe(sha256.fingerprint);
  expect(parsed.fingerprintMd5).toBe(md5.fingerprint);
  expect(parsed.fingerprintMd5).toMatch(/^([0-9a-f]{2}:){15}[0-9a-f]{2}$/);
  expect(parsed.key).toBe(text.trim());
}

describe('parseSshPublicKey with keys made by ssh-keygen', () => {
  it.each([
    ['rsa 2048', ['-t', 'rsa', '-b', '2048'], 'ssh-rsa', 2048],
    ['rsa 1024', ['-t', 'rsa', '-b', '1024'], 'ssh-rsa', 1024],
    ['rsa 4096', ['-t', 'rsa', '-b', '4096'], 'ssh-rsa', 4096],
    ['dsa', ['-t', 'dsa'], 'ssh-dss', 1024],
    ['ecdsa 256', ['-t', 'ecdsa', '-b', '256'], 'ecdsa-sha2-nistp256', 256],
    ['ecdsa 384', ['-t', 'ecdsa', '-b', '384'], 'ecdsa-sha2-nistp384', 384],
    ['ecdsa 521', ['-t', 'ecdsa', '-b', '521'], 'ecdsa-sha2-nistp521', 521],
    ['ed25519', ['-t', 'ed25519'], 'ssh-ed25519', 256],
  ])('%s: type, bits and fingerprints agree with ssh-keygen -l', (name, args, type, bits) => {
    const pub = generate(name.replace(' ', '-'), args, `lode@${name.replace(' ', '-')}`);
    expectMatchesKeygen(pub, type);
    expect(parseSshPublicKey(readFileSync(pub, 'utf8')).bits).toBe(bits);
  });

  it('keeps a comment with spaces, collapsing runs of whitespace', () => {
    const pub = generate('commented', ['-t', 'ed25519'], 'Jane  Doe  (laptop)');
    const [type, base64] = readFileSync(pub, 'utf8').split(' ');
    expect(parseSshPublicKey(readFileSync(pub, 'utf8')).key).toBe(`${type} ${base64} Jane Doe (laptop)`);
  });

  it('leaves out the comment separator when there is no comment', () => {
    const pub = generate('uncommented', ['-t', 'ed25519'], '');
    const text = readFileSync(pub, 'utf8');
    expect(text.trim().split(' ')).toHaveLength(2);
    expect(parseSshPublicKey(text).key).toBe(text.trim());
  });
});

describe('parseSshPublicKey with security-key (sk-) keys', () => {
  // ssh-keygen cannot create these without a FIDO token, but it can fingerprint them.
  it('sk-ssh-ed25519@openssh.com built from a real Ed25519 key', () => {
    const blob = Buffer.concat([sshString('sk-ssh-ed25519@openssh.com'), sshString(ed25519Raw()), sshString('ssh:')]);
    const pub = join(dir, 'sk-ed25519.pub');
    writeFileSync(pub, line('sk-ssh-ed25519@openssh.com', blob, 'lode@sk') + '\n');
    expectMatchesKeygen(pub, 'sk-ssh-ed25519@openssh.com');
    expect(parseSshPublicKey(readFileSync(pub, 'utf8')).bits).toBe(256);
  });

  it('sk-ecdsa-sha2-nistp256@openssh.com built from a real P-256 key', () => {
    const blob = Buffer.concat([
      sshString('sk-ecdsa-sha2-nistp256@openssh.com'),
      sshString('nistp256'),
      sshString(ecPoint('P-256')),
      sshString('ssh:'),
    ]);
    const pub = join(dir, 'sk-ecdsa.pub');
    writeFileSync(pub, line('sk-ecdsa-sha2-nistp256@openssh.com', blob, 'lode@sk') + '\n');
    expectMatchesKeygen(pub, 'sk-ecdsa-sha2-nistp256@openssh.com');
    expect(parseSshPublicKey(readFileSync(pub, 'utf8')).bits).toBe(256);
  });

  it('a fixed sk-ssh-ed25519 key gives the fingerprints ssh-keygen printed for it', () => {
    const text =
      'sk-ssh-ed25519@openssh.com AAAAGnNrLXNzaC1lZDI1NTE5QG9wZW5zc2guY29tAAAAIFkrzEWpQLO2dGgh+BLVrLY14bUHUl2ddnuwJgqcTXcIAAAABHNzaDo= lode@test';
    expect(parseSshPublicKey(text)).toEqual({
      type: 'sk-ssh-ed25519@openssh.com',
      bits: 256,
      fingerprintMd5: 'ea:90:8f:44:0a:b0:3d:3d:bf:e5:b4:49:6d:69:07:84',
      fingerprintSha256: 'SHA256:ll83SscnqXzB5FsLAgdKafCsru9afW2E5MAJAmbM+s8',
      key: text,
    });
  });

  it('rejects an sk-ecdsa key whose point is off the curve', () => {
    const point = ecPoint('P-256');
    point[point.length - 1] ^= 1;
    const blob = Buffer.concat([
      sshString('sk-ecdsa-sha2-nistp256@openssh.com'),
      sshString('nistp256'),
      sshString(point),
      sshString('ssh:'),
    ]);
    expectRejected(line('sk-ecdsa-sha2-nistp256@openssh.com', blob), /invalid/);
  });

  it('rejects an sk key without its application string', () => {
    const blob = Buffer.concat([sshString('sk-ssh-ed25519@openssh.com'), sshString(ed25519Raw())]);
    expectRejected(line('sk-ssh-ed25519@openssh.com', blob), /truncated/);
  });
});

describe('parseSshPublicKey normalisation', () => {
  const blob = Buffer.concat([sshString('ssh-ed25519'), sshString(ed25519Raw())]);
  const base64 = blob.toString('base64');

  it('joins a key wrapped over several lines with CRLF, keeping the comment', () => {
    const wrapped = `  ssh-ed25519 ${base64.slice(0, 20)}\r\n${base64.slice(20, 40)}\r\n${base64.slice(40)} me@host\r\n`;
    expect(parseSshPublicKey(wrapped).key).toBe(`ssh-ed25519 ${base64} me@host`);
  });

  it('joins bare LF and CR line breaks too', () => {
    const wrapped = `ssh-ed25519 ${base64.slice(0, 30)}\n${base64.slice(30, 50)}\r${base64.slice(50)}`;
    expect(parseSshPublicKey(wrapped).key).toBe(`ssh-ed25519 ${base64}`);
  });

  it('trims and collapses tabs and spaces between fields', () => {
    expect(parseSshPublicKey(`\t ssh-ed25519 \t ${base64}   a   b \n`).key).toBe(`ssh-ed25519 ${base64} a b`);
  });

  it('accepts unpadded base64 and writes it back padded', () => {
    const rsa = rsaBlob(1024); // 151 bytes: needs padding
    const padded = rsa.toString('base64');
    expect(padded).toMatch(/=$/);
    expect(parseSshPublicKey(`ssh-rsa ${padded.replace(/=+$/, '')}`).key).toBe(`ssh-rsa ${padded}`);
  });

  it('gives the same fingerprints for the same key whatever the comment', () => {
    const a = parseSshPublicKey(`ssh-ed25519 ${base64} one`);
    const b = parseSshPublicKey(`ssh-ed25519 ${base64} two`);
    expect(a.fingerprintSha256).toBe(b.fingerprintSha256);
    expect(a.fingerprintMd5).toBe(b.fingerprintMd5);
  });
});

describe('parseSshPublicKey rejections', () => {
  const ed25519 = Buffer.concat([sshString('ssh-ed25519'), sshString(ed25519Raw())]);

  it('rejects an empty or blank string', () => {
    expectRejected('', /empty/);
    expectRejected(' \r\n\t ', /empty/);
  });

  it('rejects input over 8192 characters, even if only padding', () => {
    expect(SSH_KEY_MAX_LENGTH).toBe(8192);
    const valid = line('ssh-ed25519', ed25519, 'x');
    expect(() => parseSshPublicKey(valid + ' '.repeat(8192 - valid.length))).not.toThrow();
    expectRejected(valid + ' '.repeat(8193 - valid.length), /longer than 8192/);
  });

  it('rejects an unknown key type', () => {
    expectRejected(`ssh-foo ${ed25519.toString('base64')}`, /unknown key type/);
    expectRejected('hello world', /unknown key type/);
    // Certificates are not keys GitLab accepts here.
    expectRejected(`ssh-ed25519-cert-v01@openssh.com ${ed25519.toString('base64')}`, /unknown key type/);
  });

  it('rejects authorized_keys options in front of the key', () => {
    const base64 = ed25519.toString('base64');
    expectRejected(`command="/bin/sh" ssh-ed25519 ${base64}`, /options are not allowed/);
    expectRejected(`no-pty,no-port-forwarding ssh-ed25519 ${base64} me@host`, /options are not allowed/);
  });

  it('rejects a type with no key data', () => {
    expectRejected('ssh-ed25519', /missing/);
    expectRejected('ssh-ed25519   \n', /missing/);
  });

  it('rejects invalid base64', () => {
    expectRejected('ssh-ed25519 AAAA!!!!', /base64/);
    expectRejected('ssh-ed25519 AAAAC3NzaC1lZDI1NTE5=AAAA', /base64/);
    expectRejected('ssh-ed25519 A', /base64/);
    expectRejected('ssh-ed25519 AAAA===', /base64/);
    // Non-zero bits after the last full byte: Buffer.from() would quietly drop them.
    expectRejected('ssh-ed25519 AB==', /base64/);
  });

  it('rejects a blob whose inner type differs from the text', () => {
    expectRejected(`ssh-rsa ${ed25519.toString('base64')}`, /does not match/);
    expectRejected(`ecdsa-sha2-nistp256 ${ed25519.toString('base64')}`, /does not match/);
  });

  it('rejects a truncated blob', () => {
    for (const cut of [1, 16, ed25519.length - 2]) {
      expectRejected(line('ssh-ed25519', ed25519.subarray(0, ed25519.length - cut)), /truncated/);
    }
    expectRejected(line('ssh-ed25519', ed25519.subarray(0, 3)), /truncated/);
    const rsa = rsaBlob(2048);
    expectRejected(line('ssh-rsa', rsa.subarray(0, rsa.length - 1)), /truncated/);
  });

  it('rejects trailing bytes inside the blob', () => {
    expectRejected(line('ssh-ed25519', Buffer.concat([ed25519, Buffer.from([0])])), /trailing/);
    expectRejected(line('ssh-ed25519', Buffer.concat([ed25519, sshString('extra')])), /trailing/);
  });

  it('rejects an Ed25519 key of the wrong length', () => {
    const short = Buffer.concat([sshString('ssh-ed25519'), sshString(ed25519Raw().subarray(0, 31))]);
    expectRejected(line('ssh-ed25519', short), /32 bytes/);
  });

  describe('ECDSA', () => {
    const blob = (type: string, curve: string, point: Buffer) =>
      line(type, Buffer.concat([sshString(type), sshString(curve), sshString(point)]));

    it('accepts a hand-built key of each size', () => {
      expect(parseSshPublicKey(blob('ecdsa-sha2-nistp256', 'nistp256', ecPoint('P-256'))).bits).toBe(256);
      expect(parseSshPublicKey(blob('ecdsa-sha2-nistp384', 'nistp384', ecPoint('P-384'))).bits).toBe(384);
      expect(parseSshPublicKey(blob('ecdsa-sha2-nistp521', 'nistp521', ecPoint('P-521'))).bits).toBe(521);
    });

    it('rejects a point that is not on the curve', () => {
      for (const curve of ['P-256', 'P-384', 'P-521'] as const) {
        const point = ecPoint(curve);
        point[point.length - 1] ^= 1;
        const name = `nistp${curve.slice(2)}`;
        expectRejected(blob(`ecdsa-sha2-${name}`, name, point), /invalid/);
      }
    });

    it('rejects a curve name that does not match the type', () => {
      expectRejected(blob('ecdsa-sha2-nistp256', 'nistp384', ecPoint('P-256')), /curve does not match/);
    });

    it('rejects a compressed point or one of the wrong length', () => {
      const point = ecPoint('P-256');
      const compressed = Buffer.concat([Buffer.from([2 + (point[64] & 1)]), point.subarray(1, 33)]);
      expectRejected(blob('ecdsa-sha2-nistp256', 'nistp256', compressed), /invalid point/);
      expectRejected(blob('ecdsa-sha2-nistp256', 'nistp256', ecPoint('P-384')), /invalid point/);
      const wrongPrefix = Buffer.from(point);
      wrongPrefix[0] = 5;
      expectRejected(blob('ecdsa-sha2-nistp256', 'nistp256', wrongPrefix), /invalid point/);
    });
  });

  describe('RSA', () => {
    it('accepts 768 bits, the smallest allowed', () => {
      expect(parseSshPublicKey(line('ssh-rsa', rsaBlob(768))).bits).toBe(768);
    });

    it('rejects keys under 768 bits', () => {
      expectRejected(line('ssh-rsa', rsaBlob(512)), /at least 768/);
    });

    it('rejects absurdly large keys', () => {
      const n = Buffer.alloc(16384 / 8 + 1, 0xff); // 16392 bits
      const blob = Buffer.concat([sshString('ssh-rsa'), sshMpint(Buffer.from([1, 0, 1])), sshMpint(n)]);
      expectRejected(line('ssh-rsa', blob), /at most 16384/);
    });

    it('rejects an even or trivial exponent', () => {
      const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
      const n = Buffer.from(publicKey.export({ format: 'jwk' }).n!, 'base64url');
      for (const e of [[1, 0, 0], [1], []]) {
        const blob = Buffer.concat([sshString('ssh-rsa'), sshString(Buffer.from(e)), sshMpint(n)]);
        expectRejected(line('ssh-rsa', blob), /exponent/);
      }
    });

    it('rejects a negative mpint', () => {
      const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
      const n = Buffer.from(publicKey.export({ format: 'jwk' }).n!, 'base64url');
      // n's top bit is set, so without the 0x00 prefix it reads as negative.
      const blob = Buffer.concat([sshString('ssh-rsa'), sshMpint(Buffer.from([1, 0, 1])), sshString(n)]);
      expectRejected(line('ssh-rsa', blob), /negative/);
    });
  });

  describe('DSA', () => {
    it('rejects a generator outside the group', () => {
      const pub = generate('dsa-bad', ['-t', 'dsa'], 'bad');
      const blob = Buffer.from(readFileSync(pub, 'utf8').split(' ')[1], 'base64');
      // Fields: type, p, q, g, y. Replace g with 1.
      let offset = 0;
      const fields: Buffer[] = [];
      while (offset < blob.length) {
        const length = blob.readUInt32BE(offset);
        fields.push(blob.subarray(offset, offset + 4 + length));
        offset += 4 + length;
      }
      expect(fields).toHaveLength(5);
      fields[3] = sshMpint(Buffer.from([1]));
      expectRejected(line('ssh-dss', Buffer.concat(fields)), /DSA key is invalid/);
    });
  });
});
