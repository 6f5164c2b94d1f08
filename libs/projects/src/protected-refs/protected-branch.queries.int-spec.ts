import { NotFound } from '@app/platform';
import type { EntityManager } from 'typeorm';
import {
  asDataSource,
  openProjectionDb,
  pageOf,
  projectCreated,
  recorded,
  userCreated,
  type ProjectionDb,
} from '../../../../test/support/projection-db';
import type { ProjectEvent } from '../projects/project';
import { ProtectedBranchQueries } from './protected-branch.queries';

const LATER = '2026-02-01T00:00:00.000Z';

const event = (e: ProjectEvent) => recorded(e);
const rule = (projectId: number, name: string, pushAccessLevel = 40, mergeAccessLevel = 40) =>
  event({ type: 'ProtectedBranchCreated', data: { projectId, name, pushAccessLevel, mergeAccessLevel, at: LATER } });

describe('ProtectedBranchQueries', () => {
  let pg: ProjectionDb;
  beforeAll(async () => {
    pg = await openProjectionDb();
  });
  afterAll(() => pg.drop());

  /** Project 10 protects `main`, then `release/*`, then `a-dev` (by the names' order it would come first); 11 protects `main`. */
  const withRules = (test: (q: ProtectedBranchQueries, db: EntityManager) => Promise<void>) =>
    pg.rollingBack(async (db) => {
      await pg.given(
        db,
        userCreated(1),
        projectCreated(10, 101),
        projectCreated(11, 101),
        rule(10, 'main'),
        rule(10, 'release/*', 30, 0),
        rule(10, 'a-dev', 0, 30),
        rule(11, 'main', 0, 0),
      );
      await test(new ProtectedBranchQueries(asDataSource(db)), db);
    });

  it("reads a project's rules in creation order, whatever later changes", () =>
    withRules(async (q, db) => {
      await pg.given(
        db,
        event({ type: 'ProtectedBranchUpdated', data: { projectId: 10, name: 'main', pushAccessLevel: 0, at: LATER } }),
      );
      expect(await q.forProject(10)).toEqual([
        { name: 'main', pushAccessLevel: 0, mergeAccessLevel: 40, allowForcePush: false },
        { name: 'release/*', pushAccessLevel: 30, mergeAccessLevel: 0, allowForcePush: false },
        { name: 'a-dev', pushAccessLevel: 0, mergeAccessLevel: 30, allowForcePush: false },
      ]);
      expect(await q.forProject(12)).toEqual([]);
    }));

  it('pages the rules with their total', () =>
    withRules(async (q, db) => {
      const second = await q.page(10, pageOf(2, 2));
      expect(second).toEqual({
        rows: [{ name: 'a-dev', pushAccessLevel: 0, mergeAccessLevel: 30, allowForcePush: false }],
        total: 3,
      });
      await pg.given(db, event({ type: 'ProtectedBranchRemoved', data: { projectId: 10, name: 'main', at: LATER } }));
      const first = await q.page(10, pageOf(1, 2));
      expect([first.total, first.rows.map((r) => r.name)]).toEqual([2, ['release/*', 'a-dev']]);
    }));

  it('finds a rule by its exact name, a wildcard as written, and 404s the rest', () =>
    withRules(async (q) => {
      expect(await q.get(11, 'main')).toEqual({
        name: 'main',
        pushAccessLevel: 0,
        mergeAccessLevel: 0,
        allowForcePush: false,
      });
      expect((await q.get(10, 'release/*')).pushAccessLevel).toBe(30);
      await expect(q.get(10, 'release/1.0')).rejects.toThrow(NotFound);
      await expect(q.get(10, 'Main')).rejects.toThrow(NotFound);
      await expect(q.get(12, 'main')).rejects.toThrow(NotFound);
    }));
});
