import { Client, Pool } from 'pg';
import { LodeConfig } from '../config/lode-config';
import { dataSourceOptions, ensureDatabase, runMigrations, withOwnConnection } from './database';

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
      expect(counting).toContain("Lode's workers analyze the tables");
      expect(counting).toContain('"vacuumdb"');
    }
    await admin.query(`alter database "${name}" set track_counts = off`);
    const uncounted = await maintenanceWarning(url.toString());
    expect(uncounted).toContain('track_counts = off');
    expect(uncounted).toContain('vacuumdb --analyze');
    expect(uncounted).toContain(
      serverAutovacuum === 'on'
        ? 'runs with track_counts = off for this database'
        : 'autovacuum = off and track_counts = off',
    );
  });
});

describe('withOwnConnection', () => {
  const name = `lode_own_connection_${process.pid}_${Date.now()}`;
  const admin = new Client({ connectionString: SERVER });
  const url = new URL(SERVER);
  url.pathname = `/${name}`;

  beforeAll(async () => {
    await admin.connect();
    await admin.query(`create database "${name}"`);
    await admin.query(`alter database "${name}" set statement_timeout = '1s'`);
  });
  afterAll(async () => {
    await admin.query(`drop database if exists "${name}"`);
    await admin.end();
  });

  const show = (options: Parameters<typeof withOwnConnection>[1]) =>
    withOwnConnection(url.toString(), options, async (client) => {
      const { rows } = await client.query<{ statement_timeout: string }>(`show statement_timeout`);
      return rows[0].statement_timeout;
    });

  it("lifts a database's statement limit when asked for none (a vacuum takes as long as it takes)", async () => {
    expect(await show({})).toBe('1s');
    expect(await show({ statementTimeoutMs: 0 })).toBe('0');
    expect(await show({ statementTimeoutMs: 2500 })).toBe('2500ms');
  });

  it('closes its connection after use, also when the use fails', async () => {
    const applicationName = `lode-own-connection-${process.pid}`;
    await expect(
      withOwnConnection(url.toString(), { applicationName }, (client) => client.query(`select * from no_such_table`)),
    ).rejects.toThrow(/no_such_table/);
    await withOwnConnection(url.toString(), { applicationName }, (client) => client.query(`select 1`));
    // A backend leaves pg_stat_activity a moment after its client has gone.
    let open = -1;
    for (let tries = 0; tries < 50 && open !== 0; tries++) {
      if (tries) await new Promise((r) => setTimeout(r, 100));
      const { rows } = await admin.query<{ n: number }>(
        `select count(*)::int as n from pg_stat_activity where application_name = $1`,
        [applicationName],
      );
      open = rows[0].n;
    }
    expect(open).toBe(0);
  });
});

describe("the pool's idle connections", () => {
  const applicationName = `lode-idle-pool-${process.pid}`;
  const config = Object.assign(new LodeConfig(), {
    databaseUrl: SERVER,
    embeddedDatabase: false,
    dbConnectTimeoutMs: 2000,
    dbStatementTimeoutMs: 30_000,
  });
  const pool = new Pool({
    ...(dataSourceOptions(config).extra as object),
    connectionString: SERVER,
    application_name: applicationName,
  });
  const admin = new Client({ connectionString: SERVER });
  const open = async () =>
    (
      await admin.query<{ n: number }>(`select count(*)::int as n from pg_stat_activity where application_name = $1`, [
        applicationName,
      ])
    ).rows[0].n;

  beforeAll(() => admin.connect());
  afterAll(async () => {
    await pool.end();
    await admin.end();
  });

  it('are kept through a quiet spell longer than pg closes them after (10 s), not opened again for the next load', async () => {
    // Three statements at once hold three connections.
    await Promise.all([1, 2, 3].map(() => pool.query('select pg_sleep(0.05)')));
    expect(await open()).toBe(3);
    await new Promise((r) => setTimeout(r, 11_000));
    expect(await open()).toBe(3);
    expect(pool.totalCount).toBe(3);
  }, 20_000);
});
