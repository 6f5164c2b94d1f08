import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as openpgp from 'openpgp';
import { GPG_KEY_MAX_BYTES, GpgKeyError, parseGpgPublicKey } from './gpg-public-key';

async function expectRejected(armored: string, reason: RegExp): Promise<void> {
  const error = await parseGpgPublicKey(armored).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(GpgKeyError);
  expect((error as Error).message).toMatch(reason);
}

let keyPair: { publicKey: string; privateKey: string };
let other: { publicKey: string; privateKey: string };

beforeAll(async () => {
  keyPair = await openpgp.generateKey({
    userIDs: [
      { name: 'A', email: 'A@Example.com' },
      { email: 'a@example.COM' }, // the same address again, differently cased
      { name: 'No Mail' },
      { name: 'Second', email: 'Second@Example.org', comment: 'work' },
    ],
    type: 'ecc',
    curve: 'curve25519Legacy',
    format: 'armored',
  });
  other = await openpgp.generateKey({ userIDs: [{ email: 'other@example.net' }], format: 'armored' });
});

describe('parseGpgPublicKey', () => {
  it('reads the fingerprint, key ID and e-mails of a generated ECC key', async () => {
    const parsed = await parseGpgPublicKey(keyPair.publicKey);
    const reference = await openpgp.readKey({ armoredKey: keyPair.privateKey });

    expect(parsed.fingerprint).toMatch(/^[0-9A-F]{40}$/);
    expect(parsed.fingerprint).toBe(reference.getFingerprint().toUpperCase());
    // A v4 key ID is the low 64 bits of the fingerprint.
    expect(parsed.primaryKeyId).toMatch(/^[0-9A-F]{16}$/);
    expect(parsed.primaryKeyId).toBe(parsed.fingerprint.slice(-16));
    expect(parsed.emails).toEqual(['a@example.com', 'second@example.org']);
    expect(parsed.key).toBe(keyPair.publicKey.trim());
    expect(parsed.key.startsWith('-----BEGIN PGP PUBLIC KEY BLOCK-----\n')).toBe(true);
    expect(parsed.key.endsWith('-----END PGP PUBLIC KEY BLOCK-----')).toBe(true);
  });

  it('reads an RSA key', async () => {
    const rsa = await openpgp.generateKey({
      userIDs: [{ name: 'R', email: 'r@example.com' }],
      type: 'rsa',
      rsaBits: 2048,
      format: 'armored',
    });
    const parsed = await parseGpgPublicKey(rsa.publicKey);
    expect(parsed.emails).toEqual(['r@example.com']);
    expect(parsed.primaryKeyId).toBe(parsed.fingerprint.slice(-16));
  });

  it('reads a v6 key, whose fingerprint is 64 hex digits and key ID its first 16', async () => {
    const v6 = await openpgp.generateKey({
      userIDs: [{ email: 'v6@example.com' }],
      type: 'curve25519',
      format: 'armored',
      config: { v6Keys: true },
    });
    const parsed = await parseGpgPublicKey(v6.publicKey);
    expect(parsed.fingerprint).toMatch(/^[0-9A-F]{64}$/);
    expect(parsed.primaryKeyId).toBe(parsed.fingerprint.slice(0, 16));
    expect(parsed.emails).toEqual(['v6@example.com']);
  });

  it('trims the armor and turns CRLF into LF', async () => {
    const crlf = `\r\n  ${keyPair.publicKey.trim().replace(/\n/g, '\r\n')}\r\n\r\n`;
    const parsed = await parseGpgPublicKey(crlf);
    expect(parsed.key).toBe(keyPair.publicKey.trim());
    expect(parsed.key).not.toContain('\r');
    expect(parsed.fingerprint).toBe((await parseGpgPublicKey(keyPair.publicKey)).fingerprint);
  });

  it('accepts exactly 64 KiB of input', async () => {
    const padded = keyPair.publicKey + ' '.repeat(GPG_KEY_MAX_BYTES - Buffer.byteLength(keyPair.publicKey));
    expect(Buffer.byteLength(padded)).toBe(64 * 1024);
    await expect(parseGpgPublicKey(padded)).resolves.toMatchObject({ key: keyPair.publicKey.trim() });
  });

  describe('rejects', () => {
    it('the private key armor', async () => {
      await expectRejected(keyPair.privateKey, /private key/);
    });

    it('secret key packets dressed up in a public key block', async () => {
      const secret = await openpgp.readKey({ armoredKey: keyPair.privateKey });
      const disguised = openpgp.armor(openpgp.enums.armor.publicKey, secret.write());
      expect(disguised).toContain('-----BEGIN PGP PUBLIC KEY BLOCK-----');
      await expectRejected(disguised, /private key/);
    });

    it('an empty or blank string', async () => {
      await expectRejected('', /empty/);
      await expectRejected(' \r\n ', /empty/);
    });

    it('garbage and other non-armored text', async () => {
      await expectRejected('garbage', /not an armored/);
      await expectRejected('ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFkrzEWpQLO2dGgh me@host', /not an armored/);
      // The bare binary key, base64-encoded, is not armor either.
      const binary = (await openpgp.readKey({ armoredKey: keyPair.publicKey })).write();
      await expectRejected(Buffer.from(binary).toString('base64'), /not an armored/);
    });

    it('garbage inside the armor', async () => {
      await expectRejected(
        '-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nbm90IGEga2V5IGF0IGFsbA==\n-----END PGP PUBLIC KEY BLOCK-----',
        /not a valid PGP public key/,
      );
      await expectRejected(
        '-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n!!!!\n-----END PGP PUBLIC KEY BLOCK-----',
        /not a valid/,
      );
    });

    it('another kind of armor block', async () => {
      const message = await openpgp.encrypt({
        message: await openpgp.createMessage({ text: 'hi' }),
        passwords: ['pw'],
      });
      await expectRejected(message as string, /not an armored PGP public key/);
    });

    it('a truncated armor', async () => {
      const lines = keyPair.publicKey.trim().split('\n');
      const cut = lines.slice(0, 4).join('\n');
      await expectRejected(cut, /not an armored/);
      await expectRejected(`${cut}\n-----END PGP PUBLIC KEY BLOCK-----`, /not a valid PGP public key/);
    });

    it('text around the armor', async () => {
      await expectRejected(`my key:\n${keyPair.publicKey}`, /not an armored/);
      await expectRejected(`${keyPair.publicKey}\nthanks`, /not an armored/);
    });

    it('two armored keys one after the other', async () => {
      await expectRejected(`${keyPair.publicKey}\n${other.publicKey}`, /exactly one/);
    });

    it('two keys in one armor block, as `gpg --export --armor a b` writes them', async () => {
      const [a, b] = await Promise.all(
        [keyPair.publicKey, other.publicKey].map((armoredKey) => openpgp.readKey({ armoredKey })),
      );
      const both = openpgp.armor(openpgp.enums.armor.publicKey, Buffer.concat([a.write(), b.write()]));
      expect(await openpgp.readKeys({ armoredKeys: both })).toHaveLength(2);
      await expectRejected(both, /exactly one/);
    });

    it('input over 64 KiB', async () => {
      const padded = keyPair.publicKey + ' '.repeat(GPG_KEY_MAX_BYTES + 1 - Buffer.byteLength(keyPair.publicKey));
      await expectRejected(padded, /larger than 64 KiB/);
      // Measured in bytes, not characters.
      const multibyte = keyPair.publicKey + '\u00e9'.repeat(GPG_KEY_MAX_BYTES / 2);
      expect(multibyte.length).toBeLessThan(GPG_KEY_MAX_BYTES);
      await expectRejected(multibyte, /larger than 64 KiB/);
    });
  });
});

