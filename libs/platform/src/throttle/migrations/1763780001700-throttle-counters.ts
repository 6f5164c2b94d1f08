import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The throttle's counters when there is no Redis (REDIS_URL unset): one row a key with its count
 * and the moment its window ends. Unlogged: they are worth nothing after a crash, and skipping the
 * write-ahead log keeps a counted request cheap.
 */
export class ThrottleCounters1763780001700 implements MigrationInterface {
  name = 'ThrottleCounters1763780001700';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      create unlogged table throttle_counters (
        key text primary key,
        count int not null,
        expires_at timestamptz not null
      )`);
    await q.query(`create index throttle_counters_expiry_idx on throttle_counters (expires_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`drop table throttle_counters`);
  }
}
