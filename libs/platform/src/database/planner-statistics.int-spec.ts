import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { LodeConfig } from '../config/lode-config';
import { dataSourceOptions } from './database';
import { EmbeddedPostgres } from './embedded-postgres';
import { PLANNER_STATISTICS_LOCK, PlannerStatistics, staleTables } from './planner-statistics';

const SERVER = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

describe('planner statistics where autovacuum does not keep them', () => {
  const name = `lode_statistics_${process.pid}_${Date.now()}`;
  const admin = new Client({ connectionString: SERVER });
  const url = new URL(SERVER);
  url.pathname = `/${name}`;
  const config = Object.assign(new LodeConfig(), {
    databaseUrl: url.toString(),
    embeddedDatabase: false,
    dbConnectTimeoutMs: 2000,
  });
  let dataSource: DataSource;
  let serverAutovacuum: string;

  const lastAnalyzed = async (table: string) =>
    (await dataSource.query(`select last_analyze from pg_stat_user_tables where relname = $1`, [table]))[0]
      .last_analyze as Date | null;

  // Read on the pool's connection that wrote the rows: a backend flushes its change counters at its
  // next statement, but only after ten idle seconds when another connection asks.
  const staleNames = async () =>
    (await staleTables({ query: async (sql, params) => ({ rows: await dataSource.query(sql, params) }) })).map(
      (t) => `${t.schema}.${t.name}`,
    );

  /** The server's change counters reach pg_stat_user_tables once flushed. */
  const untilStale = async (qualifiedName: string) => {
    const deadline = Date.now() + 10_000;
    while (!(await staleNames()).includes(qualifiedName)) {
      if (Date.now() > deadline) throw new Error(`the changes to ${qualifiedName} were never counted`);
      await new Promise((r) => setTimeout(r, 200));
    }
  };

  /** Rows written and counted. */
  const insertRows = async (table: string, rows: number) => {
    await dataSource.query(`create table if not exists ${table} (id int)`);
    await dataSource.query(`insert into ${table} select generate_series(1, $1)`, [rows]);
    await untilStale(`public.${table}`);
  };

  beforeAll(async () => {
    await admin.connect();
    await admin.query(`create database "${name}"`);
    serverAutovacuum = (await admin.query(`show autovacuum`)).rows[0].autovacuum as string;
    dataSource = await new DataSource(dataSourceOptions(config)).initialize();
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await admin.query(`drop database if exists "${name}" with (force)`);
    await admin.end();
  });

  it("counts a table stale by autovacuum's rule: more changes than 50 and a tenth of its rows", async () => {
    await insertRows('many', 500);
    await dataSource.query(`create table few (id int)`);
    await dataSource.query(`insert into few select generate_series(1, 20)`);
    expect(await staleNames()).toContain('public.many');
    await dataSource.query(`analyze many`);
    // 20 rows in a table never analyzed stay under the threshold of 50; the analyzed one is fresh.
    const stale = await staleNames();
    expect(stale).not.toContain('public.many');
    expect(stale).not.toContain('public.few');
  });

  it('analyzes the stale tables of every schema when autovacuum is off, and leaves them to autovacuum when it is on', async () => {
    await insertRows('projects_like', 300);
    // BullMQ's tables live in a schema of their own where the queues are in PostgreSQL.
    await dataSource.query(`create schema queues`);
    await dataSource.query(`create table queues."Jobs" (id int)`);
    await dataSource.query(`insert into queues."Jobs" select generate_series(1, 100)`);
    await untilStale('queues.Jobs');
    expect(await lastAnalyzed('projects_like')).toBeNull();
    const statistics = new PlannerStatistics(config, dataSource, true);
    const analyzed = await statistics.analyzeIfUnattended();
    if (serverAutovacuum === 'on') {
      expect(analyzed).toEqual([]);
      expect(await lastAnalyzed('projects_like')).toBeNull();
    } else {
      expect(analyzed).toEqual(expect.arrayContaining(['public.projects_like', 'queues.Jobs']));
      expect(await lastAnalyzed('projects_like')).toBeInstanceOf(Date);
      expect(await lastAnalyzed('Jobs')).toBeInstanceOf(Date);
      expect(await staleNames()).toEqual([]);
      // The planner now knows the table's size (it guessed from pages before).
      const [{ reltuples }] = await dataSource.query(`select reltuples from pg_class where relname = 'projects_like'`);
      expect(Number(reltuples)).toBe(300);
    }
  });

  it('skips a pass while another process holds the analysis', async () => {
    await insertRows('held', 200);
    const other = new Client({ connectionString: config.databaseUrl });
    await other.connect();
    try {
      await other.query(`select pg_advisory_lock($1)`, [PLANNER_STATISTICS_LOCK]);
      expect(await new PlannerStatistics(config, dataSource, true).analyzeIfUnattended()).toEqual([]);
      expect(await lastAnalyzed('held')).toBeNull();
    } finally {
      await other.end();
    }
  });

  it("turns PostgreSQL's JIT off on Lode's connections (its compile time dwarfs a short statement's run)", async () => {
    const [{ jit }] = await dataSource.query(`show jit`);
    expect(jit).toBe('off');
    // Other settings still come from the pool's options beside it.
    const [{ statement_timeout }] = await dataSource.query(`show statement_timeout`);
    expect(statement_timeout).toBe('30s');
  });
});

