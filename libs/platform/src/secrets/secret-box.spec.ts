import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SECRET_KEY_FILE, SecretBox } from './secret-box';

describe('SecretBox', () => {
  let dataDir: string;
  beforeEach(() => (dataDir = mkdtempSync(join(tmpdir(), 'lode-secrets-'))));
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('opens what it sealed, and seals the same text differently each time', () => {
    const box = SecretBox.forConfig({ secretKey: 'a passphrase', dataDir });
    const a = box.seal('hook-token-1');
    const b = box.seal('hook-token-1');
    expect(a).not.toBe(b);
    expect(a).toMatch(/^v1:/);
    expect(a).not.toContain('hook-token-1');
    expect(box.open(a)).toBe('hook-token-1');
    expect(box.open(b)).toBe('hook-token-1');
    expect(box.open(box.seal(''))).toBe('');
    expect(box.open(box.seal('ünïcode ✓'))).toBe('ünïcode ✓');
  });

  it('refuses another key and altered text', () => {
    const sealed = SecretBox.forConfig({ secretKey: 'one', dataDir }).seal('secret');
    expect(() => SecretBox.forConfig({ secretKey: 'two', dataDir }).open(sealed)).toThrow();
    const raw = Buffer.from(sealed.slice(3), 'base64');
    raw[raw.length - 1] ^= 1;
    expect(() => SecretBox.forConfig({ secretKey: 'one', dataDir }).open(`v1:${raw.toString('base64')}`)).toThrow();
    expect(() => SecretBox.forConfig({ secretKey: 'one', dataDir }).open('plain text')).toThrow();
  });

  it('takes 64 hex digits as the key itself, other text through SHA-256', () => {
    const hex = 'ab'.repeat(32);
    const sealed = SecretBox.withKey(Buffer.from(hex, 'hex')).seal('x');
    expect(SecretBox.forConfig({ secretKey: hex, dataDir }).open(sealed)).toBe('x');
  });

  it('creates a private key file in the data directory once, and every later box uses it', () => {
    const first = SecretBox.forConfig({ dataDir });
    const file = join(dataDir, SECRET_KEY_FILE);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8').trim()).toMatch(/^[0-9a-f]{64}$/);
    expect(SecretBox.forConfig({ dataDir }).open(first.seal('kept'))).toBe('kept');
  });

  it('creates the data directory when it does not exist yet', () => {
    const box = SecretBox.forConfig({ dataDir: join(dataDir, 'new', 'dir') });
    expect(box.open(box.seal('x'))).toBe('x');
  });

  it('refuses a key file that holds no key, rather than sealing with a new one', () => {
    writeFileSync(join(dataDir, SECRET_KEY_FILE), 'garbage');
    expect(() => SecretBox.forConfig({ dataDir })).toThrow(/64-hex-digit/);
  });
});
