import { OnWorkerEvent, WorkerHost } from '@nestjs/bullmq';
import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleInit } from '@nestjs/common';
import { UnrecoverableError, type Job, type Queue, type Worker } from 'bullmq';
import { RequestContexts } from '../context';
import { Logs } from '../logging/log-output';
import { redactSecrets } from '../logging/redact';
import type { Outbox } from '../outbox/outbox';
import type { OutboxJob } from '../outbox/outbox-route';
import { logConnectionErrors } from './connection-errors';

/** A job's data says what to do in `kind`; each queue carries one union of such kinds. */
export interface JobData {
  kind: string;
}

/** One handler for every kind of a queue's job union: a kind left without one fails to compile. */
export type JobHandlers<J extends JobData> = {
  [K in J['kind']]: (job: Job<Extract<J, { kind: K }>>) => Promise<void>;
};

/** What a processor does when one of its jobs is given up: record the failure where users see it. */
type Abandoned = (data: JobData, reason: string) => Promise<void>;

/** Every queue declared in the process, so the start-up check knows what must be handled. */
const declaredQueues: JobQueue<JobData>[] = [];

/** The names of the queues declared in this process (the metrics' job counts, the command line's `jobs`). */
export function declaredQueueNames(): string[] {
  return [...new Set(declaredQueues.map((q) => q.name))];
}

/**
 * A BullMQ queue and the kinds of job it carries, declared once by the context that owns it. The
 * kinds are listed as an object with one key per kind of `J`, so the list cannot drift from the type.
 */
export class JobQueue<J extends JobData> {
  readonly kinds: readonly string[];

  constructor(
    readonly name: string,
    kinds: Record<J['kind'], true>,
  ) {
    this.kinds = Object.keys(kinds);
    declaredQueues.push(this);
  }

  /** An outbox job of this queue; its BullMQ name is its kind. */
  job(data: J, jobId: string, options?: OutboxJob['options']): OutboxJob<J> {
    return { queue: this.name, name: data.kind, jobId, data, ...(options ? { options } : {}) };
  }
}

/**
 * Who handles which kind of job in this process. Processors register here when their module starts;
 * once the application has started, every kind of every declared queue must have exactly one handler
 * where this process runs workers, or the process does not start.
 */
@Injectable()
export class JobKinds implements OnApplicationBootstrap {
  private readonly handlers = new Map<string, string>();
  private readonly abandonHandlers = new Map<string, Abandoned>();
  private readonly workerHosts = new Map<string, WorkerHost>();

  handle(queue: string, kinds: readonly string[], by: string, abandoned?: Abandoned): void {
    for (const kind of kinds) {
      const key = `${queue}/${kind}`;
      const other = this.handlers.get(key);
      if (other && other !== by) throw new Error(`job kind ${key} has two handlers: ${other} and ${by}`);
      this.handlers.set(key, by);
    }
    if (abandoned) this.abandonHandlers.set(queue, abandoned);
  }

  /** Records the processor whose BullMQ worker runs the queue's jobs in this process. */
  runs(queue: string, host: WorkerHost): void {
    this.workerHosts.set(queue, host);
  }

  /** The BullMQ workers of this process, by queue (none in a process without processors). */
  workers(): { queue: string; worker: Worker }[] {
    const out: { queue: string; worker: Worker }[] = [];
    for (const [queue, host] of this.workerHosts) {
      try {
        out.push({ queue, worker: host.worker });
      } catch {
        // Not started yet (before the application has bootstrapped): not running.
      }
    }
    return out;
  }

  /** Tells the queue's processor that a job was given up without running to the end (see OutboxRelay.sweep). */
  async abandoned(queue: string, data: JobData, reason: string): Promise<void> {
    await this.abandonHandlers.get(queue)?.(data, reason);
  }

  /** The kinds of declared queues that nothing in this process handles. */
  unhandled(): string[] {
    return declaredQueues.flatMap((q) => q.kinds.map((k) => `${q.name}/${k}`)).filter((k) => !this.handlers.has(k));
  }

