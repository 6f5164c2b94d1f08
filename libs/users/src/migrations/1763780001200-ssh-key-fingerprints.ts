import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Git over SSH finds the offered key by its SHA256 fingerprint on every connection: one unique
 * index (two keys with one SHA256 fingerprint are one key, which the MD5 index already forbids).
 */
export class SshKeyFingerprints1763780001200 implements MigrationInterface {
  name = 'SshKeyFingerprints1763780001200';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`create unique index ssh_keys_fingerprint_sha256_key on ssh_keys (fingerprint_sha256)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`drop index ssh_keys_fingerprint_sha256_key`);
  }
}
