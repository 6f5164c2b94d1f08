import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown, Optional } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { LodeConfig } from '../config/lode-config';

/** Whether this process keeps the statistics: where workers run (one of them does the work at a time). */
export const PLANNER_STATISTICS_ACTIVE = Symbol('PLANNER_STATISTICS_ACTIVE');

/** How often the tables' changes are looked at: autovacuum's own default nap (autovacuum_naptime). */
const INTERVAL_MS = 60_000;
const LOCK = 7_402_114; // any constant: one analyzer at a time per database

/**
 * The tables of the current schema changed enough since their last analysis to need another, by
 * autovacuum's own rule (autovacuum_analyze_threshold 50 + autovacuum_analyze_scale_factor 0.1 of the
 * rows): a table never analyzed counts every row it holds as a change.
 */
export async function staleTables(runner: { query(sql: string): Promise<unknown> }): Promise<string[]> {
  const rows = (await runner.query(
    `select relname::text as name from pg_stat_user_tables
      where schemaname = current_schema() and n_mod_since_analyze > 50 + 0.1 * n_live_tup
      order by relname`,
  )) as { name: string }[];
  return rows.map((r) => r.name);
}

/**
 * Analyzes Lode's tables where nothing else does: when PostgreSQL runs with `autovacuum = off`, no
 * table ever gets planner statistics, and the plans made without them are slow beyond reason. Measured
 * on 10,000 projects never analyzed: a signed-in `GET /projects?per_page=100` took 480 ms (a
 * nested loop scanning every namespace for each project, the caller's projects searched row by row
 * instead of hashed), against some 30 ms once analyzed. With autovacuum on (PostgreSQL's default)
 * this does nothing. Vacuuming, which autovacuum also does, stays the operator's (the start-up warns).
 */
@Injectable()
export class PlannerStatistics implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Database');
  private timer?: NodeJS.Timeout;
  private running?: Promise<string[]>;

  constructor(
    private readonly dataSource: DataSource,
    private readonly config: LodeConfig,
    @Optional() @Inject(PLANNER_STATISTICS_ACTIVE) private readonly active: boolean = false,
  ) {}

  onApplicationBootstrap(): void {
    // The embedded database has no autovacuum and one session, which an analysis would hold: left out.
    if (!this.active || this.config.embeddedDatabase) return;
    this.timer = setInterval(() => void this.analyzeIfUnattended(), INTERVAL_MS);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /**
   * When autovacuum is off (and the server counts changes, `track_counts`), analyzes the stale tables;
   * answers the tables analyzed. A pass already under way (here, or in another process) is not doubled.
   */
  analyzeIfUnattended(): Promise<string[]> {
    this.running ??= this.pass().finally(() => (this.running = undefined));
    return this.running;
  }

  private async pass(): Promise<string[]> {
    const runner = this.dataSource.createQueryRunner();
    try {
      const [settings] = (await runner.query(
        `select current_setting('autovacuum') = 'on' as autovacuum, current_setting('track_counts') = 'on' as counts`,
      )) as { autovacuum: boolean; counts: boolean }[];
      if (settings.autovacuum || !settings.counts) return [];
      // A session lock on the runner's own connection: one process analyzes while the others skip.
      const [{ locked }] = (await runner.query(`select pg_try_advisory_lock($1) as locked`, [LOCK])) as {
        locked: boolean;
      }[];
      if (!locked) return [];
      try {
        const tables = await staleTables(runner);
        for (const table of tables) await runner.query(`analyze "${table.replace(/"/g, '""')}"`);
        if (tables.length)
          this.logger.log(`analyzed ${tables.length} table(s) autovacuum leaves alone: ${tables.join(', ')}`);
        return tables;
      } finally {
        await runner.query(`select pg_advisory_unlock($1)`, [LOCK]).catch(() => undefined);
      }
    } catch (err) {
      this.logger.warn(`could not analyze the tables: ${String(err)}`);
      return [];
    } finally {
      await runner.release();
    }
  }
}