describe('planner statistics and vacuum on the embedded database (PGlite runs no autovacuum)', () => {
  let dir: string;
  let server: EmbeddedPostgres;
  let dataSource: DataSource;
  let config: LodeConfig;

  const tableStats = async (table: string) =>
    (
      await dataSource.query(
        `select n_dead_tup::int as dead, last_analyze, last_vacuum from pg_stat_user_tables where relname = $1`,
        [table],
      )
    )[0] as { dead: number; last_analyze: Date | null; last_vacuum: Date | null };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lode-emb-stats-'));
    server = await EmbeddedPostgres.start(join(dir, 'pglite'), join(dir, 'run'));
    config = Object.assign(new LodeConfig(), { databaseUrl: server.url, embeddedDatabase: true });
    dataSource = await new DataSource(dataSourceOptions(config)).initialize();
  }, 60_000);
  afterAll(async () => {
    await dataSource?.destroy();
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('analyzes the changed tables, vacuums those full of dead rows, and leaves the small ones alone', async () => {
    await dataSource.query(`create table churned (id int primary key, v text)`);
    await dataSource.query(`insert into churned select g, 'x' from generate_series(1, 1000) g`);
    // 900 dead rows against 100 live: past autovacuum's vacuum rule (50 + a fifth of the live rows).
    await dataSource.query(`delete from churned where id > 100`);
    await dataSource.query(`create table grown (id int)`);
    await dataSource.query(`insert into grown select generate_series(1, 300)`);
    await dataSource.query(`create table few (id int)`);
    await dataSource.query(`insert into few select generate_series(1, 20)`);
    const [{ statement_timeout: before }] = await dataSource.query(`show statement_timeout`);
    // PGlite says autovacuum is on, but nothing in it ever runs one.
    expect((await dataSource.query(`show autovacuum`))[0].autovacuum).toBe('on');

    const done = await new PlannerStatistics(config, dataSource, true).analyzeIfUnattended();

    expect(done).toEqual(['public.churned', 'public.grown']);
    const churned = await tableStats('churned');
    expect(churned.last_vacuum).toBeInstanceOf(Date);
    expect(churned.last_analyze).toBeInstanceOf(Date);
    const grown = await tableStats('grown');
    expect(grown.last_analyze).toBeInstanceOf(Date);
    expect(grown.last_vacuum).toBeNull();
    expect((await tableStats('few')).last_analyze).toBeNull();
    await dataSource.query(`select pg_stat_force_next_flush()`);
    expect((await tableStats('churned')).dead).toBe(0);
    const [{ reltuples }] = await dataSource.query(`select reltuples from pg_class where relname = 'grown'`);
    expect(Number(reltuples)).toBe(300);
    // The one session's settings are everyone's: the pass changed none.
    expect((await dataSource.query(`show statement_timeout`))[0].statement_timeout).toBe(before);
    // Nothing stale is left for the next pass.
    expect(await new PlannerStatistics(config, dataSource, true).analyzeIfUnattended()).toEqual([]);
  });
});
