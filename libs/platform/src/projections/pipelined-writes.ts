import { randomBytes } from 'node:crypto';
import { QueryFailedError, type EntityManager } from 'typeorm';

/** What of node-postgres's client the pipeline needs: its `pipeline` mode (pg >= 8.21) and `query`. */
interface PipeliningClient {
  pipeline: boolean;
  query(statement: string | { name: string; text: string; values?: unknown[] }, values?: unknown[]): Promise<unknown>;
  /** pg's record of the statements the connection has prepared (internal; absent elsewhere). */
  connection?: { parsedStatements?: Record<string, string> };
}

/** A write whose answer no projector reads: an insert, update or delete without `returning`. */
const BLIND_WRITE = /^\s*(insert|update|delete)\b/i;
const RETURNING = /\breturning\b/i;

/**
 * Stands for a pipelined write's answer, which is not known when the projector gets it: awaiting it
 * is fine, reading it (an update's row count, say) throws, so a projector that comes to depend on a
 * write's answer fails the rebuild loudly instead of building different tables.
 */
const UNREAD_ANSWER: unknown = new Proxy([], {
  get(_target, key) {
    if (key === 'then') return undefined;
    throw new Error(`a projector read the answer of a pipelined write (${String(key)}) during a rebuild`);
  },
});

/**
 * A rebuild's statements, sent without waiting for each answer: the projectors' writes go out on
 * the transaction's connection in pg's pipeline mode, and the next statement whose answer is read (a
 * projector's select, a `with ... returning`, the progress update) waits for everything before it,
 * so thousands of writes cost one round trip instead of one each (about 225 µs on loopback, which
 * bounded the one-at-a-time rebuild at some 4,300 events/s). PostgreSQL runs them in the order sent,
 * in the same transaction, with the same parameters, so the tables come out as a one-at-a-time replay
 * builds them; a failing write fails the rebuild, reported as its own error.
 *
 * Each distinct write text goes out as a named statement, parsed and planned once instead of once
 * per event (planning was most of the PostgreSQL backend's work per write: a million events went from
 * 145 to 86 s), unless `prepared` is false (LODE_DB_PREPARED_STATEMENTS=false: a pooler in front).
 * The names are this run's own (`lode_rebuild_<run>_<n>`), so they never meet another run's or
 * another client's on a shared session (the embedded database's one session, a pooler's), and a run
 * that ends well deallocates them before its transaction commits: prepared statements outlive a
 * transaction, and the connection goes back to the pool. A run that failed cannot (its transaction is
 * aborted): its statements stay on that one connection until it closes. pg >= 8.21 parses a name
 * once even when its second use is sent before the first is answered.
 */
export class PipelinedWrites {
  private pending: Promise<unknown>[] = [];
  private failure: unknown;
  /** text -> this run's statement name; bounded by the projectors' write texts. */
  private readonly names = new Map<string, string>();
  private readonly run = randomBytes(4).toString('hex');

  private constructor(
    private readonly db: EntityManager,
    private readonly client: PipeliningClient,
    private readonly prepared: boolean,
  ) {}

  /**
   * Pipelines `db`'s connection for the length of `work`, which gets an EntityManager whose `query`
   * pipelines blind writes. Without a pipelining pg client (another driver) `work` gets `db` itself.
   */
  static async run<T>(
    db: EntityManager,
    work: (db: EntityManager) => Promise<T>,
    { prepared = true }: { prepared?: boolean } = {},
  ): Promise<T> {
    const client = (await db.queryRunner?.connect()) as Partial<PipeliningClient> | undefined;
    if (!client || typeof client.pipeline !== 'boolean' || client.pipeline) return work(db);
    const writes = new PipelinedWrites(db, client as PipeliningClient, prepared);
    // Switched while the connection is idle (every earlier statement was awaited), and back once
    // every pipelined statement is answered, before the transaction commits or rolls back.
    client.pipeline = true;
    let ended = false;
    try {
      const result = await work(writes.manager());
      await writes.settle();
      ended = true;
      return result;
    } finally {
      await Promise.allSettled(writes.pending);
      client.pipeline = false;
      await writes.deallocate(ended);
    }
  }

  /**
   * Drops this run's statements from pg's record of them and, when the transaction is still good,
   * from the session. A DEALLOCATE the server refuses (a pooler that renamed the statement) would
   * abort the transaction and turn its COMMIT into a silent rollback: a savepoint keeps it out.
   */
  private async deallocate(transactionGood: boolean): Promise<void> {
    const names = [...this.names.values()];
    this.names.clear();
    for (const name of names) delete this.client.connection?.parsedStatements?.[name];
    if (!transactionGood || !names.length) return;
    const savepoint = 'lode_rebuild_statements';
    try {
      await this.client.query(
        [`savepoint ${savepoint}`, ...names.map((n) => `deallocate ${n}`), `release savepoint ${savepoint}`].join('; '),
      );
    } catch {
      await this.client.query(`rollback to savepoint ${savepoint}`);
    }
  }

  /** Waits for every pipelined write; throws the first that failed. */
  async settle(): Promise<void> {
    await Promise.allSettled(this.pending);
    this.pending = [];
    if (this.failure !== undefined) throw this.failure;
  }

  /** `db`, with `query` pipelining the writes whose answer is not read. */
  private manager(): EntityManager {
    const query = (sql: string, params?: unknown[]) => this.query(sql, params);
    return new Proxy(this.db, {
      get: (target, key): unknown => (key === 'query' ? query : Reflect.get(target, key, target)),
    });
  }

  private nameOf(sql: string): string {
    let name = this.names.get(sql);
    if (name === undefined) this.names.set(sql, (name = `lode_rebuild_${this.run}_${this.names.size}`));
    return name;
  }

  private async query(sql: string, params?: unknown[]): Promise<unknown> {
    if (this.failure !== undefined) throw this.failure;
    if (BLIND_WRITE.test(sql) && !RETURNING.test(sql)) {
      const sent = (
        this.prepared
          ? this.client.query({ name: this.nameOf(sql), text: sql, values: params })
          : this.client.query(sql, params)
      ).catch((err: unknown) => {
        // The first failure is the cause: the statements behind it fail on the aborted transaction.
        if (this.failure === undefined) this.failure = new QueryFailedError(sql, params, err as Error);
      });
      this.pending.push(sent);
      return UNREAD_ANSWER;
    }
    // Through TypeORM, for its answer's shape; sent behind the pending writes, answered after them.
    try {
      const answer = await this.db.query<unknown>(sql, params);
      await this.settle();
      return answer;
    } catch (err) {
      await Promise.allSettled(this.pending);
      throw this.failure ?? err;
    }
  }
}
