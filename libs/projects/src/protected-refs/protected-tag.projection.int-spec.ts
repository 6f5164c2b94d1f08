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
import { ProtectedTagProjection } from './protected-tag.projection';

const projection = new ProtectedTagProjection();

const rules = (db: EntityManager) =>
  rows<{ project_id: number; name: string; create_access_level: number; position: string }>(
    db,
    `select project_id, name, create_access_level, position from protected_tags order by project_id, position`,
  );

describe('ProtectedTagProjection', () => {
  let pg: ProjectionDb;
  beforeAll(async () => {
    pg = await openProjectionDb();
  });
  afterAll(() => pg.drop());

  it('handles exactly the protected-tag events', () => {
    expect([...projection.eventTypes].sort()).toEqual(['ProtectedTagCreated', 'ProtectedTagRemoved']);
  });

  it('keeps a rule per project and name in creation order, removes it by name and with its project', () =>
    pg.rollingBack(async (db) => {
      await pg.given(db, userCreated(1), projectCreated(10, 101), projectCreated(11, 101));
      const created = (projectId: number, name: string, level: number, position: string) =>
        recorded(
          { type: 'ProtectedTagCreated' as const, data: { projectId, name, createAccessLevel: level, at: AT } },
          { globalPosition: position },
        );
      await apply(projection, db, created(10, 'v*', 40, '100'));
      await apply(projection, db, created(10, 'a-*', 0, '101'));
      await apply(projection, db, created(11, 'v*', 30, '102'));
      expect(await rules(db)).toEqual([
        { project_id: 10, name: 'v*', create_access_level: 40, position: '100' },
        { project_id: 10, name: 'a-*', create_access_level: 0, position: '101' },
        { project_id: 11, name: 'v*', create_access_level: 30, position: '102' },
      ]);
      await apply(
        projection,
        db,
        recorded({ type: 'ProtectedTagRemoved' as const, data: { projectId: 10, name: 'v*', at: AT } }),
      );
      expect((await rules(db)).map((r) => [r.project_id, r.name])).toEqual([
        [10, 'a-*'],
        [11, 'v*'],
      ]);
      await db.query(`delete from projects where id = 11`);
      expect((await rules(db)).map((r) => [r.project_id, r.name])).toEqual([[10, 'a-*']]);
    }));
});
