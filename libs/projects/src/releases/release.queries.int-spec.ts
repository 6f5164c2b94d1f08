import type { EntityManager } from 'typeorm';
import {
  asDataSource,
  openProjectionDb,
  projectCreated,
  recorded,
  userCreated,
  type ProjectionDb,
} from '../../../../test/support/projection-db';
import { ReleaseQueries } from './release.queries';
import type { ReleaseStreamEvent } from './release-stream';

const LATER = '2026-02-01T00:00:00.000Z';

const event = (e: ReleaseStreamEvent) => recorded(e);
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

  it('pages the releases by release date (the creation for 10.x notes) or creation, both ways, with the total', () =>
    withReleases(async (q, db) => {
      await pg.given(
        db,
        event({
          type: 'ProjectReleaseCreated',
          data: {
            projectId: 10,
            tagName: 'v3.0',
            description: null,
            name: 'Three',
            releasedAt: '2020-01-01T00:00:00.000Z',
            authorId: 1,
            at: '2027-01-01T00:00:00.000Z',
          },
        }),
      );
      const page = { page: 1, perPage: 2, offset: 0 };
      const byRelease = await q.page(10, { orderBy: 'released_at', sort: 'desc' }, page);
      expect(byRelease.total).toBe(3);
      expect(byRelease.rows.map((r) => r.tagName)).toEqual(['v2.0', 'v1.0']);
      const byCreation = await q.page(10, { orderBy: 'created_at', sort: 'desc' }, page);
      expect(byCreation.rows.map((r) => r.tagName)).toEqual(['v3.0', 'v2.0']);
      const ascending = await q.page(10, { orderBy: 'released_at', sort: 'asc' }, { page: 2, perPage: 2, offset: 2 });
      expect(ascending).toEqual({ rows: [expect.objectContaining({ tagName: 'v2.0' })], total: 3 });
      const beyond = await q.page(10, { orderBy: 'released_at', sort: 'asc' }, { page: 3, perPage: 2, offset: 4 });
      expect(beyond).toEqual({ rows: [], total: 3 });
    }));

  it('reads one release with its name falling back to the tag, and its links newest first', () =>
    withReleases(async (q, db) => {
      const values = { name: 'a', url: 'https://a', filepath: null, linkType: 'other' as const };
      await pg.given(
        db,
        event({
          type: 'ProjectReleaseLinkAdded',
          data: { projectId: 10, tagName: 'v1.0', linkId: 1, ...values, at: LATER },
        }),
        event({
          type: 'ProjectReleaseLinkAdded',
          data: { projectId: 10, tagName: 'v1.0', linkId: 2, ...values, name: 'b', at: '2026-03-01T00:00:00.000Z' },
        }),
      );
      expect(await q.find(10, 'v1.0')).toEqual({
        tagName: 'v1.0',
        name: 'v1.0',
        description: 'first',
        createdAt: new Date(LATER),
        releasedAt: new Date(LATER),
        authorId: null,
      });
      expect(await q.find(10, 'v9')).toBeUndefined();
      const links = await q.linksOf(10, ['v1.0', 'v2.0']);
      expect(links.get('v1.0')?.map((l) => l.id)).toEqual([2, 1]);
      expect(links.get('v2.0')).toEqual([]);
      expect(await q.link(10, 'v1.0', 1)).toMatchObject({ id: 1, tagName: 'v1.0', name: 'a', linkType: 'other' });
      expect(await q.link(10, 'v2.0', 1)).toBeUndefined();
    }));
});
