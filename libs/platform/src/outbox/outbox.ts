import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { GroupCommit } from '../database/group-commit';
import { rows } from '../database/sql';
import type { OutboxJob } from './outbox-route';

/** Notified at the commit of a transaction that wrote outbox rows: the relay listens and dispatches them. */
export const OUTBOX_CHANNEL = 'lode_outbox';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The BullMQ id of an outbox row's job: the logical id and the row's random dispatch key, so the id
 * is new for every row (and every re-dispatch), never one a Redis remembers from an earlier life.
 */
export function queuedJobId(jobId: string, dispatchKey: string): string {
  return `${jobId}@${dispatchKey}`;
}

/** The dispatch key in a BullMQ job id, or undefined for a job that did not come from the outbox. */
export function dispatchKeyOf(queuedId: string | undefined): string | undefined {
  const key = queuedId?.slice(queuedId.lastIndexOf('@') + 1);
  return key && UUID.test(key) ? key : undefined;
}

/** How a job ended for good: it ran to the end, or failed past its last attempt (or was given up). */
export type JobOutcome = 'completed' | 'failed';

/** One queue's rows in the outbox, for operators (`lode outbox status`, `lode check`); ages in seconds. */
export interface OutboxQueueStatus {
  queue: string;
  /** Rows the relay has not handed to the job queue yet, and the age of the oldest. */
  undispatched: number;
  oldestUndispatchedAge: number | null;
  /** Rows handed to the job queue whose job has not finished (waiting, running or retrying), and the oldest's age. */
  unfinished: number;
  oldestUnfinishedAge: number | null;
  completed: number;
  /** Rows whose job failed for good (past its last attempt, or given up), all time and in the last day. */
  failed: number;
  failedLastDay: number;
  lastFailedAt: Date | null;
}

interface OutboxStatusRow {
  queue: string;
  undispatched: string;
  oldest_undispatched: number | null;
  unfinished: string;
  oldest_unfinished: number | null;
  completed: string;
  failed: string;
  failed_last_day: string;
  last_failed_at: Date | null;
}

/**
 * The outbox's ledger in PostgreSQL: which jobs have finished (written by the processors, so a job
 * Redis forgot is sent again, see OutboxRelay.sweep), and jobs that a job causes (a push's fan-out
 * writes one delivery per hook), which then follow the outbox's rules like the jobs of events.
 */
@Injectable()
export class Outbox {
  /**
   * Each job asks for its cause when it starts and records its end when it completes: two statements
   * per job, made in groups under load (a webhook worker runs hundreds of jobs a second).
   */
  private readonly causes = new GroupCommit<string, string | undefined>((keys) => this.causesOf(keys));
  private readonly completions = new GroupCommit<string, void>((keys) => this.completed(keys));

  constructor(private readonly dataSource: DataSource) {}

  /** Writes jobs caused by the job `causedBy` (its BullMQ id); each logical job id is written once. */
  async enqueue(causedBy: string | undefined, jobs: OutboxJob[]): Promise<void> {
    if (!jobs.length) return;
    const key = dispatchKeyOf(causedBy) ?? null;
    // One statement for the whole fan-out (a system event makes one row per system hook), in the
    // jobs' order, and the relay's wake-up with it: committed together, as one implicit transaction.
    await this.dataSource.query(
      `with ins as (
         insert into outbox (global_position, queue, name, job_id, data, options)
         select (select global_position from outbox where dispatch_key = $1::uuid), j.queue, j.name, j.job_id, j.data, j.options
           from rows from (jsonb_to_recordset($2::jsonb) as (queue text, name text, job_id text, data jsonb, options jsonb))
                with ordinality as j(queue, name, job_id, data, options, n)
          order by j.n
         on conflict (job_id) do nothing
         returning 1)
       select pg_notify($3, '') from (select count(*) from ins) c`,
      [
        key,
        JSON.stringify(
          jobs.map((job) => ({
            queue: job.queue,
            name: job.name,
            job_id: job.jobId,
            data: job.data,
            options: job.options ?? {},
          })),
        ),
        OUTBOX_CHANNEL,
      ],
    );
  }

  /**
   * The request id of the change that caused the job (its BullMQ id): the event its outbox row was
   * written for, or for a job another job wrote, that job's event. Undefined when no request caused it.
   */
  async causeOf(queuedId: string | undefined): Promise<string | undefined> {
    const key = dispatchKeyOf(queuedId);
    if (!key) return undefined;
    return this.causes.run(key);
  }

