import { rows } from '@app/platform';
import type { EntityManager } from 'typeorm';
import { apply, AT, openProjectionDb, type ProjectionDb } from '../../../../test/support/projection-db';
import { SYSTEM_HOOK_DEFAULTS, type SystemHookEvent } from '../domain/system-hook';
import { SystemHookProjection } from './system-hook.projection';

const projection = new SystemHookProjection();

const added = (hookId: number, over: Partial<SystemHookEvent['data']> = {}): SystemHookEvent => ({
  type: 'SystemHookAdded',
  data: {
    hookId,
    url: 'https://example.com/system',
    enableSslVerification: true,
    events: { ...SYSTEM_HOOK_DEFAULTS.events },
    at: AT,
    ...over,
  } as Extract<SystemHookEvent, { type: 'SystemHookAdded' }>['data'],
});

const hooks = (db: EntityManager) => rows<Record<string, unknown>>(db, `select * from system_hooks order by id`);

describe('SystemHookProjection', () => {
  let pg: ProjectionDb;
  beforeAll(async () => {
    pg = await openProjectionDb();
  });
  afterAll(() => pg.drop());

  it('handles every system hook event', () => {
    expect([...projection.eventTypes].sort()).toEqual(['SystemHookAdded', 'SystemHookRemoved', 'SystemHookUpdated']);
  });

  it('adds hooks with their switches and removes one', () =>
    pg.rollingBack(async (db) => {
      await apply(
        projection,
        db,
        added(1),
        added(2, {
          url: 'http://*****:*****@example.com/h',
          enableSslVerification: false,
          events: { pushEvents: true, tagPushEvents: true, mergeRequestsEvents: true, repositoryUpdateEvents: false },
        }),
        added(3),
        { type: 'SystemHookRemoved', data: { hookId: 3, at: AT } },
      );
      expect(await hooks(db)).toEqual([
        {
          id: 1,
          url: 'https://example.com/system',
          push_events: false,
          tag_push_events: false,
          merge_requests_events: false,
          repository_update_events: true,
          enable_ssl_verification: true,
          created_at: new Date(AT),
        },
        {
          id: 2,
          url: 'http://*****:*****@example.com/h',
          push_events: true,
          tag_push_events: true,
          merge_requests_events: true,
          repository_update_events: false,
          enable_ssl_verification: false,
          created_at: new Date(AT),
        },
      ]);
    }));
});
