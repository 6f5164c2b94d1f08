import { MetricsTime } from 'bullmq';
import { hostname } from 'node:os';

/** When this process started, in whole seconds since the epoch (Sidekiq's `started_at`). */
const STARTED_AT = Math.floor(performance.timeOrigin / 1000);

/** Who runs a worker, as its name carries it: Sidekiq's process entry without the counts. */
export interface WorkerIdentity {
  hostname: string;
  pid: number;
  /** Seconds since the epoch. */
  startedAt: number;
  concurrency: number;
}

/**
 * The name a worker of this process gives its queue connection and every job it takes
 * (`job.processedBy`): `<pid>:<started>:<concurrency>:<hostname>`. BullMQ's `getWorkers` lists the
 * named connections of every process (Redis' CLIENT LIST; PostgreSQL's `application_name`, which keeps
 * 63 bytes of `<queue>:w:<name>`: the hostname goes last so a cut takes only its end), so any process
 * can answer for the others. No `:` may be in the hostname part (none is in a host name).
 */
export function workerName(concurrency: number): string {
  return `${process.pid}:${STARTED_AT}:${concurrency}:${hostname()}`;
}

/** The identity in a worker's name or in a `getWorkers` entry's raw connection name (`...:w:<name>`). */
export function parseWorkerName(name: string): WorkerIdentity | undefined {
  const m = /(?:^|:w:)(\d+):(\d+):(\d+):([^:]*)$/.exec(name);
  if (!m) return undefined;
  return { pid: Number(m[1]), startedAt: Number(m[2]), concurrency: Number(m[3]), hostname: m[4] };
}

/**
 * Options every Lode processor gives BullMQ (`@Processor(queue, workerOptions({ concurrency }))`):
 * its concurrency, the name above, and BullMQ's metrics, whose totals of completed and failed jobs are
 * Sidekiq's `processed` and `failed` in `GET /sidekiq/job_stats`.
 */
export function workerOptions(options: { concurrency: number }) {
  return {
    concurrency: options.concurrency,
    name: workerName(options.concurrency),
    metrics: { maxDataPoints: MetricsTime.ONE_WEEK },
  };
}
