import { relocateEvents } from '@app/platform';
import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Delivery attempts move off the hook's stream: the attempts of one delivery (one event sent to one
 * hook) go to `hook-delivery-<hook id>-<event uuid>`, a stream of a few events, so changing a hook no
 * longer folds every attempt it ever made. See docs/architecture.md, "Streams that stay short".
 */
export class DeliveriesOnOwnStreams1763780001900 implements MigrationInterface {
  name = 'DeliveriesOnOwnStreams1763780001900';

  async up(q: QueryRunner): Promise<void> {
    await relocateEvents(
      q,
      `type = 'ProjectHookDelivered' and stream_id like 'hook-%' and stream_id not like 'hook-delivery-%'`,
      `'hook-delivery-' || (data->>'hookId') || '-' || coalesce(data->>'eventUuid', global_position::text)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await relocateEvents(
      q,
      `type = 'ProjectHookDelivered' and stream_id like 'hook-delivery-%'`,
      `'hook-' || (data->>'hookId')`,
    );
  }
}
