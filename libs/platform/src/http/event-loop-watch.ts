import { Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';

/** How often the watch's timer asks to run. */
const TICK_MS = 500;
/** Past this, liveness fails: GitLab's and Kubernetes' usual reading of "the process is stuck". */
export const BLOCKED_LIMIT_MS = 5000;

/**
 * Measures how late the event loop runs a timer. A timer asked for every TICK_MS that fires late
 * by N ms means the loop was blocked that long; the longest recent delay (the last few seconds, and
 * the wait since the last tick while it is still overdue) is what liveness judges. A loop blocked
 * right now cannot answer the liveness request at all, so the probe times out or, once it is
 * unblocked, sees the delay it just had.
 */
@Injectable()
export class EventLoopWatch implements OnModuleInit, OnApplicationShutdown {
  private timer?: NodeJS.Timeout;
  private last = performance.now();
  /** Recent delays with the time they were seen, kept for `windowMs`. */
  private recent: { at: number; lag: number }[] = [];

  constructor(private readonly windowMs = 10_000) {}

  onModuleInit(): void {
    this.last = performance.now();
    this.timer = setInterval(() => this.tick(), TICK_MS);
    this.timer.unref();
  }

  private tick(): void {
    const now = performance.now();
    const lag = Math.max(0, now - this.last - TICK_MS);
    this.last = now;
    this.recent = this.recent.filter((r) => now - r.at < this.windowMs);
    if (lag > 0) this.recent.push({ at: now, lag });
  }

  /** The longest the loop was recently kept from running a timer, in ms. */
  lagMs(): number {
    const now = performance.now();
    const overdue = Math.max(0, now - this.last - TICK_MS);
    return Math.max(overdue, ...this.recent.filter((r) => now - r.at < this.windowMs).map((r) => r.lag));
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }
}
