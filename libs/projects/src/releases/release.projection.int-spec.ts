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
      'ProjectReleaseChanged',
      'ProjectReleaseCreated',
      'ProjectReleaseLinkAdded',
      'ProjectReleaseLinkChanged',
      'ProjectReleaseLinkRemoved',
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

  const details = (db: EntityManager) =>
    rows<{
      tag: string;
      name: string | null;
      description: string | null;
      released_at: Date | null;
      author_id: number | null;
    }>(db, `select tag, name, description, released_at, author_id from releases where project_id = 10 order by tag`);
  const links = (db: EntityManager) =>
    rows<{ id: number; tag: string; name: string; url: string; filepath: string | null; link_type: string }>(
      db,
      `select id, tag, name, url, filepath, link_type from release_links order by id`,
    );

  it("writes the Releases API's name, date and author beside 10.x's notes, and changes only what was given", () =>
    withProjects(async (db) => {
      await apply(
        projection,
        db,
        { type: 'ProjectReleaseCreated', data: { projectId: 10, tagName: 'v1', description: 'one', at: AT } },
        {
          type: 'ProjectReleaseCreated',
          data: {
            projectId: 10,
            tagName: 'v2',
            description: null,
            name: 'Two',
            releasedAt: LATER,
            authorId: 1,
            at: AT,
          },
        },
      );
      expect(await details(db)).toEqual([
        { tag: 'v1', name: null, description: 'one', released_at: null, author_id: null },
        { tag: 'v2', name: 'Two', description: null, released_at: new Date(LATER), author_id: 1 },
      ]);
      await apply(
        projection,
        db,
        { type: 'ProjectReleaseChanged', data: { projectId: 10, tagName: 'v1', changes: { name: 'One' }, at: LATER } },
        {
          type: 'ProjectReleaseChanged',
          data: {
            projectId: 10,
            tagName: 'v2',
            changes: { description: 'two', name: null, releasedAt: AT },
            at: LATER,
          },
        },
      );
      expect(await details(db)).toEqual([
        { tag: 'v1', name: 'One', description: 'one', released_at: null, author_id: null },
        { tag: 'v2', name: null, description: 'two', released_at: new Date(AT), author_id: 1 },
      ]);
    }));

  it("keeps a release's links, changes and removes them, and a release's removal takes its links", () =>
    withProjects(async (db) => {
      const values = { name: 'a', url: 'https://a', filepath: null, linkType: 'other' as const };
      await apply(
        projection,
        db,
        { type: 'ProjectReleaseCreated', data: { projectId: 10, tagName: 'v1', description: 'one', at: AT } },
        { type: 'ProjectReleaseCreated', data: { projectId: 10, tagName: 'v2', description: 'two', at: AT } },
        { type: 'ProjectReleaseLinkAdded', data: { projectId: 10, tagName: 'v1', linkId: 1, ...values, at: AT } },
        {
          type: 'ProjectReleaseLinkAdded',
          data: { projectId: 10, tagName: 'v1', linkId: 2, ...values, name: 'b', at: AT },
        },
        { type: 'ProjectReleaseLinkAdded', data: { projectId: 10, tagName: 'v2', linkId: 3, ...values, at: AT } },
        {
          type: 'ProjectReleaseLinkChanged',
          data: {
            projectId: 10,
            tagName: 'v1',
            linkId: 1,
            ...values,
            filepath: '/bin/a',
            linkType: 'package',
            at: LATER,
          },
        },
        { type: 'ProjectReleaseLinkRemoved', data: { projectId: 10, tagName: 'v1', linkId: 2, at: LATER } },
      );
      expect(await links(db)).toEqual([
        { id: 1, tag: 'v1', name: 'a', url: 'https://a', filepath: '/bin/a', link_type: 'package' },
        { id: 3, tag: 'v2', name: 'a', url: 'https://a', filepath: null, link_type: 'other' },
      ]);
      await apply(projection, db, { type: 'ProjectReleaseRemoved', data: { projectId: 10, tagName: 'v2', at: LATER } });
      expect((await links(db)).map((l) => l.id)).toEqual([1]);
    }));
});
