import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { Queue } from 'bullmq';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { LodeConfig } from '../config/lode-config';
import { rows, type Sql } from '../database/sql';
import { JobKinds, type JobData } from '../queue/job-processor';
import { openQueue } from '../queue/queue-connection';
import { OUTBOX_CHANNEL, queuedJobId } from './outbox';

interface OutboxRow {
  id: string;
  queue: string;
  name: string;
  job_id: string;
  dispatch_key: string;
  data: unknown;
  options: Record<string, unknown>;
}

interface UnfinishedRow {
  id: string;
  queue: string;
  job_id: string;
  dispatch_key: string;
  data: JobData;
  redispatches: number;
}

const BATCH = 100;
const ADD_TIMEOUT_MS = 3000;
/** Unfinished rows looked at per sweep, oldest first. */
const SWEEP_BATCH = 500;
/** Times a job may go missing from Redis before it is given up as failed. */
export const MAX_REDISPATCHES = 5;

/**
 * Moves outbox rows into BullMQ: claims undispatched rows (`for update skip locked`, so several
 * relays never take the same row), adds each with its job id (the logical id and the row's dispatch
 * key) and stamps it dispatched. Woken by NOTIFY at commit, with a polling fallback. While Redis is
 * away the rows simply wait.
 *
 * A row is done when the processor records its job finished (JobProcessor, in PostgreSQL), not when
 * Redis took it. Every LODE_OUTBOX_SWEEP_MS the sweep looks at rows dispatched longer ago than that
 * and still unfinished, and asks Redis about their jobs: one Redis lost (restarted without its data,
 * evicted, a failover) is sent again; one Redis has as completed while PostgreSQL does not (a
 * restored database) is sent again under a new id; one that failed without its processor hearing
 * (stalled past its limit), or that went missing MAX_REDISPATCHES times, is given up: recorded
 * failed with the reason, and its processor told, so no fork stays `scheduled` and no housekeeping
 * lease stays taken.
 */
