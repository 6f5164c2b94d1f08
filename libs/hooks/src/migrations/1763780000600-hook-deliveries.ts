import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Each hook's delivery log (projected from `ProjectHookDelivered`). */
export class HookDeliveries1763780000600 implements MigrationInterface {
  name = 'HookDeliveries1763780000600';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      create table project_hook_deliveries (
        position bigint primary key,
        hook_id int not null references project_hooks (id) on delete cascade,
        event_uuid uuid not null,
        event text not null,
        url text not null,
        attempt int not null,
        response_status int,
        error text,
        duration_ms int not null,
        created_at timestamptz not null
      )`);
    await q.query(`create index project_hook_deliveries_hook_idx on project_hook_deliveries (hook_id, position desc)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`drop table project_hook_deliveries`);
  }
}
