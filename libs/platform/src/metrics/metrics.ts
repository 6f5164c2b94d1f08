import { Injectable } from '@nestjs/common';
import type { JobType } from 'bullmq';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { firstRow, rows } from '../database/sql';
import { rebuildProgressOf, REBUILD_APPLICATION_NAME, type RebuildProgress } from '../projections/rebuild';
import { declaredQueueNames } from '../queue/job-processor';
import { QueueHandles } from '../queue/queue-handles';

/** BullMQ's job states, each a `state` label value of `lode_queue_jobs`. */
const JOB_STATES: JobType[] = [
  'waiting',
  'active',
  'delayed',
  'prioritized',
  'waiting-children',
  'completed',
  'failed',
];
/** A scrape waits this long for PostgreSQL or Redis, then answers without what they did not say. */
const SCRAPE_QUERY_TIMEOUT_MS = 2000;

/** Outcome label values of webhook deliveries. */
export type DeliveryOutcome = 'delivered' | 'http_error' | 'timeout' | 'tls' | 'connection_failed' | 'refused';

/**
 * The process's one Prometheus registry and the series every context reports into. Counters and
 * histograms are updated where things happen (no SQL); the outbox backlog and the queues' job
 * counts are read once per scrape. Contexts that own other numbers (libs/git's processes) add gauges
 * with `gauge`, read at scrape time.
 */
