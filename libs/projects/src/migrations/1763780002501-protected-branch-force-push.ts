import type { MigrationInterface, QueryRunner } from 'typeorm';

/** GitLab 13.x's `allow_force_push` on protected branches: false for every rule made before it. */
export class ProtectedBranchForcePush1763780002501 implements MigrationInterface {
  name = 'ProtectedBranchForcePush1763780002501';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`alter table protected_branches add column allow_force_push boolean not null default false`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`alter table protected_branches drop column allow_force_push`);
  }
}
