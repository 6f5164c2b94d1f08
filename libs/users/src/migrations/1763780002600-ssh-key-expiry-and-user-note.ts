import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An SSH key's expiry (GitLab 12.9; null: never, which is every older key) and a user's `note`, the
 * administrators' free text about the account (GitLab 12.x; null for every older user).
 */
export class SshKeyExpiryAndUserNote1763780002600 implements MigrationInterface {
  name = 'SshKeyExpiryAndUserNote1763780002600';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`alter table ssh_keys add column expires_at timestamptz`);
    await q.query(`alter table users add column note text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`alter table users drop column note`);
    await q.query(`alter table ssh_keys drop column expires_at`);
  }
}
