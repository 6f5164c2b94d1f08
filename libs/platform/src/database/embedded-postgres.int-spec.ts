import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { EmbeddedPostgres } from './embedded-postgres';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('EmbeddedPostgres (PGlite over a Unix socket)', () => {
  let dir: string;
  let server: EmbeddedPostgres;
  let pool: pg.Pool;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lode-emb-'));
    server = await EmbeddedPostgres.start(join(dir, 'pglite'), join(dir, 'run'));
    pool = new pg.Pool({ connectionString: server.url, max: 10 });
    await pool.query('create table t (id serial primary key, v text)');
  }, 60_000);

  afterAll(async () => {
    await pool?.end();
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("keeps a transaction's writes to itself: one rolled back while another commits leaves only the committed row", async () => {
    const a = (async () => {
      const c = await pool.connect();
      await c.query('begin');
      await c.query(`insert into t (v) values ('rolled back')`);
      await sleep(200);
      await c.query('rollback');
      c.release();
    })();
    await sleep(50);
    const b = (async () => {
      const c = await pool.connect();
      await c.query('begin');
      await c.query('insert into t (v) values ($1)', ['committed']);
      await c.query('commit');
      c.release();
    })();
    await Promise.all([a, b]);
    expect((await pool.query(`select v from t where v in ('rolled back', 'committed')`)).rows).toEqual([
      { v: 'committed' },
    ]);
  });

  it('runs many concurrent extended-protocol queries from a pool without mixing their statements', async () => {
    const results = await Promise.all(
      Array.from({ length: 300 }, (_, i) => pool.query('select $1::int * 2 as n, $2::text as s', [i, `s${i}`])),
    );
    results.forEach((r, i) => expect(r.rows).toEqual([{ n: i * 2, s: `s${i}` }]));
  });

  it('delivers NOTIFY to a listening connection', async () => {
    const listener = new pg.Client({ connectionString: server.url });
    await listener.connect();
    await listener.query('listen lode_test');
    const got = new Promise<string>((resolve) =>
      listener.on('notification', (n) => resolve(`${n.channel}:${n.payload}`)),
    );
    await pool.query(`select pg_notify('lode_test', 'hello')`);
    await expect(got).resolves.toBe('lode_test:hello');
    await listener.end();
  });

  it("gives each connection the search_path of its startup packet (BullMQ's -c search_path)", async () => {
    await pool.query('create schema if not exists other; create table if not exists other.only_here (x int)');
    const scoped = new pg.Client({ connectionString: server.url, options: '-c search_path="other"' });
    await scoped.connect();
    expect((await scoped.query('select count(*)::int as n from only_here')).rows).toEqual([{ n: 0 }]);
    await expect(pool.query('select count(*) from only_here')).rejects.toThrow(/does not exist/);
    expect((await scoped.query('show search_path')).rows[0].search_path).toBe('other');
    await scoped.end();
  });

  it('rolls back the transaction of a client that went away, and serves the others on', async () => {
    const dying = new pg.Client({ connectionString: server.url });
    dying.on('error', () => undefined);
    await dying.connect();
    await dying.query('begin');
    await dying.query(`insert into t (v) values ('orphan')`);
    (dying as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
    await sleep(100);
    expect((await pool.query(`select count(*)::int as n from t where v = 'orphan'`)).rows).toEqual([{ n: 0 }]);
  });

  it('refuses a second server on the same socket', async () => {
    await expect(EmbeddedPostgres.start(join(dir, 'pglite'), join(dir, 'run'))).rejects.toThrow(/already serves/);
    expect(await EmbeddedPostgres.answers(join(dir, 'run'))).toBe(true);
  });
});
