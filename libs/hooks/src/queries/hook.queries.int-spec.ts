import { NotFound } from '@app/platform';
import type { EntityManager } from 'typeorm';
import {
  asDataSource,
  AT,
  openProjectionDb,
  pageOf,
  projectCreated,
  recorded,
  userCreated,
  type ProjectionDb,
} from '../../../../test/support/projection-db';
import { HOOK_DEFAULTS, type HookRecordSettings, type ProjectHookEvent } from '../domain/project-hook';
import { HookQueries } from './hook.queries';

const LATER = '2026-02-01T00:00:00.000Z';
const ALL = pageOf(1, 100);

const added = (hookId: number, projectId: number, over: Partial<HookRecordSettings> = {}) =>
  recorded<ProjectHookEvent>(
    {
      type: 'ProjectHookAdded',
      data: {
        hookId,
        projectId,
        url: `https://example.com/hook${hookId}`,
        enableSslVerification: HOOK_DEFAULTS.enableSslVerification,
        events: { ...HOOK_DEFAULTS.events },
        ...over,
        at: AT,
      },
    },
    { streamId: `hook-${hookId}` },
  );
const events = (over: Partial<HookRecordSettings['events']>) => ({ ...HOOK_DEFAULTS.events, ...over });
/** Attempt `attempt` of a delivery to hook `hookId`, stored at global position `position`. */
/** One attempt in the delivery log, as the webhook worker writes it (a plain insert, no event). */
const logged = (
  db: EntityManager,
  hookId: number,
  attempt: number,
  id: string,
  eventUuid = '7b5f3c1e-0000-4000-8000-000000000001',
) =>
  db.query(
    `insert into hook_delivery_log (id, hook_id, event_uuid, event, url, attempt, response_status, error, duration_ms, created_at)
       values ($1, $2, $3, 'Push Hook', $4, $5, $6, $7, $8, $9)`,
    [
      id,
      hookId,
      eventUuid,
      `https://example.com/hook${hookId}`,
      attempt,
      attempt === 1 ? 500 : 200,
      attempt === 1 ? 'Internal Server Error' : null,
      12 * attempt,
      LATER,
    ],
  );

