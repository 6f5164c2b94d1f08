import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Client } from 'pg';
import { LodeConfig } from '../config/lode-config';
import type { DomainEvent, Recorded } from '../event-store/recorded';

export const INVALIDATION_CHANNEL = 'lode_invalidate';
/** Sent instead of the keys when they would not fit in one NOTIFY payload (8000 bytes): every subscriber flushes. */
const EVERYTHING = '*';
const MAX_PAYLOAD = 7000;
const RECONNECT_MS = 1000;

/** A pure function from an event to the cache keys it makes stale (such as `user:42`); runs inside the append transaction. */
export type InvalidationRoute = (event: Recorded<DomainEvent>) => string | string[] | undefined;

/** Told the stale keys, or `'all'` when notifications may have been lost and anything may be stale. */
export type InvalidationSubscriber = (keys: readonly string[] | 'all') => void;

/**
 * Evicts process-local caches when an event changes what they hold. The event store asks `keysFor`
 * each appended event, NOTIFYs the keys on `lode_invalidate` at commit (every process LISTENs, so
 * every process evicts), and calls `publish` itself right after the commit, before the command
 * returns, so the process that wrote the event never serves the stale entry to the next request.
 * While the LISTEN connection is down, subscribers are told `'all'` (on loss and again on
 * reconnection): a cache's own TTL stays the fallback.
 */
