import {
  asDataSource,
  AT,
  groupCreated,
  openProjectionDb,
  projectCreated,
  recorded,
  type ProjectionDb,
} from '../../../../test/support/projection-db';
import { ProjectSharingQueries } from './project-sharing.queries';

const PAST = '2000-01-01';
const shared = (projectId: number, groupId: number, groupAccess: number, expiresAt: string | null = null) =>
  recorded({
    type: 'ProjectSharedWithGroup',
    data: { projectId, linkId: projectId * 100 + groupId, groupId, groupAccess, expiresAt, at: AT },
  });

/** Group 50 holds projects 10, 21 and 22; 21 is shared with group 60 as reporter, 22 as developer until a past day. */
const world = [
  groupCreated(50),
  groupCreated(60),
  projectCreated(10, 50),
  projectCreated(21, 50),
  projectCreated(22, 50),
  shared(21, 60, 20),
  shared(22, 60, 30, PAST),
];

describe('ProjectSharingQueries', () => {
  let pg: ProjectionDb;
  beforeAll(async () => {
    pg = await openProjectionDb();
  });
  afterAll(() => pg.drop());

  const inWorld = (test: (q: ProjectSharingQueries) => Promise<void>) =>
    pg.rollingBack(async (db) => {
      await pg.given(db, ...world);
      await test(new ProjectSharingQueries(asDataSource(db)));
    });

  it('reads the shares of many projects in one statement, expired ones included (the entity lists them)', () =>
    inWorld(async (q) => {
      expect(await q.sharedWith([21, 22, 10])).toEqual(
        new Map([
          [21, [{ project_id: 21, group_id: 60, group_name: 'Group 60', group_access_level: 20 }]],
          [22, [{ project_id: 22, group_id: 60, group_name: 'Group 60', group_access_level: 30 }]],
        ]),
      );
      expect(await q.sharedWith([])).toEqual(new Map());
    }));

  it('reads one share as POST /projects/:id/share answers it, with its expiry as a day', () =>
    inWorld(async (q) => {
      expect(await q.groupLink(22, 60)).toEqual({
        id: 2260,
        project_id: 22,
        group_id: 60,
        group_access: 30,
        expires_at: PAST,
      });
      expect(await q.groupLink(21, 60)).toMatchObject({ expires_at: null });
      expect(await q.groupLink(22, 50)).toBeUndefined();
    }));
});
