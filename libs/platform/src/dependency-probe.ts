import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { LodeConfig } from './config/lode-config';
import { pingDatabase } from './database/sql';
import { QUEUE_SCHEMA, redisOptions } from './queue/queue-connection';

const PROBE_TIMEOUT_MS = 1500;

/** Answers whether PostgreSQL and Redis really respond, each within a short timeout. */
@Injectable()
export class DependencyProbe implements OnApplicationShutdown {
  private redis?: Redis;

  constructor(
    private readonly dataSource: DataSource,
    private readonly config: LodeConfig,
  ) {}

  /** What serves the job queues: Redis, or (without Redis, as in embedded mode) the database. */
  get queueBackend(): 'redis' | 'postgres' {
    return this.config.queueBackend;
  }

  async database(): Promise<string | undefined> {
    return failure(timeout(pingDatabase(this.dataSource), PROBE_TIMEOUT_MS));
  }

  /** Redis's PING, or without Redis whether BullMQ's schema is in the database (its first queue creates it). */
  async queue(): Promise<string | undefined> {
    if (this.config.queueBackend === 'postgres')
      return failure(
        timeout(
          (async () => {
            const rows = (await this.dataSource.query(`select 1 from pg_namespace where nspname = $1`, [
              QUEUE_SCHEMA,
            ])) as unknown[];
            if (!rows.length) throw new Error(`the job queues' schema ${QUEUE_SCHEMA} does not exist yet`);
          })(),
          PROBE_TIMEOUT_MS,
        ),
      );
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

  /** Whether the repository storage (`$LODE_DATA_DIR/repositories`) takes a new file: written, then removed. */
  async storage(): Promise<string | undefined> {
    const dir = join(this.config.dataDir, 'repositories');
    const file = join(dir, `.readiness-${randomBytes(6).toString('hex')}`);
    return failure(
      timeout(
        (async () => {
          await mkdir(dir, { recursive: true });
          try {
            await writeFile(file, 'ok');
          } finally {
            await rm(file, { force: true });
          }
        })(),
        PROBE_TIMEOUT_MS,
      ),
    );
  }

  async onApplicationShutdown(): Promise<void> {
    this.redis?.disconnect();
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
