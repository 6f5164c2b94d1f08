import { Client } from 'pg';
import { LodeConfig } from '../config/lode-config';
import { ensureDatabase, runMigrations } from './database';

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

describe("runMigrations' maintenance warning", () => {
  const name = `lode_maintenance_${process.pid}_${Date.now()}`;
  const admin = new Client({ connectionString: SERVER });
  const url = new URL(SERVER);
  url.pathname = `/${name}`;
  const config = (databaseUrl: string) =>
    Object.assign(new LodeConfig(), { databaseUrl, embeddedDatabase: false, dbConnectTimeoutMs: 2000 });
  const maintenanceWarning = async (databaseUrl: string) =>
    (await runMigrations(config(databaseUrl), [])).maintenanceWarning;

  beforeAll(async () => {
    await admin.connect();
    await admin.query(`create database "${name}"`);
  });
  afterAll(async () => {
    await admin.query(`drop database if exists "${name}"`);
    await admin.end();
  });

  it("names the server's settings that stop it from ever vacuuming or analyzing Lode's tables", async () => {
    // autovacuum is the server's alone (this machine's CI server runs without it); track_counts can
    // be set per database, so both sides of it are checked here.
    const serverAutovacuum = (await admin.query(`show autovacuum`)).rows[0].autovacuum as string;
    const counting = await maintenanceWarning(url.toString());
    if (serverAutovacuum === 'on') expect(counting).toBeUndefined();
    else {
      expect(counting).toContain('autovacuum = off');
      expect(counting).not.toContain('track_counts');
      expect(counting).toContain('vacuumdb --analyze');
    }
    await admin.query(`alter database "${name}" set track_counts = off`);
    const uncounted = await maintenanceWarning(url.toString());
    expect(uncounted).toContain('track_counts = off');
    expect(uncounted).toContain(
      serverAutovacuum === 'on'
        ? 'runs with track_counts = off for this database'
        : 'autovacuum = off and track_counts = off',
    );
  });
});