  onApplicationBootstrap(): void {
    // A process without processors (the API role, the command line) handles no jobs at all.
    if (!this.handlers.size) return;
    const missing = this.unhandled();
    if (missing.length) throw new Error(`job kinds without a handler: ${missing.join(', ')}`);
  }
}

/**
 * The BullMQ processor of one queue: dispatches each job to the handler of its kind, records in
 * PostgreSQL when a job has finished for good (completed, or failed past its last attempt), so the
 * outbox knows which jobs a Redis that lost its data must be given again, registers its kinds with
 * `JobKinds`, and logs the worker's connection errors once each while Redis is away.
 */
export abstract class JobProcessor<J extends JobData> extends WorkerHost implements OnModuleInit {
  protected readonly logger: Logger;
  private lastError = '';
  /** The handlers, one per kind; `this` is the processor. */
  protected abstract readonly handlers: JobHandlers<J>;

  constructor(
    protected readonly jobQueue: JobQueue<J>,
    queue: Queue,
    private readonly kinds: JobKinds,
    protected readonly outbox: Outbox,
    loggerName: string,
  ) {
    super();
    this.logger = new Logger(loggerName);
    logConnectionErrors(queue, this.logger, `queue ${jobQueue.name}`);
  }

  onModuleInit(): void {
    this.kinds.handle(this.jobQueue.name, Object.keys(this.handlers), this.constructor.name, (data, reason) =>
      this.abandoned(data as J, reason),
    );
    this.kinds.runs(this.jobQueue.name, this);
  }

  /**
   * Runs the job inside the request context of the change that caused it, so its log lines (and the
   * events its commands append) carry that request's id, and logs one line when it ends.
   */
  async process(job: Job<J>): Promise<void> {
    const requestId = await this.outbox.causeOf(job.id).catch(() => undefined);
    const started = performance.now();
    const line = () => ({
      request_id: requestId,
      queue: this.jobQueue.name,
      kind: job.data.kind,
      job_id: job.id,
      attempt: job.attemptsMade + 1,
      duration: Math.round((performance.now() - started) * 1000) / 1000,
    });
    const run = () => this.run(job);
    try {
      await (requestId ? RequestContexts.run({ requestId }, run) : run());
      Logs.root.info(line(), `job ${this.jobQueue.name}/${job.data.kind} completed`);
    } catch (err) {
      Logs.root.warn({ ...line(), error: String(err) }, `job ${this.jobQueue.name}/${job.data.kind} failed`);
      throw err;
    }
  }

  private async run(job: Job<J>): Promise<void> {
    // JobHandlers gives the handler of each kind a job of that kind, which is what `job` is here.
    const handlers = this.handlers as unknown as Record<string, ((job: Job<J>) => Promise<void>) | undefined>;
    const handler = handlers[job.data.kind];
    try {
      // A kind this version does not know (a job left by a newer one) cannot succeed by retrying.
      if (!handler) throw new UnrecoverableError(`no handler for job kind ${job.data.kind} on ${this.jobQueue.name}`);
      await handler.call(this, job);
    } catch (err) {
      if (err instanceof UnrecoverableError || this.isLastAttempt(job))
        await this.outbox.finished(job.id, 'failed', redactSecrets(String(err)));
      throw err;
    }
    // Recorded before BullMQ marks the job completed: a crash in between runs it again (handlers are
    // idempotent), never leaves it unrecorded.
    await this.outbox.finished(job.id, 'completed');
  }

  /**
   * A job of this queue was given up without running to the end (lost by Redis too often, or stalled
   * past its limit): the place users see its outcome must say it failed. Nothing to do by default.
   */
  protected async abandoned(_data: J, _reason: string): Promise<void> {}

  /** Whether this run is the job's last attempt: after it BullMQ gives up, so outcomes are final. */
  protected isLastAttempt(job: Job): boolean {
    return job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
  }

  @OnWorkerEvent('error')
  onWorkerError(err: Error): void {
    if (err.message === this.lastError) return;
    this.lastError = err.message;
    this.logger.warn(redactSecrets(`worker ${this.jobQueue.name}: ${err.message}`));
  }
}
