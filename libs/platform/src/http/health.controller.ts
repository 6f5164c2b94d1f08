import { Controller, Get, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import { DependencyProbe } from '../dependency-probe';
import { BLOCKED_LIMIT_MS, EventLoopWatch } from './event-loop-watch';
import { sendJson } from './json-response';

type Check = { status: 'ok' } | { status: 'failed'; message: string };
const check = (error?: string): Check => (error ? { status: 'failed', message: error } : { status: 'ok' });

/** A probe's answer: its status code and JSON body. */
export interface ProbeAnswer {
  status: number;
  body: Record<string, unknown>;
}

/**
 * Liveness, as GitLab's `/-/liveness`: 200 unless the event loop was recently blocked for more than
 * 5 s (measured, see EventLoopWatch), or `stuck` names something else that cannot recover by itself:
 * then 503, so a supervisor restarts the process.
 */
export function liveness(loop: EventLoopWatch, stuck?: string): ProbeAnswer {
  const lag = Math.round(loop.lagMs());
  if (lag > BLOCKED_LIMIT_MS)
    return { status: 503, body: { status: 'failed', message: `the event loop was blocked for ${lag} ms` } };
  if (stuck) return { status: 503, body: { status: 'failed', message: stuck } };
  return { status: 200, body: { status: 'ok' } };
}

/**
 * Readiness: 200 when PostgreSQL and Redis both answer, 503 naming what failed otherwise. Without
 * Redis (embedded mode, or no REDIS_URL) the queues' check is named `queues` and says
 * the database serves them, instead of a `redis` that is not there. With
 * `all`, GitLab's per-check form (`db_check`, `queues_check`, `storage_check`, each a list of
 * `{status, message?}`), which also checks that the repository storage is writable.
 */
export async function readiness(probe: DependencyProbe, all: boolean): Promise<ProbeAnswer> {
  if (all) {
    const [db, queue, storage] = await Promise.all([probe.database(), probe.queue(), probe.storage()]);
    const ok = !db && !queue && !storage;
    return {
      status: ok ? 200 : 503,
      body: {
        status: ok ? 'ok' : 'failed',
        master_check: [{ status: 'ok' }],
        db_check: [check(db)],
        queues_check: [check(queue)],
        storage_check: [{ ...check(storage), labels: { shard: 'default' } }],
      },
    };
  }
  const [db, queue] = await Promise.all([probe.database(), probe.queue()]);
  const ok = !db && !queue;
  const queues =
    probe.queueBackend === 'redis' ? { redis: check(queue) } : { queues: { ...check(queue), backend: 'database' } };
  return {
    status: ok ? 200 : 503,
    body: { status: ok ? 'ok' : 'failed', checks: { database: check(db), ...queues } },
  };
}

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

  @Get('liveness')
  liveness(@Res() res: Response): void {
    const { status, body } = liveness(this.loop);
    sendJson(res, status, body);
  }

  @Get('readiness')
  async readiness(@Res() res: Response, @Query('all') all?: unknown): Promise<void> {
    const { status, body } = await readiness(this.probe, all === '1' || all === 'true');
    sendJson(res, status, body);
  }
}
