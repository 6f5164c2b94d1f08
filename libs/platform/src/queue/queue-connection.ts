import {
  Queue,
  createPostgresBackend,
  createRedisBackend,
  setDefaultBackendFactory,
  type PostgresPoolConfig,
  type RedisOptions,
} from 'bullmq';
import { LodeConfig } from '../config/lode-config';
import { connectTimeoutMs } from '../database/database';

/** BullMQ's tables and functions live in this schema of Lode's database when there is no Redis. */
export const QUEUE_SCHEMA = 'bullmq';

/**
 * BullMQ's Redis options from `REDIS_URL`. Workers need `maxRetriesPerRequest: null`; producers fail
 * fast while Redis is away (`enableOfflineQueue: false`) so the outbox relay can retry later.
 */
export function redisOptions(config: LodeConfig, role: 'worker' | 'producer'): RedisOptions {
  if (!config.redisUrl) throw new Error('no REDIS_URL: the queues live in PostgreSQL');
  const url = new URL(config.redisUrl);
  const db = url.pathname.length > 1 ? Number(url.pathname.slice(1)) : 0;
  return {
    host: url.hostname || '127.0.0.1',
    port: url.port ? Number(url.port) : 6379,
    username: url.username ? decodeURIComponent(url.username) : undefined,
    password: url.password ? decodeURIComponent(url.password) : undefined,
    db: Number.isInteger(db) ? db : 0,
    tls: url.protocol === 'rediss:' ? {} : undefined,
    maxRetriesPerRequest: null,
    enableOfflineQueue: role === 'worker',
    connectTimeout: 5000,
    // Reconnect forever, at most every 2 s: Redis coming back must resume delivery on its own.
    retryStrategy: (times: number) => Math.min(times * 200, 2000),
  };
}

/**
 * BullMQ's PostgreSQL backend on Lode's own database (BullMQ 6), used when REDIS_URL is unset: its
 * schema is created by the first connection (under BullMQ's advisory lock). Each queue and worker
 * has a small pool of its own.
 */
function postgresOptions(config: LodeConfig): PostgresPoolConfig {
  return {
    connectionString: config.databaseUrl,
    schema: QUEUE_SCHEMA,
    migrate: true,
    max: 4,
    connectionTimeoutMillis: connectTimeoutMs(config),
    application_name: `lode-${config.role}-queue`,
  };
}

/**
 * The one place that turns configuration into a queue connection (docs/architecture.md, Embedded mode):
 * what `BullModule.forRoot` and every Queue take. It also makes the backend the process-wide default,
 * since @nestjs/bullmq builds its Workers without naming one.
 */
export function queueConnection(
  config: LodeConfig,
  role: 'worker' | 'producer',
): { connection: RedisOptions | PostgresPoolConfig; prefix: string } {
  if (config.queueBackend === 'postgres') {
    setDefaultBackendFactory(createPostgresBackend as Parameters<typeof setDefaultBackendFactory>[0]);
    return { connection: postgresOptions(config), prefix: config.redisPrefix };
  }
  setDefaultBackendFactory(createRedisBackend as Parameters<typeof setDefaultBackendFactory>[0]);
  return { connection: redisOptions(config, role), prefix: config.redisPrefix };
}

/**
 * A producer's handle on one of Lode's queues (the outbox relay, metrics, the queue dashboards): the
 * only way code outside the workers opens a queue, so the backend behind it is chosen here alone.
 * Connection errors are left to the caller's operations (they reject); the queue itself stays quiet.
 */
export function openQueue(config: LodeConfig, name: string): Queue {
  // Both backends' queues have the same API; only the connection options' type tells them apart.
  const q =
    config.queueBackend === 'postgres'
      ? (new Queue(
          name,
          { connection: postgresOptions(config), prefix: config.redisPrefix },
          createPostgresBackend,
        ) as unknown as Queue)
      : new Queue(name, { connection: redisOptions(config, 'producer'), prefix: config.redisPrefix });
  q.on('error', () => undefined);
  return q;
}
