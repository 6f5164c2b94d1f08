import { relocateEvents } from '@app/platform';
import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Pushes move off the project's stream. Every `RepositoryPushed` that did not give the project its
 * default branch goes to a stream of its own, `push-<id>` (ids from `push_id_seq`, in the order the
 * pushes happened), so a project command no longer folds the project's whole push history. A push
 * that named the default branch stays where it is: it changed the project, and the project's fold
 * needs it. See docs/architecture.md, "Streams that stay short".
 */
export class PushesOnOwnStreams1763780001800 implements MigrationInterface {
  name = 'PushesOnOwnStreams1763780001800';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`create sequence push_id_seq`);
    // The ids follow the global order: a subquery sorted by position feeds nextval row by row.
    await q.query(`
      create temporary table push_ids as
        select global_position, nextval('push_id_seq') as push_id
          from (select global_position from events
                 where type = 'RepositoryPushed' and stream_id like 'project-%'
                   and data->>'defaultBranch' is null
                 order by global_position) pushes`);
    await relocateEvents(
      q,
      `global_position in (select global_position from push_ids)`,
      `'push-' || (select push_id from push_ids p where p.global_position = events.global_position)`,
    );
    await q.query(`drop table push_ids`);
  }

  async down(q: QueryRunner): Promise<void> {
    await relocateEvents(
      q,
      `type = 'RepositoryPushed' and stream_id like 'push-%'`,
      `'project-' || (data->>'projectId')`,
    );
    await q.query(`drop sequence push_id_seq`);
  }
}
