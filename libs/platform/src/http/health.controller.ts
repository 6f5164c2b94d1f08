import { Controller, Get, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import { DependencyProbe } from '../dependency-probe';
import { BLOCKED_LIMIT_MS, EventLoopWatch } from './event-loop-watch';
import { sendJson } from './json-response';

type Check = { status: 'ok' } | { status: 'failed'; message: string };
const check = (error?: string): Check => (error ? { status: 'failed', message: error } : { status: 'ok' });

@Controller('-')
export class HealthController {
  constructor(
    private readonly probe: DependencyProbe,
    private readonly loop: EventLoopWatch,
  ) {}

  /** The process is up and serving HTTP. */
  @Get('health')
  health() {
    return { status: 'ok' };
  }

  /**
   * Liveness, as GitLab's `/-/liveness`: 200 unless the event loop was recently blocked for more
   * than 5 s (measured, see EventLoopWatch): then 503, so a supervisor restarts a stuck process.
   */
  @Get('liveness')
  liveness(@Res() res: Response): void {
    const lag = Math.round(this.loop.lagMs());
    if (lag > BLOCKED_LIMIT_MS)
      sendJson(res, 503, { status: 'failed', message: `the event loop was blocked for ${lag} ms` });
    else sendJson(res, 200, { status: 'ok' });
  }

  /**
   * Readiness: 200 when PostgreSQL and Redis both answer, 503 naming what failed otherwise. With
   * `?all=1`, GitLab's per-check form (`db_check`, `queues_check`, `storage_check`, each a list of
   * `{status, message?}`), which also checks that the repository storage is writable.
   */
  @Get('readiness')
  async readiness(@Res() res: Response, @Query('all') all?: unknown): Promise<void> {
    if (all === '1' || all === 'true') {
      const [db, queue, storage] = await Promise.all([this.probe.database(), this.probe.queue(), this.probe.storage()]);
      const ok = !db && !queue && !storage;
      sendJson(res, ok ? 200 : 503, {
        status: ok ? 'ok' : 'failed',
        master_check: [{ status: 'ok' }],
        db_check: [check(db)],
        queues_check: [check(queue)],
        storage_check: [{ ...check(storage), labels: { shard: 'default' } }],
      });
      return;
    }
    const [db, redis] = await Promise.all([this.probe.database(), this.probe.queue()]);
    const ok = !db && !redis;
    sendJson(res, ok ? 200 : 503, {
      status: ok ? 'ok' : 'failed',
      checks: { database: check(db), redis: check(redis) },
    });
  }
}
