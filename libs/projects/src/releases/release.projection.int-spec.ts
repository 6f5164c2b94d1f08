import { rows } from '@app/platform';
import type { EntityManager } from 'typeorm';
import {
  apply,
  AT,
  openProjectionDb,
  projectCreated,
  userCreated,
  type ProjectionDb,
} from '../../../../test/support/projection-db';
import { ReleaseProjection } from './release.projection';

const LATER = '2026-02-01T00:00:00.000Z';
const projection = new ReleaseProjection();
const releases = (db: EntityManager) =>
  rows<{ project_id: number; tag: string; description: string; created_at: Date; updated_at: Date }>(
    db,
    `select project_id, tag, description, created_at, updated_at from releases order by project_id, tag`,
  );

describe('ReleaseProjection', () => {
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

  it('handles exactly the release events', () => {
    expect([...projection.eventTypes].sort()).toEqual([
      'ProjectReleaseCreated',
      'ProjectReleaseRemoved',
      'ProjectReleaseUpdated',
    ]);
  });

  it('writes a release per project and tag, updates its notes and removes it', () =>
    withProjects(async (db) => {
      await apply(
        projection,
        db,
        { type: 'ProjectReleaseCreated', data: { projectId: 10, tagName: 'v1', description: 'one', at: AT } },
        { type: 'ProjectReleaseCreated', data: { projectId: 10, tagName: 'v2', description: 'two', at: AT } },
        { type: 'ProjectReleaseCreated', data: { projectId: 11, tagName: 'v1', description: 'other', at: AT } },
      );
      expect(await releases(db)).toEqual([
        { project_id: 10, tag: 'v1', description: 'one', created_at: new Date(AT), updated_at: new Date(AT) },
        { project_id: 10, tag: 'v2', description: 'two', created_at: new Date(AT), updated_at: new Date(AT) },
        { project_id: 11, tag: 'v1', description: 'other', created_at: new Date(AT), updated_at: new Date(AT) },
      ]);

      await apply(projection, db, {
        type: 'ProjectReleaseUpdated',
        data: { projectId: 10, tagName: 'v1', description: 'one, again', at: LATER },
      });
      await apply(projection, db, { type: 'ProjectReleaseRemoved', data: { projectId: 10, tagName: 'v2', at: LATER } });
      expect(await releases(db)).toEqual([
        { project_id: 10, tag: 'v1', description: 'one, again', created_at: new Date(AT), updated_at: new Date(LATER) },
        { project_id: 11, tag: 'v1', description: 'other', created_at: new Date(AT), updated_at: new Date(AT) },
      ]);
    }));
});
