import {
  JobKinds,
  JobProcessor,
  JobQueue,
  Outbox,
  LodeConfig,
  type DomainEvent,
  type JobHandlers,
  type OutboxRoute,
  type Recorded,
  type Sql,
  workerOptions,
} from '@app/platform';
import { ProjectQueries, isTagRef, ruleMatches, type ProjectEvent, type RepositoryPushedData } from '@app/projects';
import { UserQueries } from '@app/users';
import { InjectQueue, Processor } from '@nestjs/bullmq';
import type { Queue } from 'bullmq';
import { createHash } from 'node:crypto';
import { DeliveryLog } from '../delivery/delivery-log';
import { DeliveryTargets } from '../delivery/delivery-targets';
import { HookFailures } from '../delivery/hook-failures';
import { HookQueries } from '../queries/hook.queries';
import { HookSecrets } from '../secrets/hook-secrets';
import { HookDelivery } from './hook-delivery';
import { SYSTEM_HOOK_SOURCE_EVENTS, SystemHookFanOut } from './system-hook-fanout';
import type { SystemHookListeners } from './system-hook-listeners';
import { hookEventName, pushPayload, type Pusher } from './push-payload';
import { delivered } from './webhook-sender';

/** Attempts per delivery, with exponential backoff (by default 10, 20 and 40 s between them). */
export const DELIVERY_ATTEMPTS = 4;

export type PushFanOutJob = {
  kind: 'push-fanout';
  projectId: number;
  /** The push event's global position: what names its deliveries' jobs. */
  position?: string;
  /** What named them before pushes had streams of their own (a job queued by an older Lode). */
  streamVersion?: number;
  push: RepositoryPushedData;
};
export type DeliverJob = {
  kind: 'deliver';
  hookId: number;
  projectId: number;
  event: string;
  eventUuid: string;
  payload: unknown;
  /**
   * Set by `lode jobs retry`: a resend an operator asked for, sent even when the hook is disabled for
   * failing (GitLab's `force`, which its resend and test use).
   */
  retriedByOperator?: boolean;
  /** `system`: a system hook's delivery (`projectId` 0, nothing recorded in a project hook's log); absent: a project hook's. */
  hookKind?: 'system';
  /**
   * The number of this job's first attempt: 2 for a delivery whose first attempt the fan-out made
   * (see `deliverNow`), absent (1) for one queued by an older Lode.
   */
  firstAttempt?: number;
};
/** A recorded event a system hook hears of (system-hook-fanout.ts), written with the event. */
export type SystemFanOutJob = { kind: 'system-fanout'; position: string; type: string; data: Record<string, unknown> };
/** Removes the sealed secrets of hooks that went with their project (deleted itself, or with its group or owner). */
export type EraseGoneSecretsJob = { kind: 'erase-gone-secrets' };
/** Removes the delivery log's entries older than LODE_WEBHOOK_LOG_DAYS (repeated, see `scheduleLogPruning`). */
export type PruneDeliveryLogJob = { kind: 'prune-delivery-log' };
export type WebhookJob = PushFanOutJob | DeliverJob | EraseGoneSecretsJob | SystemFanOutJob | PruneDeliveryLogJob;

/** The `webhooks` queue: a fan-out per recorded push, then one delivery per subscribed hook; secrets' erasure. */
export const WEBHOOK_JOBS = new JobQueue<WebhookJob>('webhooks', {
  'push-fanout': true,
  deliver: true,
  'erase-gone-secrets': true,
  'system-fanout': true,
  'prune-delivery-log': true,
});

/**
 * Jobs of the `webhooks` queue a worker process runs at once. 32 was tried (a delivery mostly waits)
 * and made the API's writes slower in the WEBHOOKS bench (bench/RESULTS.md, `hook-latency`): the
 * jobs' statements compete with the API's transactions for the pool's 20 connections. Kept at 16.
 */
export const WEBHOOK_CONCURRENCY = 16;

/** Requests one fan-out has in flight at once (its hooks are sent to together, at most this many). */
export const FAN_OUT_SENDS = 32;

/** The UUID name space of Lode's delivery UUIDs (RFC 9562 name-based, version 5). */
const DELIVERY_UUID_NAMESPACE = Buffer.from('6f1d1a3c9e2b4f0a8c5d7e6b1a2f3c4d', 'hex');

