import { Injectable, type OnModuleInit } from '@nestjs/common';
import type { Response } from 'express';
import { LodeConfig } from '../config/lode-config';
import { TooManyRequests } from '../errors';
import { SharedCounters } from './counters';

/**
 * Optional request limits, as GitLab's "throttle_authenticated_api" and "throttle_unauthenticated"
 * settings: each signed-in user (`LODE_RATE_LIMIT_AUTHENTICATED`) and each address without
 * credentials (`LODE_RATE_LIMIT_UNAUTHENTICATED`) may make so many requests per
 * `LODE_RATE_LIMIT_PERIOD` seconds; both off (0) by default. Past it: 429 with `Retry-After`. Every
 * answer counted carries GitLab's `RateLimit-*` headers, which python-gitlab and gitbeaker read.
 */
@Injectable()
export class RequestRateLimits implements OnModuleInit {
  constructor(
    private readonly config: LodeConfig,
    private readonly counters: SharedCounters,
  ) {}

  onModuleInit(): void {
    if (this.config.rateLimitAuthenticated > 0 || this.config.rateLimitUnauthenticated > 0) this.counters.connect();
  }

  /** Whether requests without credentials are counted (LODE_RATE_LIMIT_UNAUTHENTICATED above 0). */
  get countsAnonymous(): boolean {
    return this.config.rateLimitUnauthenticated > 0;
  }

  /** Counts a request by a user (their id) or an anonymous address; throws TooManyRequests past the limit. */
  async count(caller: { userId: number } | { address: string }, res: Response): Promise<void> {
    const [limit, key] =
      'userId' in caller
        ? [this.config.rateLimitAuthenticated, `requests:user:${caller.userId}`]
        : [this.config.rateLimitUnauthenticated, `requests:address:${caller.address}`];
    if (limit <= 0) return;
    const period = this.config.rateLimitPeriod;
    const { count, resetIn } = await this.counters.hit(key, period);
    if (count === 0) return; // the counters are away: nothing is limited
    const resetAt = Math.floor(Date.now() / 1000) + resetIn;
    res.setHeader('RateLimit-Limit', String(limit));
    res.setHeader('RateLimit-Observed', String(count));
    res.setHeader('RateLimit-Remaining', String(Math.max(0, limit - count)));
    res.setHeader('RateLimit-Reset', String(resetAt));
    res.setHeader('RateLimit-ResetTime', new Date(resetAt * 1000).toUTCString());
    if (count > limit) {
      res.setHeader('Retry-After', String(resetIn));
      throw new TooManyRequests(resetIn);
    }
  }
}
