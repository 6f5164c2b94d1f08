import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Pushes between git's pre-receive and their `RepositoryPushed`: written before any ref moves, removed
 * in the transaction that records the push. Not a read model (no event makes it; a projection rebuild
 * leaves it alone) and no foreign key to `projects`, which a rebuild empties: the reconciler drops the
 * rows of projects that are gone.
 */
export class PendingPushes1763780001500 implements MigrationInterface {
  name = 'PendingPushes1763780001500';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      create table pending_pushes (
        id bigserial primary key,
        project_id int not null,
        updates jsonb not null,
        pusher jsonb not null,
        created_at timestamptz not null default now(),
        claimed_until timestamptz
      )`);
    await q.query(`create index pending_pushes_created_idx on pending_pushes (created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`drop table pending_pushes`);
  }
}
