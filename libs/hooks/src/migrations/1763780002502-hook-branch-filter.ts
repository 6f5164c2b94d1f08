import type { MigrationInterface, QueryRunner } from 'typeorm';

/** GitLab 11.3's `push_events_branch_filter` on project hooks: null (every branch) for hooks made before it. */
export class HookBranchFilter1763780002502 implements MigrationInterface {
  name = 'HookBranchFilter1763780002502';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`alter table project_hooks add column push_events_branch_filter text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`alter table project_hooks drop column push_events_branch_filter`);
  }
}
