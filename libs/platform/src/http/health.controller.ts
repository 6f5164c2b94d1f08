import { Controller, Get, Res } from '@nestjs/common';
import type { Response } from 'express';
import { DependencyProbe } from '../dependency-probe';
import { sendJson } from './json-response';

@Controller('-')
export class HealthController {
  constructor(private readonly probe: DependencyProbe) {}

  /** Liveness: the process is up and serving HTTP. */
  @Get('health')
  health() {
    return { status: 'ok' };
  }

  /** Readiness: 200 when PostgreSQL and Redis both answer, 503 naming what failed otherwise. */
  @Get('readiness')
  async readiness(@Res() res: Response): Promise<void> {
    const [db, redis] = await Promise.all([this.probe.database(), this.probe.queue()]);
    const check = (error?: string) => (error ? { status: 'failed', message: error } : { status: 'ok' });
    const ok = !db && !redis;
    sendJson(res, ok ? 200 : 503, {
      status: ok ? 'ok' : 'failed',
      checks: { database: check(db), redis: check(redis) },
    });
  }
}