  private async causesOf(keys: string[]): Promise<(string | undefined)[]> {
    const found = await rows<{ key: string; request_id: string | null }>(
      this.dataSource,
      `select o.dispatch_key::text as key, e.metadata->>'requestId' as request_id
         from outbox o join events e on e.global_position = o.global_position
        where o.dispatch_key = any($1::uuid[])`,
      [keys],
    );
    const byKey = new Map(found.map((r) => [r.key, r.request_id ?? undefined]));
    return keys.map((k) => byKey.get(k));
  }

  /**
   * Counts and oldest ages per queue, read in one pass over the table. Ages run from the row's
   * creation (its event), which is what a waiting user feels.
   */
  async status(): Promise<OutboxQueueStatus[]> {
    const found = await rows<OutboxStatusRow>(
      this.dataSource,
      `select queue,
              count(*) filter (where dispatched_at is null and finished_at is null) as undispatched,
              extract(epoch from clock_timestamp() - min(created_at) filter (where dispatched_at is null and finished_at is null))::float8
                as oldest_undispatched,
              count(*) filter (where dispatched_at is not null and finished_at is null) as unfinished,
              extract(epoch from clock_timestamp() - min(created_at) filter (where dispatched_at is not null and finished_at is null))::float8
                as oldest_unfinished,
              count(*) filter (where outcome = 'completed') as completed,
              count(*) filter (where outcome = 'failed') as failed,
              count(*) filter (where outcome = 'failed' and finished_at > clock_timestamp() - interval '1 day') as failed_last_day,
              max(finished_at) filter (where outcome = 'failed') as last_failed_at
         from outbox group by queue order by queue`,
    );
    return found.map((r) => ({
      queue: r.queue,
      undispatched: Number(r.undispatched),
      oldestUndispatchedAge: r.oldest_undispatched,
      unfinished: Number(r.unfinished),
      oldestUnfinishedAge: r.oldest_unfinished,
      completed: Number(r.completed),
      failed: Number(r.failed),
      failedLastDay: Number(r.failed_last_day),
      lastFailedAt: r.last_failed_at,
    }));
  }

  /**
   * Makes the row of a failed job (its BullMQ id) unfinished again, before an operator retries the
   * job, so its new outcome is recorded (`finished` keeps the first report). The dispatch time is
   * renewed too: the sweep looks only at rows dispatched longer ago than LODE_OUTBOX_SWEEP_MS, so it
   * does not give the job up again in the moment before the queue has taken the retry. False when no
   * such failed row exists (a job not from the outbox, or one whose failure was not recorded).
   */
  async reopen(queuedId: string | undefined): Promise<boolean> {
    const key = dispatchKeyOf(queuedId);
    if (!key) return false;
    const [, count] = await this.dataSource.query<[unknown, number]>(
      `update outbox set finished_at = null, outcome = null, dispatched_at = clock_timestamp()
        where dispatch_key = $1 and outcome = 'failed'`,
      [key],
    );
    return count > 0;
  }

  /**
   * Records that the job (its BullMQ id) finished for good; a later report does not overwrite the
   * first, except a success after a failure: an operator retried the failed job (`lode jobs retry`,
   * the /-/queues dashboard) and it went through.
   */
  async finished(queuedId: string | undefined, outcome: JobOutcome, error?: string): Promise<void> {
    const key = dispatchKeyOf(queuedId);
    if (!key) return;
    // The common case, a job that completed, is recorded with the others completing meanwhile.
    if (outcome === 'completed' && error === undefined) return this.completions.run(key);
    await this.dataSource.query(
      `update outbox set finished_at = clock_timestamp(), outcome = $2, last_error = coalesce($3, last_error)
        where dispatch_key = $1 and (finished_at is null or ($2 = 'completed' and outcome = 'failed'))`,
      [key, outcome, error?.slice(0, 2000) ?? null],
    );
  }

  private async completed(keys: string[]): Promise<void[]> {
    const record = () =>
      this.dataSource.query(
        `update outbox set finished_at = clock_timestamp(), outcome = 'completed'
          where dispatch_key = any($1::uuid[]) and (finished_at is null or outcome = 'failed')`,
        [keys],
      );
    // A job whose completion is not recorded fails and runs again (a webhook is sent twice): one
    // failed statement must not do that to a whole group, so it is tried again once before.
    await record().catch(async () => {
      await new Promise((r) => setTimeout(r, 200));
      await record();
    });
    return [];
  }
}
