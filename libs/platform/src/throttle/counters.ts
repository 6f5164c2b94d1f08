import { Injectable, Logger, Optional, type OnModuleDestroy } from '@nestjs/common';
import { Redis } from 'ioredis';
import { DataSource } from 'typeorm';
import { LodeConfig } from '../config/lode-config';
import { redisOptions } from '../queue/queue-connection';

/** One in this many counted requests also clears expired counters out of PostgreSQL. */
const SWEEP_ONE_IN = 200;

/**
 * Counters every process shares, for the throttles: in Redis beside the queues (`LODE_REDIS_PREFIX`),
 * or, without Redis, in PostgreSQL's unlogged `throttle_counters`. They fail open: while the store is
 * away each call answers as if nothing was counted, and one warning says so, because refusing every
 * caller for a lost cache would be worse.
 */
@Injectable()
export class SharedCounters implements OnModuleDestroy {
  private readonly logger = new Logger('Throttle');
  private redis?: Redis;
  private lastError = '';

  constructor(
    private readonly config: LodeConfig,
    @Optional() private readonly dataSource?: DataSource,
  ) {}

  private get inPostgres(): boolean {
    return !this.config.redisUrl;
  }

  /** Adds one to `key` in a window of `seconds` that starts with its first count: the count, and the seconds left. */
  async hit(key: string, seconds: number): Promise<{ count: number; resetIn: number }> {
    if (this.inPostgres) return this.hitInPostgres(key, seconds);
    try {
      const k = this.key(key);
      const replies = (await this.client().multi().incr(k).expire(k, seconds, 'NX').ttl(k).exec()) ?? [];
      const [[, count], , [, ttl]] = replies as [[Error | null, number], unknown, [Error | null, number]];
      return { count, resetIn: ttl > 0 ? ttl : seconds };
    } catch (err) {
      this.warn(err);
      return { count: 0, resetIn: seconds };
    }
  }

  /** Seconds `key` still lives (0 when it does not exist, or Redis is away). */
  async ttl(key: string): Promise<number> {
    if (this.inPostgres)
      return this.inDatabase(0, async (db) => {
        const rows = (await db.query(
          `select ceil(extract(epoch from expires_at - clock_timestamp()))::int as ttl
             from throttle_counters where key = $1 and expires_at > clock_timestamp()`,
          [key],
        )) as { ttl: number }[];
        return Math.max(0, rows[0]?.ttl ?? 0);
      });
    try {
      return Math.max(0, await this.client().ttl(this.key(key)));
    } catch (err) {
      this.warn(err);
      return 0;
    }
  }

  async set(key: string, seconds: number): Promise<void> {
    if (this.inPostgres)
      return this.inDatabase(undefined, async (db) => {
        await db.query(
          `insert into throttle_counters (key, count, expires_at)
           values ($1, 1, clock_timestamp() + make_interval(secs => $2))
           on conflict (key) do update set count = 1, expires_at = excluded.expires_at`,
          [key, seconds],
        );
      });
    try {
      await this.client().set(this.key(key), '1', 'EX', seconds);
    } catch (err) {
      this.warn(err);
    }
  }

  /** Connects ahead of the first request, so it finds the connection ready. */
  connect(): void {
    if (!this.inPostgres) this.client();
  }

  /** A window that has ended starts again at one; the count and its end are read back in the same statement. */
  private hitInPostgres(key: string, seconds: number): Promise<{ count: number; resetIn: number }> {
    return this.inDatabase({ count: 0, resetIn: seconds }, async (db) => {
      const [row] = (await db.query(
        `insert into throttle_counters as c (key, count, expires_at)
         values ($1, 1, clock_timestamp() + make_interval(secs => $2))
         on conflict (key) do update set
           count = case when c.expires_at <= clock_timestamp() then 1 else c.count + 1 end,
           expires_at = case when c.expires_at <= clock_timestamp() then excluded.expires_at else c.expires_at end
         returning count, ceil(extract(epoch from expires_at - clock_timestamp()))::int as ttl`,
        [key, seconds],
      )) as { count: number; ttl: number }[];
      if (Math.random() * SWEEP_ONE_IN < 1)
        await db.query(`delete from throttle_counters where expires_at <= clock_timestamp()`);
      return { count: row.count, resetIn: row.ttl > 0 ? row.ttl : seconds };
    });
  }

  private async inDatabase<T>(fallback: T, fn: (db: DataSource) => Promise<T>): Promise<T> {
    if (!this.dataSource) return fallback;
    try {
      return await fn(this.dataSource);
    } catch (err) {
      this.warn(err);
      return fallback;
    }
  }

  async onModuleDestroy(): Promise<void> {
    await this.redis?.quit().catch(() => undefined);
  }

  private key(key: string): string {
    return `${this.config.redisPrefix}:throttle:${key}`;
  }

  private client(): Redis {
    if (!this.redis) {
      // Fail fast while Redis is away (no offline queue): a request must not wait for it.
      this.redis = new Redis({ ...redisOptions(this.config, 'producer'), maxRetriesPerRequest: 1 });
      this.redis.on('error', (err: Error) => this.warn(err));
    }
    return this.redis;
  }

  private warn(err: unknown): void {
    const message = err instanceof Error ? err.message : String(err);
    if (message === this.lastError) return;
    this.lastError = message;
    this.logger.warn(`throttle counters unavailable (${message}): nobody is refused meanwhile`);
  }
}
