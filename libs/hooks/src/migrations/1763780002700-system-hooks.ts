import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * System hooks (`/hooks`): the read model `system_hooks` (ids from `hook_id_seq`, shared with project
 * hooks) and `system_hook_secrets`, each hook's token and URL credentials sealed, written by the
 * commands beside the events (not a projection: a rebuild leaves it).
 */
export class SystemHooks1763780002700 implements MigrationInterface {
  name = 'SystemHooks1763780002700';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      create table system_hooks (
        id int primary key,
        url text not null,
        push_events boolean not null,
        tag_push_events boolean not null,
        merge_requests_events boolean not null,
        repository_update_events boolean not null,
        enable_ssl_verification boolean not null,
        created_at timestamptz not null
      )`);
    await q.query(`
      create table system_hook_secrets (
        hook_id int primary key,
        sealed text not null
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`drop table system_hook_secrets`);
    await q.query(`drop table system_hooks`);
  }
}
