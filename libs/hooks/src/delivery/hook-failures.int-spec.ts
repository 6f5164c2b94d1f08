import { Clock, LodeConfig } from '@app/platform';
import type { DataSource, EntityManager } from 'typeorm';
import { openProjectionDb, type ProjectionDb } from '../../../../test/support/projection-db';
import { HookFailures } from './hook-failures';

class TestClock extends Clock {
  constructor(public at: Date) {
    super();
  }
  now(): Date {
    return this.at;
  }
}

describe('HookFailures (hook_failures)', () => {
  let pg: ProjectionDb;
  beforeAll(async () => {
    pg = await openProjectionDb();
  });
  afterAll(() => pg.drop());

  const withFailures = (test: (f: HookFailures, clock: TestClock, db: EntityManager) => Promise<void>) =>
    pg.rollingBack(async (db) => {
      const clock = new TestClock(new Date('2026-11-28T10:00:00.000Z'));
      const config = new LodeConfig();
      config.webhookDisableBaseMs = 60_000;
      // The rolled-back transaction stands in for the pool: `failed` nests its own in it.
      const ds = { manager: db, query: db.query.bind(db), transaction: db.transaction.bind(db) };
      await test(new HookFailures(ds as unknown as DataSource, clock, config), clock, db);
    });

  it('counts failures per (kind, id), disables at the 4th for the base window, and forgets them on reset', () =>
    withFailures(async (f, clock) => {
      for (let i = 0; i < 3; i++) await f.failed('project', 7);
      expect(await f.status('project', 7)).toBe('executable');
      expect(await f.status('system', 7)).toBe('executable');
      const fourth = await f.failed('project', 7);
      expect(fourth).toEqual({ recentFailures: 4, disabledUntil: new Date('2026-11-28T10:01:00.000Z') });
      expect(await f.status('project', 7)).toBe('temporarily_disabled');
      // A failure of a request already in flight does not count while the hook is disabled.
      expect(await f.failed('project', 7)).toEqual(fourth);
      clock.at = new Date('2026-11-28T10:01:00.001Z');
      expect(await f.status('project', 7)).toBe('executable');
      await f.reset('project', 7);
      expect(await f.state('project', 7)).toEqual({ recentFailures: 0, disabledUntil: null });
    }));

  it('disables a hook for good at its 40th consecutive failure, until it is reset', () =>
    withFailures(async (f, clock, db) => {
      for (let i = 0; i < 40; i++) {
        const s = await f.state('project', 9);
        if (s.disabledUntil && s.disabledUntil >= clock.at) clock.at = new Date(s.disabledUntil.getTime() + 1);
        await f.failed('project', 9);
      }
      expect((await f.state('project', 9)).recentFailures).toBe(40);
      clock.at = new Date(clock.at.getTime() + 365 * 24 * 3600_000);
      expect(await f.status('project', 9)).toBe('disabled');
      expect((await f.failed('project', 9)).recentFailures).toBe(40);
      await f.reset('project', 9);
      expect(await f.status('project', 9)).toBe('executable');
      const [{ n }] = (await db.query(`select count(*)::int as n from hook_failures where hook_id = 9`)) as {
        n: number;
      }[];
      expect(n).toBe(0);
    }));

  it('drops the rows of project hooks that are gone', () =>
    withFailures(async (f, _clock, db) => {
      await f.failed('project', 123456);
      await f.failed('system', 123456);
      await f.eraseGone();
      const kinds = (await db.query(`select hook_kind from hook_failures where hook_id = 123456`)) as {
        hook_kind: string;
      }[];
      expect(kinds.map((k) => k.hook_kind)).toEqual(['system']);
    }));
});
