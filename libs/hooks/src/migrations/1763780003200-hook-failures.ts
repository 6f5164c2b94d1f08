import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `hook_failures`: the consecutive failures of each failing hook and until when it is disabled
 * (GitLab's `recent_failures` and `disabled_until` on `web_hooks`). Changed per delivery attempt, so
 * it is a small table of its own and not events (a hook's stream stays as short as its settings). A
 * hook that never failed, or delivered since, has no row. Keyed by (kind, id): project and system
 * hooks number their ids apart. Not a projection: a rebuild leaves it alone.
 *
 * The delivery log marks the deliveries a disabled hook did not send (`skipped`).
 */
export class HookFailures1763780003200 implements MigrationInterface {
  name = 'HookFailures1763780003200';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      create table hook_failures (
        hook_kind text not null,
        hook_id int not null,
        recent_failures int not null,
        disabled_until timestamptz,
        primary key (hook_kind, hook_id)
      )`);
    await q.query(`alter table project_hook_deliveries add column skipped boolean not null default false`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`alter table project_hook_deliveries drop column skipped`);
    await q.query(`drop table hook_failures`);
  }
}
