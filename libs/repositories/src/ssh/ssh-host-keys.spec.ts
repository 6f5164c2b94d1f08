import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { utils } from 'ssh2';
import { loadHostKeys, readableKeyPair } from './ssh-host-keys';

describe('SSH host keys', () => {
  it('never writes a key ssh2 cannot read back: a malformed one is made again', () => {
    const good = utils.generateKeyPairSync('ed25519');
    const made = [{ private: '-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----\n' }, good];
    let calls = 0;
    const pair = readableKeyPair(() => made[calls++]);
    expect([calls, pair.private]).toEqual([2, good.private]);
  });

  it('makes the three keys once, and reads the same ones on the next start', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lode-hostkeys-'));
    try {
      const first = await loadHostKeys(dir);
      expect(first.map((k) => k.type)).toEqual(['ssh-ed25519', 'ecdsa-sha2-nistp256', 'ssh-rsa']);
      const again = await loadHostKeys(dir);
      expect(again.map((k) => k.fingerprint)).toEqual(first.map((k) => k.fingerprint));
      expect((await readFile(join(dir, 'ssh_host_ed25519_key.pub'), 'utf8')).startsWith('ssh-ed25519 ')).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
