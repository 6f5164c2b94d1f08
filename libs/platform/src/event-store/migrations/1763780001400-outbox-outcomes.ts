import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An outbox row is done when its job has finished, not when Redis took it (a Redis that loses its
 * data loses the jobs it held): `finished_at` and `outcome` are written by the processor, in
 * PostgreSQL. `dispatch_key` is random per row and part of the BullMQ job id, so a job id is never
 * reused: not after a restored database writes the same logical job again beside a Redis that still
 * remembers it as completed, nor when a row is sent again. A row written by a job (a push's
 * deliveries, by its fan-out) has no event position of its own.
 */
export class OutboxOutcomes1763780001400 implements MigrationInterface {
  name = 'OutboxOutcomes1763780001400';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      alter table outbox
        add column dispatch_key uuid not null default gen_random_uuid(),
        add column finished_at timestamptz,
        add column outcome text,
        add column redispatches int not null default 0,
        alter column global_position drop not null`);
    // What was relayed before this version was marked done at relay time; whether it finished is unknown.
    await q.query(`update outbox set finished_at = dispatched_at, outcome = 'relayed' where dispatched_at is not null`);
    await q.query(`create unique index outbox_dispatch_key_idx on outbox (dispatch_key)`);
    await q.query(
      `create index outbox_unfinished_idx on outbox (dispatched_at) where finished_at is null and dispatched_at is not null`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`drop index outbox_unfinished_idx`);
    await q.query(`drop index outbox_dispatch_key_idx`);
    await q.query(`delete from outbox where global_position is null`);
    await q.query(`
      alter table outbox
        drop column dispatch_key, drop column finished_at, drop column outcome, drop column redispatches,
        alter column global_position set not null`);
  }
}
