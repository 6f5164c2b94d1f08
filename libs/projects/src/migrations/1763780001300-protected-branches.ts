import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Protected branches: one row per rule (a branch name or a wildcard) with its push and merge levels,
 * GitLab's `protected_branches` with its single push and merge access level folded in.
 */
export class ProtectedBranches1763780001300 implements MigrationInterface {
  name = 'ProtectedBranches1763780001300';

  async up(q: QueryRunner): Promise<void> {
    // The primary key serves both look-ups: a project's rules (the gate, the branch list) and one rule by name.
    // `position` is the creating event's global position: GitLab lists rules in the order they were made.
    await q.query(`
      create table protected_branches (
        project_id int not null references projects (id) on delete cascade,
        name text not null,
        push_access_level int not null,
        merge_access_level int not null,
        position bigint not null,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        primary key (project_id, name)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`drop table protected_branches`);
  }
}
