import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `hook_delivery_log`: a project hook's delivery log in later GitLab's shape (17.x `web_hook_logs`),
 * one row per attempt, written by the webhook worker (and the API's test and resend) with a plain
 * INSERT: an append-only table owned by hooks, not events folded per attempt, so a hook's thousandth
 * delivery costs what its first did. Not a projection: a rebuild leaves it alone. Rows older than
 * LODE_WEBHOOK_LOG_DAYS are removed by a periodic job (the `created_at` index). No foreign key to
 * `project_hooks`, a read model a rebuild truncates: a removed hook's rows are deleted with it (the
 * command), and those of hooks that went with their project by the erase-gone job.
 *
 * The rows `project_hook_deliveries` holds (projected from the `ProjectHookDelivered` events written
 * before) are copied in, keeping their ids (the events' global positions); the sequence starts past
 * them, so ids keep growing with time. Those old entries have no headers, payload or answer.
 */
export class HookDeliveryLog1763780003400 implements MigrationInterface {
  name = 'HookDeliveryLog1763780003400';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      create table hook_delivery_log (
        id bigserial primary key,
        hook_id int not null,
        event_uuid uuid not null,
        event text not null,
        url text not null,
        attempt int not null,
        request_headers jsonb not null default '{}',
        request_data jsonb,
        response_headers jsonb not null default '{}',
        response_body text not null default '',
        response_status int,
        error text,
        duration_ms int not null,
        skipped boolean not null default false,
        created_at timestamptz not null default now()
      )`);
    await q.query(`create index hook_delivery_log_hook_idx on hook_delivery_log (hook_id, id desc)`);
    await q.query(`create index hook_delivery_log_created_idx on hook_delivery_log (created_at)`);
    await q.query(`
      insert into hook_delivery_log (id, hook_id, event_uuid, event, url, attempt, response_status, error, duration_ms, skipped, created_at)
        select position, hook_id, event_uuid, event, url, attempt, response_status, error, duration_ms, skipped, created_at
          from project_hook_deliveries`);
    await q.query(
      `select setval('hook_delivery_log_id_seq', greatest((select max(id) from hook_delivery_log), 1), (select count(*) > 0 from hook_delivery_log))`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`drop table hook_delivery_log`);
  }
}
