import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Protected tags: one row per rule (a tag name or a wildcard) with its create level, GitLab's
 * `protected_tags` with its single create access level folded in.
 */
export class ProtectedTags1763780002500 implements MigrationInterface {
  name = 'ProtectedTags1763780002500';

  async up(q: QueryRunner): Promise<void> {
    // The primary key serves both look-ups: a project's rules (the gate, the list) and one rule by name.
    // `position` is the creating event's global position: GitLab lists rules in the order they were made.
    await q.query(`
      create table protected_tags (
        project_id int not null references projects (id) on delete cascade,
        name text not null,
        create_access_level int not null,
        position bigint not null,
        created_at timestamptz not null,
        primary key (project_id, name)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`drop table protected_tags`);
  }
}