/**
 * A delivery's `X-Gitlab-Event-UUID`, named by the instance and the delivery's stable id (its event's
 * position, the hook, the payload's index): a fan-out run again after a crash sends each delivery
 * with the UUID, and so the `Idempotency-Key`, of its first run, as the receiver must see on a retry.
 */
export function deliveryUuid(instance: string, deliveryId: string): string {
  const h = createHash('sha1').update(DELIVERY_UUID_NAMESPACE).update(`${instance} ${deliveryId}`).digest();
  h[6] = (h[6] & 0x0f) | 0x50;
  h[8] = (h[8] & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

/** One delivery a fan-out makes: its job's data and stable id, should it need a retry. */
interface Delivery {
  data: DeliverJob;
  jobId: string;
}

/** How often the delivery log's old entries are removed. */
export const PRUNE_DELIVERY_LOG_EVERY_MS = 60 * 60 * 1000;
export const WEBHOOKS_QUEUE = WEBHOOK_JOBS.name;

/**
 * One fan-out job per recorded push, written with the event (outbox), so a push's hooks are heard
 * exactly when the push was recorded. A projection rebuild runs no route: it never re-sends.
 */
export const webhookJobsRoute: OutboxRoute = (event: Recorded<DomainEvent>) => {
  const e = event as Recorded<ProjectEvent>;
  if (e.type !== 'RepositoryPushed') return undefined;
  // Named by the event's global position: a push's stream version is 1 for every push on its own stream.
  return WEBHOOK_JOBS.job(
    { kind: 'push-fanout', projectId: e.data.projectId, position: e.globalPosition, push: e.data },
    `push-fanout-${e.globalPosition}`,
    { attempts: 5, backoff: { type: 'exponential', delay: 2000 } },
  );
};

/**
 * One system fan-out per recorded event a system hook hears of (SYSTEM_HOOK_SOURCE_EVENTS), written
 * with the event like the push fan-out: heard once, when recorded, never on a projection rebuild.
 * None when no system hook hears that kind of event (`SystemHookListeners`, a cache fenced against
 * other processes' changes).
 */
export function systemHookJobsRoute(listeners: Pick<SystemHookListeners, 'hear'>): OutboxRoute {
  return async (event: Recorded<DomainEvent>, db: Sql) => {
    if (!(SYSTEM_HOOK_SOURCE_EVENTS as readonly string[]).includes(event.type)) return undefined;
    if (!(await listeners.hear(event.type, db))) return undefined;
    return WEBHOOK_JOBS.job(
      {
        kind: 'system-fanout',
        position: event.globalPosition,
        type: event.type,
        data: event.data as Record<string, unknown>,
      },
      `system-fanout-${event.globalPosition}`,
      { attempts: 5, backoff: { type: 'exponential', delay: 2000 } },
    );
  };
}

/**
 * A deletion that takes hooks with it by the read model's cascade (a project, a group, a user and
 * their projects) is followed by the erasure of those hooks' secrets.
 */
export const hookSecretsRoute: OutboxRoute = (event: Recorded<DomainEvent>) => {
  if (!['ProjectDeleted', 'GroupDeleted', 'UserDeleted'].includes(event.type)) return undefined;
  return WEBHOOK_JOBS.job({ kind: 'erase-gone-secrets' }, `erase-gone-secrets-${event.globalPosition}`, {
    attempts: 5,
    backoff: { type: 'exponential', delay: 2000 },
  });
};

/**
 * GitLab 11.3's `ActiveHookFilter`: a hook with a `push_events_branch_filter` hears the push events of
 * the branches it matches (the protected-branch wildcard, `RefMatcher`); tag pushes are not filtered.
 */
const matchesBranchFilter = (filter: string | null, ref: string) =>
  !filter || ruleMatches(filter, ref.replace(/^refs\/heads\//, ''));

/**
 * Webhook delivery. The fan-out builds GitLab's payload once per ref update and sends it to every
 * subscribed hook at once; a delivery that failed is queued as a job of its own (stable job ids: a
 * fan-out run twice queues nothing twice), which throws on failure so BullMQ retries it with
 * backoff, keeping the same `X-Gitlab-Event-UUID`. Each attempt POSTs with GitLab's headers and is
 * recorded in the hook's log.
 */
@Processor(WEBHOOKS_QUEUE, workerOptions({ concurrency: WEBHOOK_CONCURRENCY }))
export class WebhookJobsProcessor extends JobProcessor<WebhookJob> {
  protected readonly handlers: JobHandlers<WebhookJob> = {
    'push-fanout': (job) => this.fanOut(job.data, job.id),
    deliver: (job) => this.deliver(job.data, job.attemptsMade),
    'erase-gone-secrets': async () => {
      await this.secrets.eraseGone();
      await this.failures.eraseGone();
      await this.deliveryLog.eraseGone();
    },
    'system-fanout': (job) => this.systemFanOut(job.data, job.id),
    'prune-delivery-log': async () => {
      const removed = await this.pruneDeliveryLog();
      if (removed)
        this.logger.log(`removed ${removed} delivery log entries older than ${this.config.webhookLogDays} days`);
    },
  };

  constructor(
    private readonly config: LodeConfig,
    private readonly projects: ProjectQueries,
    private readonly hooks: HookQueries,
    private readonly users: UserQueries,
    @InjectQueue(WEBHOOKS_QUEUE) private readonly queue: Queue,
    kinds: JobKinds,
    private readonly secrets: HookSecrets,
    outbox: Outbox,
    private readonly failures: HookFailures,
    private readonly systemFanOuts: SystemHookFanOut,
    private readonly delivery: HookDelivery,
    private readonly deliveryLog: DeliveryLog,
    private readonly targets: DeliveryTargets,
  ) {
    super(WEBHOOK_JOBS, queue, kinds, outbox, 'Webhooks');
  }

  /**
   * The retention job: one BullMQ job scheduler (repeatable, one per Redis whatever the number of
   * workers), hourly. Scheduled where workers run; a scheduler left by an earlier start is replaced.
   */
  async onApplicationBootstrap(): Promise<void> {
    await this.queue
      .upsertJobScheduler(
        'prune-delivery-log',
        { every: PRUNE_DELIVERY_LOG_EVERY_MS },
        {
          name: 'prune-delivery-log',
          data: { kind: 'prune-delivery-log' },
          opts: { removeOnComplete: 10, removeOnFail: 10 },
        },
      )
      .catch((err: unknown) => this.logger.warn(`could not schedule the delivery log's pruning: ${String(err)}`));
  }

  /** Removes the delivery log's entries older than LODE_WEBHOOK_LOG_DAYS; answers how many. */
  pruneDeliveryLog(): Promise<number> {
    return this.deliveryLog.prune(this.config.webhookLogDays);
  }

  private async fanOut(
    { projectId, position, streamVersion, push }: PushFanOutJob,
    jobId: string | undefined,
  ): Promise<void> {
    const hooks = await this.hooks.pushTargets(projectId);
    if (!hooks.length) return;
    const project = await this.projects.findForSystem(projectId);
    if (!project) return; // deleted meanwhile
    const user = await this.users.find(push.userId);
    const pusher: Pusher = user
      ? { id: user.id, name: user.name, username: user.username, email: user.email }
      : { id: push.userId, name: 'Ghost User', username: 'ghost', email: '' };
    const jobs = push.updates.flatMap((update, i) => {
      const tag = isTagRef(update.ref);
      const subscribed = hooks.filter((h) =>
        tag ? h.tag_push_events : h.push_events && matchesBranchFilter(h.push_events_branch_filter, update.ref),
      );
      if (!subscribed.length) return [];
      const payload = pushPayload(update, project, pusher, this.config);
      const event = hookEventName(update.ref);
      return subscribed.map((h): Delivery => {
        const id =
          position === undefined
            ? `deliver-${h.id}-${projectId}-${streamVersion}-${i}`
            : `deliver-${h.id}-p${position}-${i}`;
        return {
          jobId: id,
          data: { kind: 'deliver', hookId: h.id, projectId, event, eventUuid: this.uuid(id), payload },
        };
      });
    });
    await this.deliverNow(jobs, jobId);
  }

  /** A system hook event's payload, built once, and one delivery per system hook that hears it. */
  private async systemFanOut({ position, type, data }: SystemFanOutJob, jobId: string | undefined): Promise<void> {
    const jobs = await this.systemFanOuts.deliveries(
      { position, type, data },
      (hook, payload, deliveryId): Delivery => ({
        jobId: deliveryId,
        data: {
          kind: 'deliver',
          hookKind: 'system',
          hookId: hook.id,
          projectId: 0,
          event: 'System Hook',
          eventUuid: this.uuid(deliveryId),
          payload,
        },
      }),
    );
    await this.deliverNow(jobs, jobId);
  }

  private uuid(deliveryId: string): string {
    return deliveryUuid(this.config.externalUrl, deliveryId);
  }

  /**
   * A fan-out's first attempts, made here, all hooks at once (FAN_OUT_SENDS at a time); only a
   * delivery that failed becomes a job of its own, written through the outbox (attempts 2 to
   * DELIVERY_ATTEMPTS, the same backoff as before: 10, 20 and 40 s by default). A job per delivery
   * cost an outbox row, its relay, BullMQ's moves and a wait in the queue behind every other
   * write's deliveries: under a steady stream of writes the deliveries fell minutes behind
   * (bench/RESULTS.md, WEBHOOKS). A fan-out that crashes midway runs again and sends again, each
   * delivery with its first UUID and `Idempotency-Key` (at least once, as before); its retries are
   * written once (stable job ids).
   */
  private async deliverNow(deliveries: Delivery[], causedBy: string | undefined): Promise<void> {
    if (!deliveries.length) return;
    const failed = new Array<boolean>(deliveries.length).fill(false);
    let next = 0;
    const sender = async () => {
      while (next < deliveries.length) {
        const i = next++;
        failed[i] =
          (await this.attempt(deliveries[i].data, 1).catch((err: unknown) => {
            this.logger.warn(`hook ${deliveries[i].data.hookId} delivery attempt 1: ${String(err)}`);
            return String(err);
          })) !== undefined;
      }
    };
    await Promise.all(Array.from({ length: Math.min(FAN_OUT_SENDS, deliveries.length) }, sender));
    const retryDelay = this.config.webhookRetryDelayMs;
    const retries = deliveries
      .filter((_, i) => failed[i])
      .map((d) =>
        WEBHOOK_JOBS.job({ ...d.data, firstAttempt: 2 }, d.jobId, {
          attempts: DELIVERY_ATTEMPTS - 1,
          // Attempt 2 after the base delay, then doubling from twice it: the backoff of one job of 4 attempts.
          delay: retryDelay,
          backoff: { type: 'exponential', delay: 2 * retryDelay },
        }),
      );
    // Through the outbox, like the jobs of events: a retry Redis loses is sent again.
    await this.outbox.enqueue(causedBy, retries);
  }

  /** A queued delivery's attempt (a retry); throws when it failed, so BullMQ tries again with backoff. */
  private async deliver(job: DeliverJob, attemptsMade: number): Promise<void> {
    // An operator's retry starts the delivery's attempts over (BullMQ counts them from 0 again).
    const attempt = (job.retriedByOperator ? 1 : (job.firstAttempt ?? 1)) + attemptsMade;
    const failure = await this.attempt(job, attempt).catch((err: unknown) => String(err));
    if (failure !== undefined) throw new Error(failure);
  }

  /**
   * One attempt of a delivery: undefined when it is done (delivered, skipped while the hook is
   * disabled, or the hook is gone), else why it failed (it should be tried again).
   */
  private async attempt(job: DeliverJob, attempt: number): Promise<string | undefined> {
    const system = job.hookKind === 'system';
    // The hook, its secrets and failure state in one statement shared with the deliveries starting now.
    const target = await this.targets.of(system ? 'system' : 'project', job.hookId, job.projectId);
    if (!target) return undefined; // removed since the push: nothing to send, no log to write
    const { hook } = target;
    // Headers and failures are keyed by (kind, id), so a system hook's delivery uses them the same way.
    const outcome = await this.delivery.send({
      kind: system ? 'system' : 'project',
      hook,
      known: { secret: target.secret, failures: target.failures },
      event: job.event,
      eventUuid: job.eventUuid,
      payload: job.payload,
      attempt,
      force: job.retriedByOperator === true,
    });
    if (outcome === 'skipped' || delivered(outcome)) return undefined;
    // The detail (resolver answer, address, socket error) is for operators only.
    if (outcome.error) this.logger.debug(`hook ${hook.id} delivery attempt ${attempt}: ${outcome.error}`);
    return outcome.error ?? `the receiver answered ${outcome.status}`;
  }
}