@Injectable()
export class Metrics {
  readonly registry = new Registry();
  /** By the route template (`/api/v4/projects/:id`), never the raw URL, so label values stay bounded. */
  readonly httpDuration = new Histogram({
    name: 'lode_http_request_duration_seconds',
    help: 'HTTP requests by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  readonly appendDuration = new Histogram({
    name: 'lode_event_store_append_duration_seconds',
    help: 'Event store transactions that appended events, from BEGIN to COMMIT',
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });
  readonly webhookDeliveries = new Counter({
    name: 'lode_webhook_deliveries_total',
    help: 'Webhook delivery attempts by outcome',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly idleMemoryTrims = new Counter({
    name: 'lode_idle_memory_trims_total',
    help: 'Memory-reducing collections run when a burst of work was over (LODE_IDLE_MEMORY_TRIM), by what came after it: idle (4 s of idle event loop) or light-traffic (6 s of event loop under half busy)',
    labelNames: ['after'] as const,
    registers: [this.registry],
  });
  readonly idleMemoryTrimmedBytes = new Counter({
    name: 'lode_idle_memory_trimmed_bytes_total',
    help: 'Resident bytes those collections gave back to the system',
    labelNames: ['after'] as const,
    registers: [this.registry],
  });
  readonly idleMemoryTrimSeconds = new Counter({
    name: 'lode_idle_memory_trim_seconds_total',
    help: 'Time those collections held the event loop (a request arriving meanwhile waits for it)',
    labelNames: ['after'] as const,
    registers: [this.registry],
  });
  constructor(
    private readonly dataSource: DataSource,
    private readonly queues: QueueHandles,
  ) {
    collectDefaultMetrics({ register: this.registry });
    for (const outcome of ['delivered', 'http_error', 'timeout', 'tls', 'connection_failed', 'refused'] as const)
      this.webhookDeliveries.inc({ outcome }, 0);
    // Both outbox gauges share one query while it runs (prom-client collects the gauges concurrently).
    const outbox = { backlog: 0, oldest: 0 };
    let reading: Promise<void> | undefined;
    const readOutbox = () =>
      (reading ??= this.outbox()
        .then((read) => {
          if (read) Object.assign(outbox, read);
        })
        .finally(() => (reading = undefined)));
    const jobCounts = (queue: string) => this.jobCounts(queue);
    // The rebuild gauges share one query too.
    let rebuilds: RebuildProgress[] = [];
    let readingRebuilds: Promise<void> | undefined;
    const readRebuilds = () =>
      (readingRebuilds ??= this.rebuilds()
        .then((read) => {
          if (read) rebuilds = read;
        })
        .finally(() => (readingRebuilds = undefined)));
    const sum = (key: keyof RebuildProgress) => rebuilds.reduce((n, r) => n + r[key], 0);
    new Gauge({
      name: 'lode_outbox_backlog',
      help: 'Outbox rows whose job has not finished (not yet relayed, or relayed and still running)',
      registers: [this.registry],
      async collect() {
        await readOutbox();
        this.set(outbox.backlog);
      },
    });
    new Gauge({
      name: 'lode_outbox_oldest_undone_age_seconds',
      help: 'Age of the oldest outbox row whose job has not finished; 0 when none',
      registers: [this.registry],
      async collect() {
        await readOutbox();
        this.set(outbox.oldest);
      },
    });
    new Gauge({
      name: 'lode_queue_jobs',
      help: 'BullMQ jobs per queue and state',
      labelNames: ['queue', 'state'] as const,
      registers: [this.registry],
      async collect() {
        const counts = await Promise.all(declaredQueueNames().map(async (q) => [q, await jobCounts(q)] as const));
        this.reset();
        for (const [queue, byState] of counts)
          if (byState) for (const state of JOB_STATES) this.set({ queue, state }, byState[state] ?? 0);
      },
    });
    new Gauge({
      name: 'lode_projection_rebuild_running',
      help: 'Projection rebuilds running on this database (npm run projections:rebuild, any process)',
      registers: [this.registry],
      async collect() {
        await readRebuilds();
        this.set(rebuilds.length);
      },
    });
    new Gauge({
      name: 'lode_projection_rebuild_events_done',
      help: 'Events the running projection rebuild has replayed; 0 when none runs',
      registers: [this.registry],
      async collect() {
        await readRebuilds();
        this.set(sum('done'));
      },
    });
    new Gauge({
      name: 'lode_projection_rebuild_events_total',
      help: 'Events the running projection rebuild replays in all; 0 when none runs',
      registers: [this.registry],
      async collect() {
        await readRebuilds();
        this.set(sum('total'));
      },
    });
  }

  /** A gauge read when scraped: `read` is called once per scrape. */
  gauge(name: string, help: string, read: () => number): void {
    new Gauge({
      name,
      help,
      registers: [this.registry],
      collect() {
        this.set(read());
      },
    });
  }

  /** A counter a context increments where things happen (`inc()`), registered once per name. */
  counter(name: string, help: string): { inc(by?: number): void } {
    const existing = this.registry.getSingleMetric(name);
    if (existing instanceof Counter) return existing;
    return new Counter({ name, help, registers: [this.registry] });
  }

  /** Counts one webhook delivery attempt. */
  delivery(outcome: DeliveryOutcome): void {
    this.webhookDeliveries.inc({ outcome });
  }

  /** Prometheus' text exposition format. */
  async text(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  private async outbox(): Promise<{ backlog: number; oldest: number } | undefined> {
    try {
      const row = await withTimeout(
        firstRow<{ backlog: string; oldest: number | null }>(
          this.dataSource,
          `select count(*) as backlog, extract(epoch from clock_timestamp() - min(created_at))::float8 as oldest
             from outbox where finished_at is null`,
        ),
      );
      return row && { backlog: Number(row.backlog), oldest: row.oldest ?? 0 };
    } catch {
      return undefined; // PostgreSQL away: the last values stand, readiness says what is wrong
    }
  }

  /** The rebuilds running on this database, as their connections announce them (see REBUILD_APPLICATION_NAME). */
  private async rebuilds(): Promise<RebuildProgress[] | undefined> {
    try {
      const named = await withTimeout(
        rows<{ application_name: string }>(
          this.dataSource,
          `select application_name from pg_stat_activity
            where datname = current_database() and application_name like $1`,
          [`${REBUILD_APPLICATION_NAME} %`],
        ),
      );
      return named.flatMap((r) => rebuildProgressOf(r.application_name) ?? []);
    } catch {
      return undefined;
    }
  }

  private async jobCounts(name: string): Promise<Record<string, number> | undefined> {
    try {
      // Queue backend away: readiness reports it, the scrape leaves the series out.
      return await withTimeout(this.queues.get(name).getJobCounts(...JOB_STATES));
    } catch {
      return undefined;
    }
  }
}

function withTimeout<T>(p: Promise<T>): Promise<T> {
  let t: NodeJS.Timeout;
  return Promise.race([
    p,
    new Promise<never>((_, r) => (t = setTimeout(() => r(new Error('timed out')), SCRAPE_QUERY_TIMEOUT_MS))),
  ]).finally(() => clearTimeout(t));
}
