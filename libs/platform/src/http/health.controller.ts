import { Controller, Get, Injectable, OnApplicationShutdown, Res } from '@nestjs/common';
import type { Response } from 'express';
import Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { LodeConfig } from '../config/lode-config';
import { redisOptions } from '../queue/queue-connection';
import { sendJson } from './json-response';

const PROBE_TIMEOUT_MS = 1500;

/** Answers whether PostgreSQL and Redis really respond, each within a short timeout. */
@Injectable()
export class DependencyProbe implements OnApplicationShutdown {
  private redis?: Redis;

  constructor(
    private readonly dataSource: DataSource,
    private readonly config: LodeConfig,
  ) {}

  async database(): Promise<string | undefined> {
    return failure(timeout(this.dataSource.query('select 1'), PROBE_TIMEOUT_MS));
  }

  async queue(): Promise<string | undefined> {
    if (!this.redis) {
      // Queues the PING while (re)connecting; the timeout below bounds the wait.
      this.redis = new Redis({
        ...redisOptions(this.config, 'producer'),
        enableOfflineQueue: true,
        maxRetriesPerRequest: 1,
      });
      this.redis.on('error', () => undefined);
    }
    return failure(timeout(this.redis.ping(), PROBE_TIMEOUT_MS));
  }

  async onApplicationShutdown(): Promise<void> {
    this.redis?.disconnect();
  }
}

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

async function failure(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
    return undefined;
  } catch (err) {
    return (err as Error).message || String(err);
  }
}

function timeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let t: NodeJS.Timeout;
  return Promise.race([
    p,
    new Promise<never>((_, r) => (t = setTimeout(() => r(new Error(`no answer within ${ms} ms`)), ms))),
  ]).finally(() => clearTimeout(t));
}