// The gpg binary is an independent oracle when the machine has one; the tests above do not need it.
const gpg = (() => {
  try {
    execFileSync('gpg', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

(gpg ? describe : describe.skip)('parseGpgPublicKey against gpg', () => {
  let home: string;
  const run = (args: string[], input?: string) =>
    execFileSync('gpg', ['--homedir', home, '--batch', '--no-tty', ...args], {
      encoding: 'utf8',
      input,
      stdio: ['pipe', 'pipe', 'ignore'],
    });

  beforeAll(() => {
    home = mkdtempSync(join(tmpdir(), 'lode-gpg-'));
  });

  afterAll(() => {
    // Key generation starts a gpg-agent for this home; stop it before removing its socket.
    try {
      execFileSync('gpgconf', ['--homedir', home, '--kill', 'gpg-agent'], { stdio: 'ignore' });
    } catch {
      // no gpgconf: the agent notices its socket is gone and exits by itself
    }
    rmSync(home, { recursive: true, force: true });
  });

  it('agrees with gpg on a key openpgp made', async () => {
    const colons = run(['--with-colons', '--import-options', 'show-only', '--import'], keyPair.publicKey);
    const fpr = colons
      .split('\n')
      .find((l) => l.startsWith('fpr:'))!
      .split(':')[9];
    const keyId = colons
      .split('\n')
      .find((l) => l.startsWith('pub:'))!
      .split(':')[4];
    const parsed = await parseGpgPublicKey(keyPair.publicKey);
    expect(parsed.fingerprint).toBe(fpr);
    expect(parsed.primaryKeyId).toBe(keyId);
  });

  it('reads a key gpg made, with a bare e-mail user ID', async () => {
    run([
      '--passphrase',
      '',
      '--pinentry-mode',
      'loopback',
      '--quick-gen-key',
      'Bare@Example.org',
      'ed25519',
      'sign',
      'never',
    ]);
    const armored = run(['--armor', '--export', 'Bare@Example.org']);
    const fpr = run(['--with-colons', '--list-keys', 'Bare@Example.org'])
      .split('\n')
      .find((l) => l.startsWith('fpr:'))!
      .split(':')[9];
    const parsed = await parseGpgPublicKey(armored);
    expect(parsed.fingerprint).toBe(fpr);
    expect(parsed.primaryKeyId).toBe(fpr.slice(-16));
    expect(parsed.emails).toEqual(['bare@example.org']);
    await expectRejected(
      run(['--armor', '--pinentry-mode', 'loopback', '--passphrase', '', '--export-secret-keys']),
      /private key/,
    );
  });
});
