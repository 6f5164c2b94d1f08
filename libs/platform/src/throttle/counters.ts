import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { Redis } from 'ioredis';
import { LodeConfig } from '../config/lode-config';
import { redisOptions } from '../queue/queue-connection';

/**
 * Counters every process shares, in Redis beside the queues (`LODE_REDIS_PREFIX`), for the
 * throttles. They fail open: while Redis is away each call answers as if nothing was counted, and
 * one warning says so, because refusing every caller for a lost cache would be worse.
 */
@Injectable()
export class SharedCounters implements OnModuleDestroy {
  private readonly logger = new Logger('Throttle');
  private redis?: Redis;
  private lastError = '';

  constructor(private readonly config: LodeConfig) {}

  /** Adds one to `key` in a window of `seconds` that starts with its first count: the count, and the seconds left. */
  async hit(key: string, seconds: number): Promise<{ count: number; resetIn: number }> {
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
    try {
      return Math.max(0, await this.client().ttl(this.key(key)));
    } catch (err) {
      this.warn(err);
      return 0;
    }
  }

  async set(key: string, seconds: number): Promise<void> {
    try {
      await this.client().set(this.key(key), '1', 'EX', seconds);
    } catch (err) {
      this.warn(err);
    }
  }

  /** Connects ahead of the first request, so it finds the connection ready. */
  connect(): void {
    this.client();
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
