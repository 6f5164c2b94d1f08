import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown, Optional } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { LodeConfig } from '../config/lode-config';
import { connectTimeoutMs, withOwnConnection } from './database';
import { quoteIdent, type PgClient } from './sql';

/** Whether this process keeps the statistics: where workers run (one of them does the work at a time). */
export const PLANNER_STATISTICS_ACTIVE = Symbol('PLANNER_STATISTICS_ACTIVE');

/** How often the tables' changes are looked at: autovacuum's own default nap (autovacuum_naptime). */
const INTERVAL_MS = 60_000;
/**
 * One analyzer at a time per database. Lode's advisory locks: 7_402_113 migrations, 7_402_114 root's
 * seeding, 7_402_115 the ghost user, this one.
 */
export const PLANNER_STATISTICS_LOCK = 7_402_116;

/** A table by schema and name (Lode's own, and BullMQ's where the queues live in PostgreSQL). */
export interface StaleTable {
  schema: string;
  name: string;
  /** Holds more dead rows than autovacuum's rule allows (asked for only where Lode also vacuums). */
  needsVacuum: boolean;
}

/**
 * The user tables changed enough since their last analysis to need another, by autovacuum's own
 * rule (autovacuum_analyze_threshold 50 + autovacuum_analyze_scale_factor 0.1 of the rows): a table
 * never analyzed counts every row it holds as a change. With `vacuum`, also those whose dead rows
 * pass autovacuum's vacuum rule (autovacuum_vacuum_threshold 50 + autovacuum_vacuum_scale_factor
 * 0.2 of the rows), marked `needsVacuum`.
 */
export async function staleTables(client: PgClient, { vacuum = false } = {}): Promise<StaleTable[]> {
  const { rows } = await client.query(
    `select schemaname::text as schema, relname::text as name,
            $1::boolean and n_dead_tup > 50 + 0.2 * n_live_tup as "needsVacuum"
       from pg_stat_user_tables
      where n_mod_since_analyze > 50 + 0.1 * n_live_tup or ($1::boolean and n_dead_tup > 50 + 0.2 * n_live_tup)
      order by schemaname, relname`,
    [vacuum],
  );
  return rows as StaleTable[];
}

/**
 * Analyzes Lode's tables where nothing else does: when PostgreSQL runs with `autovacuum = off`, no
 * table ever gets planner statistics, and the plans made without them are slow beyond reason. Measured
 * on 10,000 projects never analyzed: a signed-in `GET /projects?per_page=100` took 480 ms (a
 * nested loop scanning every namespace for each project, the caller's projects searched row by row
 * instead of hashed), against some 30 ms once analyzed. With autovacuum on (PostgreSQL's default)
 * this does nothing. Vacuuming, which autovacuum also does, stays the operator's (the start-up warns).
 *
 * The embedded database (PGlite) runs no autovacuum at all, whatever its `autovacuum` setting says,
 * and has no operator's vacuumdb beside it: there this also vacuums the tables autovacuum's rule
 * would, so the outbox's and the read models' dead rows do not pile up. It works on PGlite's one
 * session through the pool, a statement at a time (each holds the session only while it runs: an
 * analysis or vacuum of an embedded installation's tables takes milliseconds), with no advisory lock
 * (one process serves the embedded database) and no SET (it would change the session for everyone).
 */
@Injectable()
export class PlannerStatistics implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Database');
  private timer?: NodeJS.Timeout;
  private running?: Promise<string[]>;

  constructor(
    private readonly config: LodeConfig,
    private readonly dataSource: DataSource,
    @Optional() @Inject(PLANNER_STATISTICS_ACTIVE) private readonly active: boolean = false,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.active) return;
    this.timer = setInterval(() => void this.analyzeIfUnattended(), INTERVAL_MS);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    // On a server a pass under way is not waited for: its connection is its own, and ends with the
    // process. On PGlite it runs on the pool about to close: its statements take milliseconds.
    if (this.config.embeddedDatabase) await this.running;
  }

  /**
   * When autovacuum is off (and the server counts changes, `track_counts`), analyzes the stale tables;
   * answers those analyzed (`schema.table`). A pass already under way (here, or in another process)
   * is not doubled.
   */
  analyzeIfUnattended(): Promise<string[]> {
    this.running ??= (this.config.embeddedDatabase ? this.embeddedPass() : this.pass()).finally(
      () => (this.running = undefined),
    );
    return this.running;
  }

  /** On PGlite: analyzes, and vacuums, what autovacuum would have; answers the tables done (`schema.table`). */
  private async embeddedPass(): Promise<string[]> {
    const session = {
      query: async (sql: string, params?: unknown[]) => ({ rows: await this.dataSource.query<unknown[]>(sql, params) }),
    };
    try {
      // The one backend reports its change counters at most once a second, after a statement; this
      // asks it to at the end of this one, so the next read sees every change made so far.
      await session.query(`select pg_stat_force_next_flush()`);
      const stale = await staleTables(session, { vacuum: true });
      return await this.upkeep(stale, (table) =>
        session.query(`${table.needsVacuum ? 'vacuum (analyze)' : 'analyze'} ${qualified(table)}`),
      );
    } catch (err) {
      this.logger.warn(`could not analyze the tables: ${String(err)}`);
      return [];
    }
  }

  /** Runs `statement` for each table, going on past one that fails; logs and answers those done. */
  private async upkeep(tables: StaleTable[], statement: (table: StaleTable) => Promise<unknown>): Promise<string[]> {
    const done: string[] = [];
    let vacuumed = 0;
    for (const table of tables) {
      const name = `${table.schema}.${table.name}`;
      try {
        await statement(table);
        done.push(name);
        if (table.needsVacuum) vacuumed += 1;
      } catch (err) {
        // One table that cannot be kept (dropped meanwhile, say) does not keep the others waiting.
        this.logger.warn(`could not ${table.needsVacuum ? 'vacuum' : 'analyze'} ${name}: ${String(err)}`);
      }
    }
    if (done.length)
      this.logger.log(
        `analyzed ${done.length} table(s) autovacuum leaves alone${vacuumed ? ` (${vacuumed} vacuumed too)` : ''}: ${done.join(', ')}`,
      );
    return done;
  }

  /**
   * On a connection of its own without a statement limit (an ANALYZE of a large table samples for as
   * long as it takes, and the pool's limit would end it), whose end also releases the lock.
   */
  private async pass(): Promise<string[]> {
    const options = {
      connectTimeoutMs: connectTimeoutMs(this.config),
      applicationName: `lode-${this.config.role}-analyze`,
      statementTimeoutMs: 0,
    };
    try {
      return await withOwnConnection(this.config.databaseUrl, options, async (client) => {
        const { rows } = await client.query<{ autovacuum: boolean; counts: boolean; locked: boolean }>(
          `select current_setting('autovacuum') = 'on' as autovacuum, current_setting('track_counts') = 'on' as counts`,
        );
        if (rows[0].autovacuum || !rows[0].counts) return [];
        const lock = await client.query<{ locked: boolean }>(`select pg_try_advisory_lock($1) as locked`, [
          PLANNER_STATISTICS_LOCK,
        ]);
        if (!lock.rows[0].locked) return [];
        return this.upkeep(await staleTables(client), (table) => client.query(`analyze ${qualified(table)}`));
      });
    } catch (err) {
      this.logger.warn(`could not analyze the tables: ${String(err)}`);
      return [];
    }
  }
}

const qualified = (table: StaleTable) => `${quoteIdent(table.schema)}.${quoteIdent(table.name)}`;
