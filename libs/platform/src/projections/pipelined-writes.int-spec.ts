import { DataSource } from 'typeorm';
import { PipelinedWrites } from './pipelined-writes';

const preparedHere = (ds: DataSource) =>
  ds.query(`select name from pg_prepared_statements where name like 'lode_rebuild_%'`) as Promise<{ name: string }[]>;

/** On a real PostgreSQL, through one pooled connection (a temporary table lives in its session). */
describe('PipelinedWrites on PostgreSQL', () => {
  let ds: DataSource;
  beforeAll(async () => {
    ds = new DataSource({
      type: 'postgres',
      url: process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
      extra: { max: 1 },
    });
    await ds.initialize();
    await ds.query(`create temporary table pipelined (x int primary key)`);
  });
  afterAll(() => ds.destroy());
  beforeEach(() => ds.query(`truncate pipelined`));

  it('commits the writes and leaves none of its statements on the connection', async () => {
    await ds.transaction((db) =>
      PipelinedWrites.run(db, async (p) => {
        for (const x of [1, 2, 3]) await p.query(`insert into pipelined values ($1)`, [x]);
        await p.query(`update pipelined set x = x + 10 where x = $1`, [3]);
        // Its own session holds them while it runs.
        expect(
          ((await p.query(`select name from pg_prepared_statements where name like 'lode_rebuild_%'`)) as unknown[])
            .length,
        ).toBe(2);
      }),
    );
    expect(await ds.query(`select x from pipelined order by x`)).toEqual([{ x: 1 }, { x: 2 }, { x: 13 }]);
    expect(await preparedHere(ds)).toEqual([]);
  });

  it('still commits when the server refuses a DEALLOCATE (a pooler that renamed the statement)', async () => {
    const outcome = await ds.transaction(async (db) => {
      await PipelinedWrites.run(db, async (p) => {
        await p.query(`insert into pipelined values ($1)`, [1]);
        const [{ name }] = (await p.query(
          `select name from pg_prepared_statements where name like 'lode_rebuild_%'`,
        )) as { name: string }[];
        await p.query(`deallocate ${name}`);
      });
      return 'committed';
    });
    expect(outcome).toBe('committed');
    expect(await ds.query(`select x from pipelined`)).toEqual([{ x: 1 }]);
  });

  it("a failed run forgets its statements in pg's record, and the next run on the connection works", async () => {
    const failed = await ds
      .transaction((db) =>
        PipelinedWrites.run(db, async (p) => {
          await p.query(`insert into pipelined values ($1)`, [1]);
          await p.query(`insert into pipelined values ($1)`, [1]);
          await p.query(`select 1`);
        }),
      )
      .catch((e: unknown) => e);
    expect(String(failed)).toMatch(/duplicate key/);
    const client = (await (
      ds.driver as unknown as { obtainMasterConnection(): Promise<[unknown, () => void]> }
    ).obtainMasterConnection()) as [{ connection: { parsedStatements: Record<string, string> } }, () => void];
    expect(Object.keys(client[0].connection.parsedStatements).filter((n) => n.startsWith('lode_rebuild_'))).toEqual([]);
    client[1]();
    await ds.transaction((db) =>
      PipelinedWrites.run(db, async (p) => {
        await p.query(`insert into pipelined values ($1)`, [2]);
      }),
    );
    expect(await ds.query(`select x from pipelined`)).toEqual([{ x: 2 }]);
  });

  it('sends the writes unnamed when told not to prepare (LODE_DB_PREPARED_STATEMENTS=false)', async () => {
    // (The failed run above left its statements on this connection, as documented.)
    const before = await preparedHere(ds);
    await ds.transaction((db) =>
      PipelinedWrites.run(
        db,
        async (p) => {
          await p.query(`insert into pipelined values ($1)`, [5]);
          expect(await p.query(`select name from pg_prepared_statements where name like 'lode_rebuild_%'`)).toEqual(
            before,
          );
        },
        { prepared: false },
      ),
    );
    expect(await ds.query(`select x from pipelined`)).toEqual([{ x: 5 }]);
  });
});
