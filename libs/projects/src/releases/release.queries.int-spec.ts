import type { EntityManager } from 'typeorm';
import {
  asDataSource,
  openProjectionDb,
  projectCreated,
  recorded,
  userCreated,
  type ProjectionDb,
} from '../../../../test/support/projection-db';
import type { ProjectEvent } from '../projects/project';
import { ReleaseQueries } from './release.queries';

const LATER = '2026-02-01T00:00:00.000Z';

const event = (e: ProjectEvent) => recorded(e);
const release = (projectId: number, tagName: string, description: string) =>
  event({ type: 'ProjectReleaseCreated', data: { projectId, tagName, description, at: LATER } });

describe('ReleaseQueries', () => {
  let pg: ProjectionDb;
  beforeAll(async () => {
    pg = await openProjectionDb();
  });
  afterAll(() => pg.drop());

  const withReleases = (test: (q: ReleaseQueries, db: EntityManager) => Promise<void>) =>
    pg.rollingBack(async (db) => {
      await pg.given(
        db,
        userCreated(1),
        projectCreated(10, 101),
        projectCreated(11, 101),
        release(10, 'v1.0', 'first'),
        release(10, 'v2.0', 'second'),
        release(11, 'v1.0', 'elsewhere'),
      );
      await test(new ReleaseQueries(asDataSource(db)), db);
    });

  it('reads the releases of the asked tags of one project, by tag name', () =>
    withReleases(async (q, db) => {
      await pg.given(
        db,
        event({
          type: 'ProjectReleaseUpdated',
          data: { projectId: 10, tagName: 'v2.0', description: 'fixed', at: LATER },
        }),
      );
      expect(await q.forTags(10, ['v1.0', 'v2.0', 'v3.0', 'V1.0'])).toEqual(
        new Map([
          ['v1.0', { tagName: 'v1.0', description: 'first' }],
          ['v2.0', { tagName: 'v2.0', description: 'fixed' }],
        ]),
      );
      expect(await q.forTags(11, ['v1.0', 'v2.0'])).toEqual(
        new Map([['v1.0', { tagName: 'v1.0', description: 'elsewhere' }]]),
      );
      expect(await q.forTags(10, [])).toEqual(new Map());
    }));

  it('forgets a removed release', () =>
    withReleases(async (q, db) => {
      await pg.given(db, event({ type: 'ProjectReleaseRemoved', data: { projectId: 10, tagName: 'v1.0', at: LATER } }));
      expect([...(await q.forTags(10, ['v1.0', 'v2.0'])).keys()]).toEqual(['v2.0']);
    }));
});
