import { Client } from 'pg';
import { DataSource, QueryFailedError } from 'typeorm';
import type { LodeConfig } from '../config/lode-config';
import { PreparedStatements } from './prepared-statements';

const SERVER = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

describe('PreparedStatements', () => {
  const name = `lode_prepared_${process.pid}_${Date.now()}`;
  const admin = new Client({ connectionString: SERVER });
  let ds: DataSource;
  let prepared: PreparedStatements;
  const SELECT = 'select t.* from things t where t.id = $1';

  beforeAll(async () => {
    await admin.connect();
    await admin.query(`create database "${name}"`);
    const url = new URL(SERVER);
    url.pathname = `/${name}`;
    // One pooled connection, so every call below meets the statement that connection prepared.
    ds = new DataSource({ type: 'postgres', url: url.toString(), extra: { max: 1 } });
    await ds.initialize();
    await ds.query(`create table things (id int primary key, name text)`);
    await ds.query(`insert into things values (1, 'one'), (2, 'two')`);
    prepared = new PreparedStatements(ds, { embeddedDatabase: false, dbPreparedStatements: true } as LodeConfig);
  });
  afterAll(async () => {
    await ds.destroy();
    await admin.query(`drop database if exists "${name}" with (force)`);
    await admin.end();
  });

  const preparedOnServer = async () =>
    (await ds.query(`select name, statement from pg_prepared_statements`)) as { name: string; statement: string }[];

  it('answers rows through a statement prepared once on the connection', async () => {
    expect(await prepared.firstRow(SELECT, [1])).toEqual({ id: 1, name: 'one' });
    expect(await prepared.rows(SELECT, [2])).toEqual([{ id: 2, name: 'two' }]);
    expect(await prepared.firstRow(SELECT, [3])).toBeUndefined();
    const statements = (await preparedOnServer()).filter((s) => s.statement === SELECT);
    expect(statements).toHaveLength(1);
    expect(statements[0].name).toMatch(/^lode_[0-9a-f]{20}_0$/);
  });

  it('prepares again when the columns changed under the statement (a migration of another process)', async () => {
    expect(await prepared.firstRow(SELECT, [1])).toEqual({ id: 1, name: 'one' });
    await ds.query(`alter table things add column size int not null default 7`);
    expect(await prepared.firstRow(SELECT, [1])).toEqual({ id: 1, name: 'one', size: 7 });
    const names = (await preparedOnServer()).filter((s) => s.statement === SELECT).map((s) => s.name);
    expect(names.some((n) => n.endsWith('_1'))).toBe(true);
  });

  it("reports a failed statement as TypeORM does (the error filter's input)", async () => {
    const failed = await prepared.rows('select t.* from things t where t.id = $1::int', ['x']).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(QueryFailedError);
    expect((failed as { code?: string }).code).toBe('22P02');
  });

  it('with LODE_DB_PREPARED_STATEMENTS=false, sends the statement unnamed (a pooler that keeps none)', async () => {
    const unnamed = new PreparedStatements(ds, { embeddedDatabase: false, dbPreparedStatements: false } as LodeConfig);
    const text = 'select t.name from things t where t.id = $1';
    expect(await unnamed.firstRow(text, [2])).toEqual({ name: 'two' });
    expect((await preparedOnServer()).filter((s) => s.statement === text)).toEqual([]);
  });
});
