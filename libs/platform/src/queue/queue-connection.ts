import { Queue, type RedisOptions } from 'bullmq';
import { LodeConfig } from '../config/lode-config';

/**
 * The one place that turns configuration into a queue connection (ARCHITECTURE.md, embedded mode):
 * BullMQ's Redis options from `REDIS_URL`. Workers need `maxRetriesPerRequest: null`; producers fail
 * fast while Redis is away (`enableOfflineQueue: false`) so the outbox relay can retry later.
 */
export function redisOptions(config: LodeConfig, role: 'worker' | 'producer'): RedisOptions {
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
 * A producer's handle on one of Lode's queues (the outbox relay, metrics, the queue dashboards): the
 * only way code outside the workers opens a queue, so the backend behind it is chosen here alone.
 * Connection errors are left to the caller's operations (they reject); the queue itself stays quiet.
 */
export function openQueue(config: LodeConfig, name: string): Queue {
  const q = new Queue(name, { connection: redisOptions(config, 'producer'), prefix: config.redisPrefix });
  q.on('error', () => undefined);
  return q;
}
