import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The event store and the outbox: the source of truth and the jobs that must follow it. */
export class EventStore1763780000000 implements MigrationInterface {
  name = 'EventStore1763780000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      create table events (
        global_position bigserial primary key,
        stream_id text not null,
        stream_version int not null,
        type text not null,
        data jsonb not null,
        metadata jsonb not null default '{}',
        recorded_at timestamptz not null default clock_timestamp(),
        transaction_id xid8 not null default pg_current_xact_id(),
        constraint events_stream_version_key unique (stream_id, stream_version)
      )`);
    await q.query(`
      create table outbox (
        id bigserial primary key,
        global_position bigint not null,
        queue text not null,
        name text not null,
        job_id text not null,
        data jsonb not null,
        options jsonb not null default '{}',
        created_at timestamptz not null default clock_timestamp(),
        dispatched_at timestamptz,
        attempts int not null default 0,
        last_error text,
        constraint outbox_job_id_key unique (job_id)
      )`);
    await q.query(`create index outbox_pending_idx on outbox (id) where dispatched_at is null`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`drop table outbox`);
    await q.query(`drop table events`);
  }
}
