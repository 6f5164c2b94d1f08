import { dispatch, handledTypes, type EventHandlers, type Projector, type Recorded } from '@app/platform';
import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { SystemHookEvent } from '../domain/system-hook';

const on: EventHandlers<SystemHookEvent> = {
  SystemHookAdded: async ({ data: d }, db) => {
    await db.query(
      `insert into system_hooks (id, url, push_events, tag_push_events, merge_requests_events, repository_update_events,
             enable_ssl_verification, created_at) values ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [
        d.hookId,
        d.url,
        d.events.pushEvents,
        d.events.tagPushEvents,
        d.events.mergeRequestsEvents,
        d.events.repositoryUpdateEvents,
        d.enableSslVerification,
        d.at,
      ],
    );
  },
  SystemHookUpdated: async ({ data: d }, db) => {
    await db.query(
      `update system_hooks set url = $2, push_events = $3, tag_push_events = $4, merge_requests_events = $5,
             repository_update_events = $6, enable_ssl_verification = $7 where id = $1`,
      [
        d.hookId,
        d.url,
        d.events.pushEvents,
        d.events.tagPushEvents,
        d.events.mergeRequestsEvents,
        d.events.repositoryUpdateEvents,
        d.enableSslVerification,
      ],
    );
  },
  SystemHookRemoved: async ({ data: d }, db) => {
    await db.query(`delete from system_hooks where id = $1`, [d.hookId]);
  },
};

/** `system_hooks`, the administrators' hooks. */
@Injectable()
export class SystemHookProjection implements Projector<SystemHookEvent> {
  readonly name = 'system_hooks';
  readonly tables = ['system_hooks'];
  readonly eventTypes = handledTypes(on);

  apply(e: Recorded<SystemHookEvent>, db: EntityManager): Promise<void> {
    return dispatch(on, e, db);
  }
}
