import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { LodeConfig } from '../config/lode-config';
import { SharedCounters } from './counters';

/** How long failures are counted, and how long an address that passed the limit is refused. */
export const FAILURE_WINDOW_SECONDS = 60;
export const BAN_SECONDS = 3600;
/** How long this process trusts "not refused" for an address before asking Redis again. */
const CLEAR_FOR_MS = 1000;

/**
 * GitLab's Rack::Attack for failed authentication: an address that presents refused credentials
 * (an unknown, revoked or expired token, a blocked user's) more than `LODE_AUTH_FAILURES` times in a
 * minute is refused for an hour, on the API and on git alike, valid credentials included (else a
 * guess that succeeds would still get through). The counters are `SharedCounters`, so every process
 * sees them. Requests without credentials never count: git's first, anonymous request of every clone
 * is one.
 */
@Injectable()
export class AuthFailureThrottle implements OnModuleInit {
  private readonly logger = new Logger('AuthFailureThrottle');
  /** address -> until when this process knows it is clear (ms) or refused (negative: refused until -value). */
  private readonly known = new Map<string, number>();

  constructor(
    private readonly config: LodeConfig,
    private readonly counters: SharedCounters,
  ) {}

  get enabled(): boolean {
    return this.config.authFailures > 0;
  }

  onModuleInit(): void {
    if (this.enabled) this.counters.connect();
  }

  /** Seconds the address is still refused for, or 0. */
  async refusedFor(address: string): Promise<number> {
    if (!this.enabled) return 0;
    const now = Date.now();
    const known = this.known.get(address);
    if (known !== undefined && known > now) return 0;
    if (known !== undefined && known < 0 && -known > now) return Math.ceil((-known - now) / 1000);
    const ttl = await this.counters.ttl(`auth-ban:${address}`);
    this.remember(address, ttl > 0 ? -(now + ttl * 1000) : now + CLEAR_FOR_MS);
    return ttl;
  }

  /** Counts a refused authentication from the address; past the limit, refuses it for an hour. */
  async failed(address: string): Promise<void> {
    if (!this.enabled) return;
    const { count } = await this.counters.hit(`auth-failures:${address}`, FAILURE_WINDOW_SECONDS);
    if (count > this.config.authFailures) {
      await this.counters.set(`auth-ban:${address}`, BAN_SECONDS);
      this.remember(address, -(Date.now() + BAN_SECONDS * 1000));
      this.logger.warn(`${address}: ${count} failed authentications in a minute, refused for an hour`);
    }
  }

  private remember(address: string, value: number): void {
    if (this.known.size > 10_000) this.known.clear();
    this.known.set(address, value);
  }
}