@Injectable()
export class Invalidations implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Invalidations');
  private readonly routes: InvalidationRoute[] = [];
  private readonly subscribers: InvalidationSubscriber[] = [];
  private listener?: Client;
  private retry?: NodeJS.Timeout;
  private stopped = false;
  private lastFailure = '';
  /** The fence roundtrip on the LISTEN connection in flight, and the one queued behind it (see `caughtUp`). */
  private fenceInFlight?: Promise<boolean>;
  private fenceQueued?: Promise<boolean>;

  constructor(private readonly config: LodeConfig) {}

  register(...routes: InvalidationRoute[]): void {
    for (const r of routes) if (!this.routes.includes(r)) this.routes.push(r);
  }

  subscribe(subscriber: InvalidationSubscriber): void {
    if (!this.subscribers.includes(subscriber)) this.subscribers.push(subscriber);
  }

  keysFor(event: Recorded<DomainEvent>): string[] {
    return this.routes.flatMap((r) => {
      const out = r(event);
      return out === undefined ? [] : Array.isArray(out) ? out : [out];
    });
  }

  /** The NOTIFY payload for a transaction's keys. */
  static payload(keys: readonly string[]): string {
    const json = JSON.stringify(keys);
    return Buffer.byteLength(json) > MAX_PAYLOAD ? EVERYTHING : json;
  }

  /** Tells this process's subscribers; a subscriber that throws does not keep the others from hearing. */
  publish(keys: readonly string[] | 'all'): void {
    if (keys !== 'all' && keys.length === 0) return;
    for (const s of this.subscribers) {
      try {
        s(keys);
      } catch (err) {
        this.logger.warn(`an invalidation subscriber failed: ${String(err)}`);
      }
    }
  }

  /**
   * Evicts `keys` in this process at once and asks every other process to, with a NOTIFY of its own:
   * for a change made without its event (a push git applied whose record failed). Best effort: a
   * NOTIFY that cannot be sent is left to the event written later (the push reconciler's record).
   */
  async announce(
    keys: readonly string[],
    db: { query(sql: string, params: unknown[]): Promise<unknown> },
  ): Promise<void> {
    this.publish(keys);
    await db
      .query('select pg_notify($1, $2)', [INVALIDATION_CHANNEL, Invalidations.payload(keys)])
      .catch(() => undefined);
  }

  /**
   * True once every notification committed before this call has reached the subscribers; false when
   * that cannot be known (the LISTEN connection is down). A cache may serve an entry only after this.
   *
   * A committing transaction signals the listening backends before its writer hears of the commit, and
   * a backend hands pending notifications to its client before it reads the next query. So once a
   * `select 1` sent on the LISTEN connection after this call is answered, every notification committed
   * earlier came ahead of the answer on the same socket, and `pg` emitted it before resolving the
   * query. Callers share roundtrips: one in flight, and one queued behind it for everyone who arrived
   * after it was sent, so a busy process sends at most one fence per roundtrip time.
   */
  caughtUp(): Promise<boolean> {
    // One process on the embedded database: its own writes evict before they answer, there is nobody else.
    if (this.config.embeddedDatabase) return Promise.resolve(true);
    if (!this.fenceInFlight) return this.sendFence();
    this.fenceQueued ??= this.fenceInFlight.then(() => {
      this.fenceQueued = undefined;
      return this.sendFence();
    });
    return this.fenceQueued;
  }

  private sendFence(): Promise<boolean> {
    const listener = this.listener;
    const fence = listener
      ? listener.query('select 1').then(
          () => this.listener === listener,
          () => false,
        )
      : Promise.resolve(false);
    this.fenceInFlight = fence;
    void fence.then(() => {
      if (this.fenceInFlight === fence) this.fenceInFlight = undefined;
    });
    return fence;
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.listen();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    const l = this.listener;
    this.listener = undefined;
    await l?.end().catch(() => undefined);
  }

  /**
   * PostgreSQL stopped answering (DatabaseWatch found it silent): the LISTEN connection is as silent
   * as the pool's, so it is closed now rather than when the network comes back. Fences waiting on
   * it answer false at once (their callers go to the database, which answers 503 now), the
   * subscribers hear `'all'`, and it reconnects as after any loss. Before this, a request waiting on
   * a fence waited out the whole silence (6 s in bench:faults) and was then answered 200.
   */
  cut(): void {
    (
      this.listener as unknown as { connection?: { stream?: { destroy(): void } } } | undefined
    )?.connection?.stream?.destroy();
  }

  private async listen(): Promise<void> {
    if (this.stopped) return;
    const client = new Client({ connectionString: this.config.databaseUrl, keepAlive: true });
    const lost = () => {
      if (this.listener !== client) return;
      this.listener = undefined;
      client.end().catch(() => undefined);
      this.lastFailure = 'the LISTEN connection was lost';
      this.logger.warn(`${this.lastFailure}; reconnecting`);
      this.publish('all');
      this.scheduleRetry();
    };
    client.on('error', lost);
    client.on('end', lost);
    client.on('notification', (n) => {
      if (n.channel !== INVALIDATION_CHANNEL) return;
      this.publish(parse(n.payload));
    });
    try {
      await client.connect();
      await client.query(`listen ${INVALIDATION_CHANNEL}`);
      if (this.stopped) {
        await client.end().catch(() => undefined);
        return;
      }
      this.listener = client;
      if (this.lastFailure) {
        this.logger.log(`listening again after: ${this.lastFailure}`);
        // Whatever was notified while we were away is lost.
        this.publish('all');
      }
      this.lastFailure = '';
    } catch (err) {
      await client.end().catch(() => undefined);
      const message = `LISTEN ${INVALIDATION_CHANNEL} failed, caches rely on their TTL: ${String(err)}`;
      if (message !== this.lastFailure) this.logger.warn(message);
      this.lastFailure = message;
      this.scheduleRetry();
    }
  }

  private scheduleRetry(): void {
    if (this.stopped || this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      void this.listen();
    }, RECONNECT_MS);
    this.retry.unref();
  }
}

function parse(payload: string | undefined): readonly string[] | 'all' {
  if (!payload || payload === EVERYTHING) return 'all';
  try {
    const keys: unknown = JSON.parse(payload);
    return Array.isArray(keys) ? keys.filter((k): k is string => typeof k === 'string') : 'all';
  } catch {
    return 'all';
  }
}
