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
import type { ProjectEvent } from '../projects/project';
import { ActivityProjection } from './activity.projection';

const LATER = '2026-02-01T00:00:00.000Z';
const ZERO = '0'.repeat(40);
const B = 'b'.repeat(40);
const projection = new ActivityProjection();
const events = (db: EntityManager) =>
  rows<{ seq: number; project_id: number; author_id: number; action: string; action_name: string; ref: string | null }>(
    db,
    `select seq, project_id, author_id, action, action_name, push_data->>'ref' as ref
       from activity_events order by position, seq`,
  );

const counts = (db: EntityManager) =>
  rows<{ author_id: number; project_id: number; action: string; events: string }>(
    db,
    `select author_id, project_id, action, events from activity_event_counts order by author_id, project_id, action`,
  );

describe('ActivityProjection', () => {
  let pg: ProjectionDb;
  beforeAll(async () => {
    pg = await openProjectionDb();
  });
  afterAll(() => pg.drop());

  it('handles project creation, forks, members joining and leaving, and pushes', () => {
    expect([...projection.eventTypes].sort()).toEqual([
      'ProjectCreated',
      'ProjectForked',
      'ProjectMemberAdded',
      'ProjectMemberRemoved',
      'RepositoryPushed',
    ]);
  });

  it('writes created (imported with an import URL), joined and left, skipping the owner added with the project', () =>
    pg.rollingBack(async (db) => {
      // The registry's order, as the app's: the project's row first, then the events (given applies every projector).
      await pg.given(
        db,
        userCreated(1),
        userCreated(2),
        projectCreated(10, 101),
        recorded<ProjectEvent>({
          type: 'ProjectMemberAdded',
          data: { projectId: 10, userId: 1, accessLevel: 40, expiresAt: null, at: AT },
        }),
        projectCreated(11, 101, { importUrl: 'https://example.com/r.git' }),
        recorded<ProjectEvent>({
          type: 'ProjectMemberAdded',
          data: { projectId: 10, userId: 2, accessLevel: 30, expiresAt: null, at: LATER },
        }),
        recorded<ProjectEvent>({ type: 'ProjectMemberRemoved', data: { projectId: 10, userId: 2, at: LATER } }),
      );
      expect(await events(db)).toEqual([
        { seq: 0, project_id: 10, author_id: 1, action: 'created', action_name: 'created', ref: null },
        { seq: 0, project_id: 11, author_id: 1, action: 'created', action_name: 'imported', ref: null },
        { seq: 0, project_id: 10, author_id: 2, action: 'joined', action_name: 'joined', ref: null },
        { seq: 0, project_id: 10, author_id: 2, action: 'left', action_name: 'left', ref: null },
      ]);
    }));

  it("knows the creator's membership in the creation's own append without a read, and reads for one after it", () =>
    pg.rollingBack(async (db) => {
      await pg.given(db, userCreated(1), userCreated(2));
      const lookups: string[] = [];
      const watched = new Proxy(db, {
        get: (target, key) =>
          key === 'query'
            ? (sql: string, params?: unknown[]) => {
                if (/action = 'created'/.test(sql)) lookups.push(sql);
                return target.query(sql, params);
              }
            : Reflect.get(target, key, target),
      });
      const member = (projectId: number, userId: number, at: string) =>
        recorded<ProjectEvent>({
          type: 'ProjectMemberAdded',
          data: { projectId, userId, accessLevel: 40, expiresAt: null, at },
        });
      // The creation and its creator's membership as one command appends them.
      await pg.givenAppend(watched, projectCreated(10, 101), member(10, 1, AT));
      expect(lookups).toHaveLength(0);
      // Another append at the creation's instant (an import's owner): the table answers; a later one joins.
      await pg.givenAppend(watched, member(10, 1, AT));
      await pg.givenAppend(watched, member(10, 2, LATER));
      expect(lookups).toHaveLength(2);
      expect((await events(db)).map((e) => [e.author_id, e.action])).toEqual([
        [1, 'created'],
        [2, 'joined'],
      ]);
    }));

  it('writes one event per branch or tag update of a push, once, and loses them with the project', () =>
    pg.rollingBack(async (db) => {
      await pg.given(db, userCreated(1), projectCreated(10, 101));
      const pushed = (projectId: number) =>
        recorded({
          type: 'RepositoryPushed' as const,
          data: {
            projectId,
            userId: 1,
            updates: ['refs/heads/main', 'refs/notes/x', 'refs/tags/v1'].map((ref) => ({
              ref,
              before: ZERO,
              after: B,
              checkoutSha: B,
              commits: [],
              totalCommitsCount: 0,
              message: null,
            })),
            defaultBranch: null,
            statistics: { commitCount: 1, repositorySize: 1 },
            at: LATER,
          },
        });
      const push = pushed(10);
      await apply(projection, db, push, pushed(99));
      const written = (await events(db)).filter((e) => e.action === 'pushed');
      expect(written).toEqual([
        { seq: 0, project_id: 10, author_id: 1, action: 'pushed', action_name: 'pushed new', ref: 'main' },
        { seq: 2, project_id: 10, author_id: 1, action: 'pushed', action_name: 'pushed new', ref: 'v1' },
      ]);
      // The same stored event again (keyed by its position) adds nothing, to the rows or their counts.
      await apply(projection, db, push);
      expect((await events(db)).filter((e) => e.action === 'pushed')).toEqual(written);
      expect(await counts(db)).toEqual([
        { author_id: 1, project_id: 10, action: 'created', events: '1' },
        { author_id: 1, project_id: 10, action: 'pushed', events: '2' },
      ]);
      // A project's deletion takes its events by the cascade.
      await db.query(`delete from projects where id = 10`);
      expect(await events(db)).toEqual([]);
      expect(await counts(db)).toEqual([]);
    }));
});
