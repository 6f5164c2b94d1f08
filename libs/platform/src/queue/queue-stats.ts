import { Injectable } from '@nestjs/common';
import type { Job, Queue } from 'bullmq';
import { Unavailable } from '../errors';
import { JobKinds } from './job-processor';
import { QueueHandles } from './queue-handles';
import { parseWorkerName, workerName, type WorkerIdentity } from './worker-identity';

/** One queue in `GET /sidekiq/queue_metrics`. */
export interface QueueMetric {
  /** Jobs waiting for a worker: ready now (waiting, prioritized) or not yet (delayed, a retry's backoff). */
  backlog: number;
  /** Whole seconds the oldest ready job has waited; 0 when none waits. */
  latency: number;
}

/** One process in `GET /sidekiq/process_metrics`, Sidekiq's fields. */
export interface WorkerProcess {
  hostname: string;
  pid: number;
  tag: string;
  /** ISO 8601, as GitLab serializes `Time.at(started_at)`. */
  started_at: string;
  queues: string[];
  labels: string[];
  concurrency: number;
  busy: number;
}

/** `GET /sidekiq/job_stats`' `jobs`. */
export interface JobStats {
  /** Jobs that ran to an end, completed or failed for good, since BullMQ's metrics began counting. */
  processed: number;
  /** Jobs that failed for good (past their last attempt) since then. */
  failed: number;
  /** Jobs in every queue's backlog. */
  enqueued: number;
  /** Failed jobs the queues keep (7 days), which the dashboard can retry: Sidekiq's dead set. */
  dead: number;
}

/** Sidekiq's `tag`: the application's name. */
const TAG = 'lode';
/** How long one reading may wait for the queue backend before the answer is 503. */
const READ_TIMEOUT_MS = 5000;

/**
 * GitLab's Sidekiq metrics, read from BullMQ through the queue handles only (no Redis command of its
 * own, so any backend `openQueue` chooses serves them). The processes are those BullMQ's `getWorkers`
 * lists (every process's named workers, see `workerName`) and this process's own running workers.
 */
@Injectable()
export class QueueStats {
  constructor(
    private readonly handles: QueueHandles,
    private readonly kinds: JobKinds,
  ) {}

  async queueMetrics(): Promise<Record<string, QueueMetric>> {
    const entries = await read(
      Promise.all(this.handles.all().map(async (q) => [q.name, await queueMetric(q)] as const)),
    );
    return Object.fromEntries(entries);
  }

  async processMetrics(): Promise<WorkerProcess[]> {
    const queues = this.handles.all();
    const [listed, active] = await read(
      Promise.all([
        Promise.all(queues.map(async (q) => ({ queue: q.name, workers: await listedWorkers(q) }))),
        Promise.all(queues.map((q) => q.getJobs(['active']))),
      ]),
    );
    const processes = new Map<string, WorkerProcess>();
    const add = (who: WorkerIdentity, queue: string) => {
      const key = processKey(who);
      let p = processes.get(key);
      if (!p) {
        p = {
          hostname: who.hostname,
          pid: who.pid,
          tag: TAG,
          started_at: new Date(who.startedAt * 1000).toISOString(),
          queues: [],
          labels: [],
          concurrency: 0,
          busy: 0,
        };
        processes.set(key, p);
      }
      // One worker per queue and process: a second listing of the same (its own, and getWorkers') counts once.
      if (!p.queues.includes(queue)) {
        p.queues.push(queue);
        p.concurrency += who.concurrency;
      }
    };
    for (const { queue, worker } of this.kinds.workers()) {
      const who = parseWorkerName(worker.opts.name ?? workerName(worker.concurrency));
      if (who && worker.isRunning()) add({ ...who, concurrency: worker.concurrency }, queue);
    }
    for (const { queue, workers } of listed) for (const who of workers) add(who, queue);
    for (const job of active.flat() as Job[]) {
      const who = job.processedBy ? parseWorkerName(job.processedBy) : undefined;
      const p = who && processes.get(processKey(who));
      if (p) p.busy += 1;
    }
    for (const p of processes.values()) p.queues.sort();
    return [...processes.values()].sort((a, b) => a.hostname.localeCompare(b.hostname) || a.pid - b.pid);
  }

  async jobStats(): Promise<JobStats> {
    const perQueue = await read(
      Promise.all(
        this.handles.all().map(async (q) => {
          const [completed, failed, counts] = await Promise.all([
            q.getMetrics('completed', 0, 0),
            q.getMetrics('failed', 0, 0),
            q.getJobCounts('waiting', 'prioritized', 'delayed', 'failed'),
          ]);
          return { completed: completed.meta.count, failed: failed.meta.count, counts };
        }),
      ),
    );
    const stats: JobStats = { processed: 0, failed: 0, enqueued: 0, dead: 0 };
    for (const { completed, failed, counts } of perQueue) {
      stats.processed += completed + failed;
      stats.failed += failed;
      stats.enqueued += backlogOf(counts);
      stats.dead += counts.failed ?? 0;
    }
    return stats;
  }
}

const processKey = (who: WorkerIdentity) => `${who.hostname}\n${who.pid}\n${who.startedAt}`;

const backlogOf = (counts: Record<string, number>) =>
  (counts.waiting ?? 0) + (counts.prioritized ?? 0) + (counts.delayed ?? 0);

async function queueMetric(queue: Queue): Promise<QueueMetric> {
  const [counts, [oldest]] = await Promise.all([
    queue.getJobCounts('waiting', 'prioritized', 'delayed'),
    // The waiting list's far end: the job that has waited longest.
    queue.getJobs(['waiting'], 0, 0, true),
  ]);
  return { backlog: backlogOf(counts), latency: oldest ? latencyOf(oldest as Job) : 0 };
}

/**
 * Since when a waiting job has been ready: its creation, or the end of its delay, or (a retry) its
 * last attempt, whichever came last. Sidekiq's latency counts from the job's `enqueued_at` likewise.
 */
function latencyOf(job: Job): number {
  const ready = Math.max(job.timestamp + (job.delay ?? 0), job.processedOn ?? 0, job.finishedOn ?? 0);
  return Math.max(0, Math.floor((Date.now() - ready) / 1000));
}

/** The named workers BullMQ lists for the queue; a backend that cannot list them lists none. */
async function listedWorkers(queue: Queue): Promise<WorkerIdentity[]> {
  const clients = await queue.getWorkers().catch(() => []);
  return clients.flatMap((c) => {
    const who = parseWorkerName(c.rawname ?? '');
    return who ? [who] : [];
  });
}

/** The backend's answer, or 503 when it fails or does not come within READ_TIMEOUT_MS. */
async function read<T>(p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('timed out')), READ_TIMEOUT_MS);
      }),
    ]);
  } catch (err) {
    throw new Unavailable(`queue backend: ${String(err)}`);
  } finally {
    clearTimeout(timer);
  }
}
