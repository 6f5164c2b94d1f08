import { rows } from '@app/platform';
import type { EntityManager } from 'typeorm';
import {
  apply,
  AT,
  openProjectionDb,
  projectCreated,
  recorded,
  userCreated,
  type ProjectionDb,
} from '../../../../test/support/projection-db';
import { HOOK_DEFAULTS, type HookRecordSettings, type ProjectHookEvent } from '../domain/project-hook';
import { ProjectHookProjection } from './project-hook.projection';

const LATER = '2026-02-01T00:00:00.000Z';
const projection = new ProjectHookProjection();

const settings = (over: Partial<HookRecordSettings> = {}): HookRecordSettings => ({
  url: 'https://example.com/hook',
  enableSslVerification: HOOK_DEFAULTS.enableSslVerification,
  events: { ...HOOK_DEFAULTS.events },
  ...over,
});
const added = (hookId: number, projectId: number, over: Partial<HookRecordSettings> = {}): ProjectHookEvent => ({
  type: 'ProjectHookAdded',
  data: { hookId, projectId, ...settings(over), at: AT },
});
const delivered = (hookId: number, attempt: number, position: string) =>
  recorded(
    {
      type: 'ProjectHookDelivered' as const,
      data: {
        hookId,
        projectId: 10,
        eventUuid: '7b5f3c1e-0000-4000-8000-000000000001',
        event: 'Push Hook',
        url: 'https://example.com/hook',
        attempt,
        responseStatus: attempt === 1 ? 500 : 200,
        error: attempt === 1 ? 'Internal Server Error' : null,
        durationMs: 12 * attempt,
        at: LATER,
      },
    },
    // Deliveries are appended on streams of their own; the projector reads the hook from the data.
    { streamId: `hook-delivery-${hookId}`, globalPosition: position },
  );

const hooks = (db: EntityManager) =>
  rows<Record<string, unknown>>(
    db,
    `select id, project_id, url, push_events, tag_push_events, issues_events, merge_requests_events, note_events,
            job_events, pipeline_events, wiki_page_events, enable_ssl_verification, created_at
       from project_hooks order by id`,
  );
const deliveries = (db: EntityManager) =>
  rows<Record<string, unknown>>(db, `select * from project_hook_deliveries order by hook_id, position`);

describe('ProjectHookProjection', () => {
  let pg: ProjectionDb;
  beforeAll(async () => {
    pg = await openProjectionDb();
  });
  afterAll(() => pg.drop());

  const withProjects = (test: (db: EntityManager) => Promise<void>) =>
    pg.rollingBack(async (db) => {
      await pg.given(db, userCreated(1), projectCreated(10, 101), projectCreated(11, 101));
      await test(db);
    });

  it('handles every hook event', () => {
    expect([...projection.eventTypes].sort()).toEqual([
      'ProjectHookAdded',
      'ProjectHookDelivered',
      'ProjectHookRemoved',
      'ProjectHookUpdated',
    ]);
  });

  it('adds a hook with its switches, and none for a project that is gone', () =>
    withProjects(async (db) => {
      await apply(
        projection,
        db,
        added(1, 10),
        added(2, 11, {
          url: 'http://*****:*****@example.com/h',
          enableSslVerification: false,
          events: { ...HOOK_DEFAULTS.events, tagPushEvents: true, noteEvents: true },
        }),
        added(3, 99),
      );
      expect(await hooks(db)).toEqual([
        {
          id: 1,
          project_id: 10,
          url: 'https://example.com/hook',
          push_events: true,
          tag_push_events: false,
          issues_events: false,
          merge_requests_events: false,
          note_events: false,
          job_events: false,
          pipeline_events: false,
          wiki_page_events: false,
          enable_ssl_verification: true,
          created_at: new Date(AT),
        },
        {
          id: 2,
          project_id: 11,
          url: 'http://*****:*****@example.com/h',
          push_events: true,
          tag_push_events: true,
          issues_events: false,
          merge_requests_events: false,
          note_events: true,
          job_events: false,
          pipeline_events: false,
          wiki_page_events: false,
          enable_ssl_verification: false,
          created_at: new Date(AT),
        },
      ]);
    }));

  it('replaces every setting on update and removes a hook with its log', () =>
    withProjects(async (db) => {
      const every = { ...HOOK_DEFAULTS.events };
      for (const k of Object.keys(every) as (keyof typeof every)[]) every[k] = !every[k];
      await apply(
        projection,
        db,
        added(1, 10),
        added(2, 10),
        {
          type: 'ProjectHookUpdated',
          data: {
            hookId: 1,
            projectId: 10,
            settings: settings({ url: 'https://example.org/new', enableSslVerification: false, events: every }),
            at: LATER,
          },
        },
        delivered(2, 1, '500'),
        { type: 'ProjectHookRemoved', data: { hookId: 2, projectId: 10, at: LATER } },
      );
      expect(await hooks(db)).toEqual([
        {
          id: 1,
          project_id: 10,
          url: 'https://example.org/new',
          push_events: false,
          tag_push_events: true,
          issues_events: true,
          merge_requests_events: true,
          note_events: true,
          job_events: true,
          pipeline_events: true,
          wiki_page_events: true,
          enable_ssl_verification: false,
          created_at: new Date(AT),
        },
      ]);
      expect(await deliveries(db)).toEqual([]);
    }));

  it('logs each delivery attempt in the order of its global position, and none for a hook that is gone', () =>
    withProjects(async (db) => {
      await apply(projection, db, added(1, 10), delivered(1, 2, '702'), delivered(1, 1, '701'), delivered(9, 1, '703'));
      expect(await deliveries(db)).toEqual([
        {
          position: '701',
          hook_id: 1,
          event_uuid: '7b5f3c1e-0000-4000-8000-000000000001',
          event: 'Push Hook',
          url: 'https://example.com/hook',
          attempt: 1,
          response_status: 500,
          error: 'Internal Server Error',
          duration_ms: 12,
          skipped: false,
          created_at: new Date(LATER),
        },
        {
          position: '702',
          hook_id: 1,
          event_uuid: '7b5f3c1e-0000-4000-8000-000000000001',
          event: 'Push Hook',
          url: 'https://example.com/hook',
          attempt: 2,
          response_status: 200,
          error: null,
          duration_ms: 24,
          skipped: false,
          created_at: new Date(LATER),
        },
      ]);
    }));

  it("loses a project's hooks and their log with the project", () =>
    withProjects(async (db) => {
      await apply(projection, db, added(1, 10), added(2, 11), delivered(1, 1, '801'));
      await pg.given(db, recorded({ type: 'ProjectDeleted', data: { projectId: 10, namespaceId: 101, at: LATER } }));
      expect((await hooks(db)).map((h) => h.id)).toEqual([2]);
      expect(await deliveries(db)).toEqual([]);
    }));
});