@Injectable()
export class OutboxRelay implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('OutboxRelay');
  private readonly queues = new Map<string, Queue>();
  private listener?: Client;
  private timer?: NodeJS.Timeout;
  private sweeper?: NodeJS.Timeout;
  private sweeping?: Promise<unknown>;
  private running?: Promise<void>;
  private again = false;
  private stopped = false;
  private lastFailure = '';

  constructor(
    private readonly dataSource: DataSource,
    private readonly config: LodeConfig,
    private readonly kinds: JobKinds,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.listen();
    this.timer = setInterval(() => this.wake(), this.config.outboxPollMs);
    if (this.config.outboxSweepMs > 0)
      this.sweeper = setInterval(() => {
        this.sweeping ??= this.sweep()
          .catch((err) => this.logFailure(`outbox sweep: ${String(err)}`))
          .finally(() => (this.sweeping = undefined));
      }, this.config.outboxSweepMs);
    this.wake();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    if (this.sweeper) clearInterval(this.sweeper);
    await this.running;
    await this.sweeping;
    await this.listener?.end().catch(() => undefined);
    await Promise.all([...this.queues.values()].map((q) => q.close().catch(() => undefined)));
  }

  /** Runs a relay pass now, or right after the current one. */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.drain()
      .then(() => undefined)
      .catch((err) => this.logFailure(String(err)))
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** Relays until no undispatched row is left or a delivery fails; resolves with the number relayed. */
  async drain(): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await this.relayBatch();
      total += n;
      if (n < BATCH) return total;
    }
  }

  private async relayBatch(): Promise<number> {
    // The embedded database has one session, held by a transaction until it ends: BullMQ's add, on
    // connections of its own, would wait behind the claim's transaction for good. Only this process
    // opens that database, so no other relay claims rows and no lock is needed; a row added twice
    // (a crash between add and stamp) is one job, its id being the row's.
    if (this.config.embeddedDatabase) return this.relayRows(this.dataSource, '');
    return this.dataSource.transaction((db) => this.relayRows(db, 'for update skip locked'));
  }

  private async relayRows(db: Sql, lock: string): Promise<number> {
    const pending = await rows<OutboxRow>(
      db,
      `select id, queue, name, job_id, dispatch_key, data, options from outbox
          where dispatched_at is null order by id limit $1 ${lock}`,
      [BATCH],
    );
    const done: string[] = [];
    // One round trip to Redis per queue and batch (BullMQ's addBulk, a MULTI of the adds): a busy
    // fan-out hands the relay hundreds of deliveries a second. A batch that fails waits whole and is
    // added again later; an add that went through before the failure is the same job id, kept once.
    for (const [queue, batch] of groupBy(pending, (r) => r.queue)) {
      try {
        await withTimeout(
          this.queue(queue).addBulk(
            batch.map((row) => ({
              name: row.name,
              data: row.data,
              opts: {
                ...row.options,
                jobId: queuedJobId(row.job_id, row.dispatch_key),
                removeOnComplete: { age: 24 * 3600, count: 10000 },
                removeOnFail: { age: 7 * 24 * 3600 },
              },
            })),
          ),
          ADD_TIMEOUT_MS,
        );
        done.push(...batch.map((r) => r.id));
      } catch (err) {
        await db.query(`update outbox set attempts = attempts + 1, last_error = $2 where id = any($1::bigint[])`, [
          batch.map((r) => r.id),
          String(err),
        ]);
        this.logFailure(`${batch.length} jobs of ${queue} wait (${batch[0].job_id}...): ${String(err)}`);
        break;
      }
    }
    if (done.length) {
      await db.query(
        `update outbox set dispatched_at = clock_timestamp(), last_error = null where id = any($1::bigint[])`,
        [done],
      );
      if (this.lastFailure) this.logger.log(`relaying again after: ${this.lastFailure}`);
      this.lastFailure = '';
    }
    return done.length === pending.length ? done.length : 0;
  }

  /**
   * Looks at rows dispatched more than LODE_OUTBOX_SWEEP_MS ago whose jobs have not finished, and
   * sends again, or gives up, those whose job Redis no longer has waiting or running. Resolves with
   * the number of rows sent again or given up.
   */
  async sweep(): Promise<number> {
    const unfinished = await rows<UnfinishedRow>(
      this.dataSource,
      `select id, queue, job_id, dispatch_key, data, redispatches from outbox
        where finished_at is null and dispatched_at < clock_timestamp() - $1 * interval '1 millisecond'
        order by dispatched_at limit $2`,
      [this.config.outboxSweepMs, SWEEP_BATCH],
    );
    let acted = 0;
    for (const row of unfinished) {
      const job = await withTimeout(
        this.queue(row.queue).getJob(queuedJobId(row.job_id, row.dispatch_key)),
        ADD_TIMEOUT_MS,
      );
      const state = job ? await withTimeout(job.getState(), ADD_TIMEOUT_MS) : 'missing';
      if (state === 'failed') {
        // Failed for good without its processor hearing (a job that stalled past its limit).
        acted += await this.giveUp(row, job?.failedReason || 'the job failed');
      } else if (state === 'missing' || state === 'unknown' || state === 'completed') {
        if (row.redispatches >= MAX_REDISPATCHES) {
          acted += await this.giveUp(
            row,
            `the job queue lost this job ${row.redispatches + 1} times (is Redis keeping its data? see README, Reliability)`,
          );
          continue;
        }
        // Completed in Redis but not in PostgreSQL: the database was restored to before the job ran;
        // it runs again under a new id (Redis keeps the old one as done). The update applies only to
        // the dispatch this sweep looked at, so two workers sweeping at once send it once.
        const renew = state === 'completed';
        const [, count] = await this.dataSource.query<[unknown, number]>(
          `update outbox set dispatched_at = null, redispatches = redispatches + 1, last_error = $2
                  ${renew ? ', dispatch_key = gen_random_uuid()' : ''}
            where id = $1 and finished_at is null and dispatch_key = $3 and dispatched_at is not null`,
          [row.id, renew ? 'finished in Redis, not recorded in PostgreSQL' : 'lost by the job queue', row.dispatch_key],
        );
        if (count) {
          this.logger.warn(
            `job ${row.job_id} (${row.queue}) ${renew ? 'not recorded as finished' : 'lost by Redis'}; sending it again`,
          );
          acted++;
        }
      }
    }
    if (acted) this.wake();
    return acted;
  }

  private async giveUp(row: UnfinishedRow, reason: string): Promise<number> {
    const [, count] = await this.dataSource.query<[unknown, number]>(
      `update outbox set finished_at = clock_timestamp(), outcome = 'failed', last_error = $2
        where id = $1 and finished_at is null`,
      [row.id, reason],
    );
    if (!count) return 0;
    this.logger.warn(`job ${row.job_id} (${row.queue}) given up: ${reason}`);
    await this.kinds.abandoned(row.queue, row.data, reason);
    return 1;
  }

  private queue(name: string): Queue {
    let q = this.queues.get(name);
    if (!q) {
      q = openQueue(this.config, name); // connection errors surface through add(), where they are logged once
      this.queues.set(name, q);
    }
    return q;
  }

  private async listen(): Promise<void> {
    try {
      const client = new Client({ connectionString: this.config.databaseUrl, keepAlive: true });
      client.on('error', () => undefined);
      client.on('notification', () => this.wake());
      await client.connect();
      await client.query(`listen ${OUTBOX_CHANNEL}`);
      this.listener = client;
    } catch (err) {
      this.logger.warn(`LISTEN failed, polling only: ${String(err)}`);
    }
  }

  private logFailure(message: string): void {
    if (message !== this.lastFailure) this.logger.warn(message);
    this.lastFailure = message;
  }
}

function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = out.get(k);
    if (list) list.push(item);
    else out.set(k, [item]);
  }
  return out;
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let t: NodeJS.Timeout;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      t = setTimeout(() => reject(new Error(`queue did not answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(t));
}
