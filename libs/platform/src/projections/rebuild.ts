import { Injectable, Logger } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { LodeConfig } from '../config/lode-config';
import { connectTimeoutMs, withOwnConnection } from '../database/database';
import { oneRow, quoteIdent, rows } from '../database/sql';
import { type EventRow, toRecorded } from '../event-store/recorded';
import { PipelinedWrites } from './pipelined-writes';
import { ProjectionRegistry } from './projector';

export interface RebuildProgress {
  done: number;
  total: number;
}

/** A finished rebuild: its events, how long the replay and the vacuum after it took, and whether the vacuum was done. */
export interface RebuildResult extends RebuildProgress {
  replaySeconds: number;
  vacuumSeconds: number;
  vacuumed: boolean;
}

/** Events read per page (keyset on `global_position`), and how often the progress is reported. */
const PAGE = 10_000;
const PROGRESS_EVERY = 2000;

/**
 * A running rebuild names its connection `lode projection rebuild <done>/<total>` (PostgreSQL's
 * `application_name`, for the length of its transaction), so every Lode process sharing the database
 * can report its progress in /-/metrics: the rebuild runs in the command line, which nothing scrapes,
 * and its transaction's writes are invisible to others until it commits.
 */
export const REBUILD_APPLICATION_NAME = 'lode projection rebuild';

/** The progress a rebuilding connection's `application_name` carries, or undefined for any other name. */
export function rebuildProgressOf(applicationName: string): RebuildProgress | undefined {
  const m = /^lode projection rebuild (\d+)\/(\d+)$/.exec(applicationName);
  return m ? { done: Number(m[1]), total: Number(m[2]) } : undefined;
}

/**
 * Empties every registered read model and replays all events in `global_position` order, in one
 * transaction. TRUNCATE holds ACCESS EXCLUSIVE locks on the read models until the commit, so readers
 * wait as well as writers (on a PostgreSQL server, a request answers 503 past LODE_DB_STATEMENT_TIMEOUT_MS);
 * no one ever sees a half-built table. Outbox routes are not run, so a rebuild never re-sends a webhook
 * or re-runs a job. The projectors' writes are pipelined (PipelinedWrites): a page of events costs a
 * round trip per statement whose answer is read, not one per statement. A projector with a `replay()`
 * of its own replays through it (the audit log keeps its memory in the process).
 *
 * After the commit the rebuilt tables are vacuumed and analyzed (see `tidy`).
 */
@Injectable()
export class ProjectionRebuilder {
  constructor(
    private readonly dataSource: DataSource,
    private readonly projections: ProjectionRegistry,
    private readonly config: LodeConfig,
  ) {}

  private readonly logger = new Logger(ProjectionRebuilder.name);

  /**
   * `onVacuum` hears when the replay has committed and the vacuum of the rebuilt tables starts; the
   * result says how long each part took.
   */
  async rebuild(
    onProgress?: (p: RebuildProgress) => void,
    onVacuum?: (tables: number) => void,
  ): Promise<RebuildResult> {
    const names = [...new Set(this.projections.all().flatMap((p) => p.tables))];
    const tables = names.map(quoteIdent).join(', ');
    const started = performance.now();
    const progress = await this.replay(tables, onProgress);
    const replayed = performance.now();
    onVacuum?.(names.length);
    const vacuumed = await this.tidy(tables);
    return {
      ...progress,
      replaySeconds: (replayed - started) / 1000,
      vacuumSeconds: (performance.now() - replayed) / 1000,
      vacuumed,
    };
  }

  /** `tables`: the read models' tables, quoted and separated by commas ('' when there are none). */
  private replay(tables: string, onProgress?: (p: RebuildProgress) => void): Promise<RebuildProgress> {
    return this.dataSource.transaction(async (db) => {
      // Writers must not append while we replay, or their events would be missed.
      await db.query(`lock table events in exclusive mode`);
      if (tables) await db.query(`truncate table ${tables}`);
      const { count } = await oneRow<{ count: string }>(db, `select count(*)::bigint as count from events`);
      const progress = { done: 0, total: Number(count) };
      // `set_config(..., true)` is SET LOCAL: the name returns to the pool's when the transaction ends.
      const announce = (sql: EntityManager = db) =>
        sql.query(`select set_config('application_name', $1, true)`, [
          `${REBUILD_APPLICATION_NAME} ${progress.done}/${progress.total}`,
        ]);
      await announce();
      onProgress?.(progress);
      let after = '0';
      const replay = this.projections.replay();
      await PipelinedWrites.run(
        db,
        async (pipelined) => {
          for (;;) {
            const page = await rows<EventRow>(
              pipelined,
              `select global_position, stream_id, stream_version, type, data, metadata, recorded_at
               from events where global_position > $1 order by global_position limit $2`,
              [after, PAGE],
            );
            if (!page.length) break;
            for (const row of page) {
              await replay.apply(toRecorded(row), pipelined);
              progress.done += 1;
              if (progress.done % PROGRESS_EVERY === 0 || progress.done === progress.total) {
                await announce(pipelined);
                onProgress?.(progress);
              }
            }
            after = String(page[page.length - 1].global_position);
          }
          await replay.finish(pipelined);
        },
        { prepared: this.config.dbPreparedStatements },
      );
      return progress;
    });
  }

  /**
   * VACUUM (ANALYZE) of the rebuilt tables. A replay leaves them without planner statistics (TRUNCATE
   * forgets them) and full of dead rows: every edit it replays is an UPDATE, so a million events over
   * 10,000 projects leave 400,000 dead versions of their rows. Autovacuum would get there, in its own
   * time, and not at all where it is off; until then the planner guesses from the tables' size on
   * disk and every index scan visits the dead rows (measured: the events feed of a non-admin user
   * went from 12 ms to 288 ms a request after a rebuild of a million events). VACUUM cannot run in
   * a transaction, so this comes after the commit. A failure here leaves a correct rebuild, only a
   * slower one until autovacuum runs: it is logged, not thrown. Returns whether it was done.
   */
  private async tidy(tables: string): Promise<boolean> {
    if (!tables) return true;
    const statement = `vacuum (analyze) ${tables}`;
    try {
      if (this.config.embeddedDatabase) {
        // PGlite's one session, held by the vacuum as by the rebuild before it (and under the
        // session's own statement limit: a SET would change it for every connection sharing it).
        await this.dataSource.query(statement);
        return true;
      }
      // A connection of its own, outside the pool: the pool's connections carry the statement limit
      // and pg's client-side query timeout a second after it, neither of which a SET lifts for the
      // client, and a vacuum of a large table takes as long as it takes. It takes no lock that stops
      // readers or writers.
      await withOwnConnection(
        this.config.databaseUrl,
        {
          connectTimeoutMs: connectTimeoutMs(this.config),
          applicationName: `lode-${this.config.role}-vacuum`,
          statementTimeoutMs: 0,
        },
        (client) => client.query(statement),
      );
      return true;
    } catch (err) {
      this.logger.warn(
        `the rebuilt tables could not be vacuumed and analyzed (${(err as Error).message}); the rebuild stands, queries may be slow until autovacuum runs or "vacuumdb --analyze" is run by hand`,
      );
      return false;
    }
  }
}
