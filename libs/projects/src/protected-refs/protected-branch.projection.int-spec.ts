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
import { ProtectedBranchProjection } from './protected-branch.projection';

const LATER = '2026-02-01T00:00:00.000Z';
const projection = new ProtectedBranchProjection();

interface RuleRow {
  project_id: number;
  name: string;
  push_access_level: number;
  merge_access_level: number;
  position: string;
  created_at: Date;
  updated_at: Date;
}
const rules = (db: EntityManager) =>
  rows<RuleRow>(
    db,
    `select project_id, name, push_access_level, merge_access_level, position, created_at, updated_at
       from protected_branches order by project_id, position`,
  );

describe('ProtectedBranchProjection', () => {
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

  it('handles exactly the protected-branch events', () => {
    expect([...projection.eventTypes].sort()).toEqual([
      'ProtectedBranchCreated',
      'ProtectedBranchRemoved',
      'ProtectedBranchUpdated',
    ]);
  });

  it('keeps a rule per project and name, ordered by the global position of its creation', () =>
    withProjects(async (db) => {
      const created = (projectId: number, name: string, position: string) =>
        recorded(
          {
            type: 'ProtectedBranchCreated' as const,
            data: { projectId, name, pushAccessLevel: 40, mergeAccessLevel: 30, at: AT },
          },
          { globalPosition: position },
        );
      await apply(
        projection,
        db,
        created(10, 'main', '900'),
        created(10, 'release/*', '800'),
        created(11, 'main', '901'),
      );
      const row = (project_id: number, name: string, position: string): RuleRow => ({
        project_id,
        name,
        push_access_level: 40,
        merge_access_level: 30,
        position,
        created_at: new Date(AT),
        updated_at: new Date(AT),
      });
      expect(await rules(db)).toEqual([row(10, 'release/*', '800'), row(10, 'main', '900'), row(11, 'main', '901')]);
    }));

  it('changes only the levels an update names, and removes a rule', () =>
    withProjects(async (db) => {
      await apply(
        projection,
        db,
        {
          type: 'ProtectedBranchCreated',
          data: { projectId: 10, name: 'main', pushAccessLevel: 40, mergeAccessLevel: 40, at: AT },
        },
        {
          type: 'ProtectedBranchCreated',
          data: { projectId: 10, name: 'dev', pushAccessLevel: 30, mergeAccessLevel: 30, at: AT },
        },
        {
          type: 'ProtectedBranchCreated',
          data: { projectId: 11, name: 'dev', pushAccessLevel: 30, mergeAccessLevel: 30, at: AT },
        },
        { type: 'ProtectedBranchUpdated', data: { projectId: 10, name: 'main', pushAccessLevel: 0, at: LATER } },
        { type: 'ProtectedBranchUpdated', data: { projectId: 10, name: 'dev', mergeAccessLevel: 40, at: LATER } },
        { type: 'ProtectedBranchRemoved', data: { projectId: 11, name: 'dev', at: LATER } },
      );
      expect((await rules(db)).map(({ position: _, ...r }) => r)).toEqual([
        {
          project_id: 10,
          name: 'main',
          push_access_level: 0,
          merge_access_level: 40,
          created_at: new Date(AT),
          updated_at: new Date(LATER),
        },
        {
          project_id: 10,
          name: 'dev',
          push_access_level: 30,
          merge_access_level: 40,
          created_at: new Date(AT),
          updated_at: new Date(LATER),
        },
      ]);
    }));
});