describe('HookQueries', () => {
  let pg: ProjectionDb;
  beforeAll(async () => {
    pg = await openProjectionDb();
  });
  afterAll(() => pg.drop());

  /**
   * Project 10 has hook 1 (pushes, the default), 2 (tag pushes only, no certificate check), 3
   * (issues only) and 5 (pushes, removed); project 11 has hook 4 (pushes and tag pushes).
   */
  const withHooks = (test: (q: HookQueries, db: EntityManager) => Promise<void>) =>
    pg.rollingBack(async (db) => {
      await pg.given(
        db,
        userCreated(1),
        projectCreated(10, 101),
        projectCreated(11, 101),
        added(1, 10),
        added(2, 10, {
          enableSslVerification: false,
          events: events({ pushEvents: false, tagPushEvents: true }),
        }),
        added(3, 10, { events: events({ pushEvents: false, issuesEvents: true }) }),
        added(4, 11, { events: events({ tagPushEvents: true }) }),
        added(5, 10),
        recorded<ProjectHookEvent>({ type: 'ProjectHookRemoved', data: { hookId: 5, projectId: 10, at: LATER } }),
      );
      await test(new HookQueries(asDataSource(db)), db);
    });

  it("reads a project's hook with every switch, and 404s another project's or a removed one", () =>
    withHooks(async (q) => {
      expect(await q.hook(10, 2)).toEqual({
        id: 2,
        url: 'https://example.com/hook2',
        project_id: 10,
        push_events: false,
        tag_push_events: true,
        issues_events: false,
        merge_requests_events: false,
        note_events: false,
        job_events: false,
        pipeline_events: false,
        wiki_page_events: false,
        enable_ssl_verification: false,
        push_events_branch_filter: null,
        created_at: new Date(AT),
        recent_failures: 0,
        disabled_until: null,
      });
      await expect(q.hook(11, 2)).rejects.toThrow(NotFound);
      await expect(q.hook(10, 4)).rejects.toThrow(NotFound);
      await expect(q.hook(10, 5)).rejects.toThrow(NotFound);
      expect((await q.findForSystem(4))?.project_id).toBe(11);
      expect(await q.findForSystem(5)).toBeUndefined();
    }));

  it("lists a project's hooks by id, counted and paged", () =>
    withHooks(async (q) => {
      const all = await q.hooks(10, ALL);
      expect([all.total, all.rows.map((h) => h.id)]).toEqual([3, [1, 2, 3]]);
      const second = await q.hooks(10, pageOf(2, 2));
      expect([second.total, second.rows.map((h) => h.id)]).toEqual([3, [3]]);
      expect(await q.hooks(12, ALL)).toEqual({ rows: [], total: 0 });
    }));

  it("fans a push out to the project's hooks that hear pushes or tag pushes only", () =>
    withHooks(async (q) => {
      expect(await q.pushTargets(10)).toEqual([
        {
          id: 1,
          url: 'https://example.com/hook1',
          enable_ssl_verification: true,
          push_events: true,
          tag_push_events: false,
          push_events_branch_filter: null,
        },
        {
          id: 2,
          url: 'https://example.com/hook2',
          enable_ssl_verification: false,
          push_events: false,
          tag_push_events: true,
          push_events_branch_filter: null,
        },
      ]);
      expect((await q.pushTargets(11)).map((h) => h.id)).toEqual([4]);
      expect(await q.pushTargets(12)).toEqual([]);
    }));

  it('finds the target of a queued delivery while the hook exists on its project', () =>
    withHooks(async (q, db) => {
      expect(await q.deliveryTarget(3, 10)).toEqual({
        id: 3,
        url: 'https://example.com/hook3',
        enable_ssl_verification: true,
        push_events: false,
        tag_push_events: false,
        push_events_branch_filter: null,
      });
      expect(await q.deliveryTarget(3, 11)).toBeUndefined();
      expect(await q.deliveryTarget(5, 10)).toBeUndefined();
      await pg.given(
        db,
        recorded<ProjectHookEvent>({
          type: 'ProjectHookUpdated',
          data: {
            hookId: 3,
            projectId: 10,
            settings: { url: 'https://example.org/moved', enableSslVerification: false, events: events({}) },
            at: LATER,
          },
        }),
      );
      expect(await q.deliveryTarget(3, 10)).toMatchObject({ url: 'https://example.org/moved', push_events: true });
    }));

  it("lists a hook's delivery attempts newest first by id (numerically), counted and paged", () =>
    withHooks(async (q, db) => {
      const other = '7b5f3c1e-0000-4000-8000-000000000002';
      await logged(db, 1, 1, '9');
      await logged(db, 1, 2, '10');
      await logged(db, 1, 1, '11', other);
      await logged(db, 2, 1, '12');
      const log = await q.deliveries(1, ALL);
      expect(log.total).toBe(3);
      expect(log.rows.map((d) => [d.id, d.event_uuid.slice(-1), d.attempt])).toEqual([
        ['11', '2', 1],
        ['10', '1', 2],
        ['9', '1', 1],
      ]);
      expect(log.rows[1]).toEqual({
        id: '10',
        event_uuid: '7b5f3c1e-0000-4000-8000-000000000001',
        event: 'Push Hook',
        url: 'https://example.com/hook1',
        attempt: 2,
        response_status: 200,
        error: null,
        duration_ms: 24,
        skipped: false,
        created_at: new Date(LATER),
        request_headers: {},
        request_data: null,
        response_headers: {},
        response_body: '',
      });
      const page = await q.deliveries(1, pageOf(2, 2));
      expect([page.total, page.rows.map((d) => d.id)]).toEqual([3, ['9']]);
      expect((await q.deliveries(2, ALL)).rows.map((d) => [d.id, d.response_status, d.error])).toEqual([
        ['12', 500, 'Internal Server Error'],
      ]);
      expect(await q.deliveries(3, ALL)).toEqual({ rows: [], total: 0 });
    }));
});
