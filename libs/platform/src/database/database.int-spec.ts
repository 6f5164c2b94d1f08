import { Client } from 'pg';
import { ensureDatabase } from './database';

const SERVER = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

describe('ensureDatabase', () => {
  const name = `lode_create_race_${process.pid}_${Date.now()}`;
  const admin = new Client({ connectionString: SERVER });

  beforeAll(() => admin.connect());
  afterAll(async () => {
    await admin.query(`drop database if exists "${name}"`);
    await admin.end();
  });

  it('tolerates processes that create the same missing database at the same moment', async () => {
    const url = new URL(SERVER);
    url.pathname = `/${name}`;
    // Several processes (an API and a worker started together) racing: all must see it created.
    const results = await Promise.allSettled(Array.from({ length: 8 }, () => ensureDatabase(url.toString())));
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    const [{ n }] = (await admin.query(`select count(*)::int as n from pg_database where datname = $1`, [name]))
      .rows as { n: number }[];
    expect(n).toBe(1);
  });
});
