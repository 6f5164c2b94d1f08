import { Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { DataSource, QueryFailedError } from 'typeorm';
import { LodeConfig } from '../config/lode-config';
import { rows } from './sql';

interface PgPool {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
}

/**
 * Reads whose plan PostgreSQL keeps per connection (named statements of the extended protocol), for
 * the few statements on every request's path whose planning costs more than running them: the
 * project read with the caller's levels plans in about 5 ms and runs in 0.2, so with a token
 * `GET /projects/:id` answered 300 req/s on two cores, PostgreSQL's backends planning the same
 * statement over and over (bench/RESULTS.md, PERF-2).
 *
 * Only constant texts may come here (a name per text, per pooled connection: a text built from input
 * would prepare without end). A read runs on a pooled connection, as `DataSource.query` runs it (so
 * inside a transaction it sees what is committed, as before); on the embedded database (one session,
 * held by each transaction in turn, which `DataSource.query` is routed into), and with
 * LODE_DB_PREPARED_STATEMENTS=false (a pooler in front that does not keep named statements across
 * transactions), it goes the ordinary way. A statement whose result columns
 * changed under it (another process's migration added a column to `select p.*`) is prepared again
 * under a new name.
 */
@Injectable()
export class PreparedStatements {
  /** text -> its statement's name; bounded by the constant texts that come here. */
  private readonly names = new Map<string, string>();
  /** text -> generation, bumped when PostgreSQL refuses a cached plan. */
  private readonly generations = new Map<string, number>();

  constructor(
    private readonly dataSource: DataSource,
    private readonly config: LodeConfig,
  ) {}

  async rows<T>(sql: string, params: unknown[]): Promise<T[]> {
    const pool = (this.dataSource.driver as unknown as { master?: PgPool } | undefined)?.master;
    if (!pool || this.config.embeddedDatabase || !this.config.dbPreparedStatements)
      return rows<T>(this.dataSource, sql, params);
    try {
      return (await pool.query({ name: this.nameOf(sql), text: sql, values: params })).rows as T[];
    } catch (err) {
      if ((err as { code?: string }).code === '0A000' && /cached plan/.test(String((err as Error).message))) {
        this.generations.set(sql, (this.generations.get(sql) ?? 0) + 1);
        this.names.delete(sql);
        return this.rows<T>(sql, params);
      }
      // As TypeORM reports a failed query, so the error filter and the database watch see the same.
      if (err instanceof Error && 'code' in err && typeof err.code === 'string' && !/^(E[A-Z]+)$/.test(err.code))
        throw new QueryFailedError(sql, params, err);
      throw err;
    }
  }

  async firstRow<T>(sql: string, params: unknown[]): Promise<T | undefined> {
    const [row] = await this.rows<T>(sql, params);
    return row;
  }

  private nameOf(sql: string): string {
    let name = this.names.get(sql);
    if (name === undefined) {
      name = `lode_${createHash('sha1').update(sql).digest('hex').slice(0, 20)}_${this.generations.get(sql) ?? 0}`;
      this.names.set(sql, name);
    }
    return name;
  }
}
