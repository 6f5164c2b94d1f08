import type { EntityManager } from 'typeorm';
import {
  actor,
  asDataSource,
  AT,
  openProjectionDb,
  pageOf,
  projectCreated,
  projectMemberAdded,
  recorded,
  userCreated,
  type ProjectionDb,
} from '../../../../test/support/projection-db';
import { ActivityQueries, type ActivityFilters } from './activity.queries';

const LATER = '2026-02-01T00:00:00.000Z';
const B = 'b'.repeat(40);
const DESC: ActivityFilters = { sort: 'desc' };

describe('ActivityQueries', () => {
  let pg: ProjectionDb;
  beforeAll(async () => {
    pg = await openProjectionDb();
  });
  afterAll(() => pg.drop());

  /** User 1 made private project 10 and public project 11 (in their namespace, 101) and pushed to 10. */
  const withHistory = (test: (q: ActivityQueries, db: EntityManager) => Promise<void>) =>
    pg.rollingBack(async (db) => {
      await pg.given(
        db,
        userCreated(1),
        userCreated(2),
        userCreated(3),
        projectCreated(10, 101),
        projectCreated(11, 101, { visibility: 'public' }),
        projectMemberAdded(10, 2, 30),
        recorded({
          type: 'RepositoryPushed' as const,
          data: {
            projectId: 10,
            userId: 1,
            updates: [
              {
                ref: 'refs/heads/main',
                before: '0'.repeat(40),
                after: B,
                checkoutSha: B,
                commits: [],
                totalCommitsCount: 0,
                message: null,
              },
            ],
            defaultBranch: 'main',
            statistics: { commitCount: 1, repositorySize: 1 },
            at: LATER,
          },
        }),
      );
      await test(new ActivityQueries(asDataSource(db)), db);
    });

  it("lists an author's events only in the projects the caller can see, X-Total included", () =>
    withHistory(async (q) => {
      const seen = async (caller: ReturnType<typeof actor> | undefined) => {
        const { rows, total } = await q.list({ authorId: 1 }, caller, DESC, pageOf());
        expect(rows).toHaveLength(total);
        return rows.map((r) => [r.project_id, r.action_name]);
      };
      const all = [
        [10, 'pushed new'],
        [11, 'created'],
        [10, 'created'],
      ];
      expect(await seen(actor(1))).toEqual(all);
      expect(await seen(actor(2))).toEqual(all); // a developer of project 10
      expect(await seen(actor(3, { isAdmin: true }))).toEqual(all);
      expect(await seen(actor(3))).toEqual([[11, 'created']]);
      expect(await seen(undefined)).toEqual([[11, 'created']]);
    }));

  it("lists a project's events with GitLab's filters, sort and pages", () =>
    withHistory(async (q) => {
      const list = async (f: Partial<ActivityFilters>, page = pageOf()) =>
        q.list({ projectId: 10 }, actor(1), { ...DESC, ...f }, page);
      expect((await list({})).rows.map((r) => r.action_name)).toEqual(['pushed new', 'created']);
      expect((await list({ sort: 'asc' })).rows.map((r) => r.action_name)).toEqual(['created', 'pushed new']);
      expect((await list({ action: 'pushed' })).total).toBe(1);
      expect((await list({ targetType: 'Issue' })).total).toBe(0);
      // before: earlier than that day's start; after: later than that day's end (UTC).
      expect((await list({ before: AT.slice(0, 10) })).total).toBe(0);
      expect((await list({ before: '2026-01-02' })).total).toBe(1);
      expect((await list({ after: '2026-01-01' })).rows.map((r) => r.action_name)).toEqual(['pushed new']);
      expect((await list({ after: '2025-12-31' })).total).toBe(2);
      const second = await list({}, pageOf(2, 1));
      expect([second.total, second.rows.map((r) => r.action_name)]).toEqual([2, ['created']]);
      expect((await list({})).rows[0]).toMatchObject({
        author_id: 1,
        author_username: 'user1',
        push_data: { action: 'created', ref: 'main', commit_from: null, commit_to: B },
      });
    }));
});
