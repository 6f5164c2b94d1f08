import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Hooks1763780000500 implements MigrationInterface {
  name = 'Hooks1763780000500';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`create sequence hook_id_seq`);
    await q.query(`
      create table project_hooks (
        id int primary key,
        project_id int not null references projects (id) on delete cascade,
        url text not null,
        token text,
        push_events boolean not null,
        tag_push_events boolean not null,
        issues_events boolean not null,
        merge_requests_events boolean not null,
        note_events boolean not null,
        job_events boolean not null,
        pipeline_events boolean not null,
        wiki_page_events boolean not null,
        enable_ssl_verification boolean not null,
        created_at timestamptz not null
      )`);
    await q.query(`create index project_hooks_project_idx on project_hooks (project_id, id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`drop table project_hooks`);
    await q.query(`drop sequence hook_id_seq`);
  }
}
