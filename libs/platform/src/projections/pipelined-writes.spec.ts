import type { EntityManager } from 'typeorm';
import { PipelinedWrites } from './pipelined-writes';

/** A pg client that answers when told, recording what was sent and in which mode. */
function fakeClient() {
  const sent: { sql: string; name?: string; pipeline: boolean }[] = [];
  const answers: { resolve: (v: unknown) => void; reject: (e: Error) => void }[] = [];
  const client = {
    pipeline: false,
    query: (q: string | { name: string; text: string }) => {
      const [sql, name] = typeof q === 'string' ? [q] : [q.text, q.name];
      sent.push({ sql, name, pipeline: client.pipeline });
      // A run's last statement, once nothing else is pending: answered at once.
      if (sql.startsWith('savepoint ')) return Promise.resolve({ rows: [] });
      return new Promise((resolve, reject) => answers.push({ resolve, reject }));
    },
  };
  // TypeORM's `query` on the transaction's manager goes to the same connection.
  const db = {
    queryRunner: { connect: () => Promise.resolve(client) },
    query: (sql: string) => client.query(sql),
  } as unknown as EntityManager;
  return { client, db, sent, answers };
}

describe('PipelinedWrites', () => {
  it('sends blind writes without waiting, and a read behind them answers once they are answered', async () => {
    const { client, db, sent, answers } = fakeClient();
    const done = PipelinedWrites.run(db, async (p) => {
      await p.query(`insert into t values ($1)`, [1]);
      await p.query(` update t set x = 2`);
      await p.query(`delete from t where x = 3`);
      const read = p.query(`select * from t`);
      // All four are on the wire before any answer.
      await new Promise((r) => setImmediate(r));
      expect(sent.map((s) => s.sql.trim().split(' ')[0])).toEqual(['insert', 'update', 'delete', 'select']);
      for (const a of answers.slice(0, 3)) a.resolve({ rows: [] });
      answers[3].resolve([{ x: 1 }]);
      expect(await read).toEqual([{ x: 1 }]);
      return 'ok';
    });
    expect(await done).toBe('ok');
    // Every statement of the run pipelined; the deallocations after it are not.
    expect(sent.filter((s) => !s.sql.startsWith('savepoint')).every((s) => s.pipeline)).toBe(true);
    expect(client.pipeline).toBe(false);
  });

  it("sends each blind write as a named statement, one name per text, and deallocates the run's names at its end", async () => {
    const { db, sent, answers } = fakeClient();
    await PipelinedWrites.run(db, async (p) => {
      for (const x of [1, 2]) await p.query(`update t set x = $1`, [x]);
      await p.query(`update u set x = $1`, [3]);
      for (const a of answers) a.resolve({ rows: [] });
    });
    const [first, again, other] = sent.map((s) => s.name);
    expect(first).toMatch(/^lode_rebuild_[0-9a-f]{8}_0$/);
    expect(again).toBe(first);
    expect(other).toBe(first!.replace(/_0$/, '_1'));
    expect(sent.slice(3).map((s) => s.sql)).toEqual([
      `savepoint lode_rebuild_statements; deallocate ${first}; deallocate ${other}; release savepoint lode_rebuild_statements`,
    ]);
  });

  it('awaits statements with `returning` and `with`, whose answer may be read', async () => {
    const { db, sent, answers } = fakeClient();
    await PipelinedWrites.run(db, async (p) => {
      const ins = p.query(`insert into t values (1) returning id`);
      await new Promise((r) => setImmediate(r));
      answers[0].resolve([{ id: 7 }]);
      expect(await ins).toEqual([{ id: 7 }]);
      const cte = p.query(`with w as (insert into t values (1) returning id) insert into u select id from w`);
      await new Promise((r) => setImmediate(r));
      answers[1].resolve([]);
      expect(await cte).toEqual([]);
    });
    expect(sent).toHaveLength(2);
  });

  it("throws when a projector reads a pipelined write's answer", async () => {
    const { db, answers } = fakeClient();
    await PipelinedWrites.run(db, async (p) => {
      const answer = (await p.query(`update t set x = 1`)) as unknown[];
      expect(() => answer[1]).toThrow(/answer of a pipelined write/);
      answers[0].resolve({ rows: [] });
    });
  });

  it("fails with the first failing write's error, not the aborted transaction's after it", async () => {
    const { client, db, answers } = fakeClient();
    const done = PipelinedWrites.run(db, async (p) => {
      await p.query(`insert into t values (1)`);
      await p.query(`insert into t values (2)`);
      const read = p.query(`select 1`);
      await new Promise((r) => setImmediate(r));
      answers[0].reject(new Error('duplicate key'));
      answers[1].reject(new Error('current transaction is aborted'));
      answers[2].reject(new Error('current transaction is aborted'));
      await read;
    });
    await expect(done).rejects.toThrow('duplicate key');
    expect(client.pipeline).toBe(false);
  });

  it('leaves a manager without a pipelining client as it is', async () => {
    const db = { queryRunner: { connect: () => Promise.resolve({}) } } as unknown as EntityManager;
    await PipelinedWrites.run(db, (p) => {
      expect(p).toBe(db);
      return Promise.resolve();
    });
  });
});
