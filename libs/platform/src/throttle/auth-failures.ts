import { Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { Redis } from 'ioredis';
import { LodeConfig } from '../config/lode-config';
import { redisOptions } from '../queue/queue-connection';

/** How long failures are counted, and how long an address that passed the limit is refused. */
export const FAILURE_WINDOW_SECONDS = 60;
export const BAN_SECONDS = 3600;
/** How long this process trusts "not refused" for an address before asking Redis again. */
const CLEAR_FOR_MS = 1000;

/**
 * GitLab's Rack::Attack for failed authentication: an address that presents refused credentials
 * (an unknown, revoked or expired token, a blocked user's) more than `LODE_AUTH_FAILURES` times in a
 * minute is refused for an hour, on the API and on git alike, valid credentials included (else a
 * guess that succeeds would still get through). The counters live in Redis, beside the queues, so
 * every process shares them. Requests without credentials never count: git's first, anonymous
 * request of every clone is one. Redis being away never refuses anyone: the throttle then fails open.
 */
@Injectable()
export class AuthFailureThrottle implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('AuthFailureThrottle');
  private redis?: Redis;
  /** address -> until when this process knows it is clear (ms) or refused (negative: refused until -value). */
  private readonly known = new Map<string, number>();
  private lastError = '';

  constructor(private readonly config: LodeConfig) {}

  get enabled(): boolean {
    return this.config.authFailures > 0;
  }

  /** Seconds the address is still refused for, or 0. */
  async refusedFor(address: string): Promise<number> {
    if (!this.enabled) return 0;
    const now = Date.now();
    const known = this.known.get(address);
    if (known !== undefined && known > now) return 0;
    if (known !== undefined && known < 0 && -known > now) return Math.ceil((-known - now) / 1000);
    try {
      const ttl = await this.client().ttl(this.key('ban', address));
      if (ttl > 0) {
        this.remember(address, -(now + ttl * 1000));
        return ttl;
      }
      this.remember(address, now + CLEAR_FOR_MS);
      return 0;
    } catch (err) {
      this.warn(err);
      return 0;
    }
  }

  /** Counts a refused authentication from the address; past the limit, refuses it for an hour. */
  async failed(address: string): Promise<void> {
    if (!this.enabled) return;
    try {
      const redis = this.client();
      const key = this.key('failures', address);
      const [[, count]] = (await redis.multi().incr(key).expire(key, FAILURE_WINDOW_SECONDS, 'NX').exec()) as [
        [Error | null, number],
      ];
      if (count > this.config.authFailures) {
        await redis.set(this.key('ban', address), '1', 'EX', BAN_SECONDS);
        this.remember(address, -(Date.now() + BAN_SECONDS * 1000));
        this.logger.warn(`${address}: ${count} failed authentications in a minute, refused for an hour`);
      }
    } catch (err) {
      this.warn(err);
    }
  }

  onModuleInit(): void {
    if (this.enabled) this.client();
  }

  async onModuleDestroy(): Promise<void> {
    await this.redis?.quit().catch(() => undefined);
  }

  private key(kind: string, address: string): string {
    return `${this.config.redisPrefix}:auth-${kind}:${address}`;
  }

  private remember(address: string, value: number): void {
    if (this.known.size > 10_000) this.known.clear();
    this.known.set(address, value);
  }

  /** One connection, made at start (see onModuleInit) so the first request finds it ready. */
  private client(): Redis {
    if (!this.redis) {
      // Fail fast while Redis is away (no offline queue): authentication must not wait for it.
      this.redis = new Redis({ ...redisOptions(this.config, 'producer'), maxRetriesPerRequest: 1 });
      this.redis.on('error', (err: Error) => this.warn(err));
    }
    return this.redis;
  }

  private warn(err: unknown): void {
    const message = err instanceof Error ? err.message : String(err);
    if (message === this.lastError) return;
    this.lastError = message;
    this.logger.warn(`failed-authentication counters unavailable (${message}): nobody is refused meanwhile`);
  }
}
