import { ProjectionRegistry } from '@app/platform';
import type { TestApp } from './test-app';

/** Every table some projector owns, each in a stable order: what a rebuild must give back. */
export async function readModels(t: TestApp): Promise<Record<string, unknown[]>> {
  const tables = [
    ...new Set(
      t.app
        .get(ProjectionRegistry)
        .all()
        .flatMap((p) => p.tables),
    ),
  ].sort();
  const out: Record<string, unknown[]> = {};
  for (const table of tables) out[table] = await t.db.query(`select * from ${table} order by 1, 2, 3`);
  return out;
}
