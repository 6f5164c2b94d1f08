import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Release notes of tags: GitLab's `releases` (a project, a tag name, a description), one row per tag. */
export class Releases1763780001600 implements MigrationInterface {
  name = 'Releases1763780001600';

  async up(q: QueryRunner): Promise<void> {
    // The primary key serves the tags answers' look-up (a project's releases for the tags of one page).
    // A project's deletion takes its releases by the cascade, as GitLab's `has_many :releases, dependent: :destroy`.
    await q.query(`
      create table releases (
        project_id int not null references projects (id) on delete cascade,
        tag text not null,
        description text not null,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        primary key (project_id, tag)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`drop table releases`);
  }
}
