import type { MigrationInterface, QueryRunner } from 'typeorm';

/** A project's avatar: the stored file name under `uploads/-/system/project/avatar/<id>/`, null without one. */
export class ProjectAvatars1763780000800 implements MigrationInterface {
  name = 'ProjectAvatars1763780000800';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`alter table projects add column avatar text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`alter table projects drop column avatar`);
  }
}
