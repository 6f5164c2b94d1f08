import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { firstRow } from '../database/sql';
import { OUTBOX_CHANNEL } from '../event-store/pg-event-store';
import type { OutboxJob } from './outbox-route';

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

/**
 * The outbox's ledger in PostgreSQL: which jobs have finished (written by the processors, so a job
 * Redis forgot is sent again, see OutboxRelay.sweep), and jobs that a job causes (a push's fan-out
 * writes one delivery per hook), which then follow the outbox's rules like the jobs of events.
 */
@Injectable()
export class Outbox {
  constructor(private readonly dataSource: DataSource) {}

  /** Writes jobs caused by the job `causedBy` (its BullMQ id); each logical job id is written once. */
  async enqueue(causedBy: string | undefined, jobs: OutboxJob[]): Promise<void> {
    if (!jobs.length) return;
    const key = dispatchKeyOf(causedBy) ?? null;
    await this.dataSource.transaction(async (db) => {
      for (const job of jobs)
        await db.query(
          `insert into outbox (global_position, queue, name, job_id, data, options)
           values ((select global_position from outbox where dispatch_key = $1::uuid), $2, $3, $4, $5, $6)
           on conflict (job_id) do nothing`,
          [key, job.queue, job.name, job.jobId, JSON.stringify(job.data), JSON.stringify(job.options ?? {})],
        );
      await db.query(`select pg_notify($1, '')`, [OUTBOX_CHANNEL]);
    });
  }

  /**
   * The request id of the change that caused the job (its BullMQ id): the event its outbox row was
   * written for, or for a job another job wrote, that job's event. Undefined when no request caused it.
   */
  async causeOf(queuedId: string | undefined): Promise<string | undefined> {
    const key = dispatchKeyOf(queuedId);
    if (!key) return undefined;
    const row = await firstRow<{ request_id: string | null }>(
      this.dataSource,
      `select e.metadata->>'requestId' as request_id
         from outbox o join events e on e.global_position = o.global_position
        where o.dispatch_key = $1`,
      [key],
    );
    return row?.request_id ?? undefined;
  }

  /**
   * Records that the job (its BullMQ id) finished for good; a later report does not overwrite the
   * first, except a success after a failure: an operator retried the failed job (`lode jobs retry`,
   * the /-/queues dashboard) and it went through.
   */
  async finished(queuedId: string | undefined, outcome: JobOutcome, error?: string): Promise<void> {
    const key = dispatchKeyOf(queuedId);
    if (!key) return;
    await this.dataSource.query(
      `update outbox set finished_at = clock_timestamp(), outcome = $2, last_error = coalesce($3, last_error)
        where dispatch_key = $1 and (finished_at is null or ($2 = 'completed' and outcome = 'failed'))`,
      [key, outcome, error?.slice(0, 2000) ?? null],
    );
  }
}
