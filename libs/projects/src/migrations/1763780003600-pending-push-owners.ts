import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A written-down push names the process that is recording it (`o<pid>-<start>-<host>`, see
 * @app/platform's process owners): after a crash, a start on the same machine records the pushes
 * of its dead predecessor at once, instead of after LODE_PUSH_RECONCILE_AFTER. Older rows have none.
 */
export class PendingPushOwners1763780003600 implements MigrationInterface {
  name = 'PendingPushOwners1763780003600';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`alter table pending_pushes add column owner text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`alter table pending_pushes drop column owner`);
  }
}
