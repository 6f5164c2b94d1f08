import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Queue } from 'bullmq';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { LodeConfig } from '../config/lode-config';
import { rows } from '../database/sql';
import { OUTBOX_CHANNEL } from '../event-store/pg-event-store';
import { redisOptions } from '../queue/queue-connection';

interface OutboxRow {
  id: string;
  queue: string;
  name: string;
  job_id: string;
  data: unknown;
  options: Record<string, unknown>;
}

const BATCH = 100;
const ADD_TIMEOUT_MS = 3000;

/**
 * Moves outbox rows into BullMQ: claims undispatched rows (`for update skip locked`, so several
 * relays never take the same row), adds each with its stable `jobId` and stamps it dispatched.
 * Woken by NOTIFY at commit, with a polling fallback. While Redis is away the rows simply wait.
 */
@Injectable()
export class OutboxRelay implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('OutboxRelay');
  private readonly queues = new Map<string, Queue>();
  private listener?: Client;
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private again = false;
  private stopped = false;
  private lastFailure = '';

  constructor(
    private readonly dataSource: DataSource,
    private readonly config: LodeConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.listen();
    this.timer = setInterval(() => this.wake(), this.config.outboxPollMs);
    this.wake();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.running;
    await this.listener?.end().catch(() => undefined);
    await Promise.all([...this.queues.values()].map((q) => q.close().catch(() => undefined)));
  }

  /** Runs a relay pass now, or right after the current one. */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.drain()
      .then(() => undefined)
      .catch((err) => this.logFailure(String(err)))
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** Relays until no undispatched row is left or a delivery fails; resolves with the number relayed. */
  async drain(): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await this.relayBatch();
      total += n;
      if (n < BATCH) return total;
    }
  }

  private async relayBatch(): Promise<number> {
    return this.dataSource.transaction(async (db) => {
      const pending = await rows<OutboxRow>(
        db,
        `select id, queue, name, job_id, data, options from outbox
          where dispatched_at is null order by id limit $1 for update skip locked`,
        [BATCH],
      );
      const done: string[] = [];
      for (const row of pending) {
        try {
          await withTimeout(
            this.queue(row.queue).add(row.name, row.data, {
              ...row.options,
              jobId: row.job_id,
              removeOnComplete: { age: 24 * 3600, count: 10000 },
              removeOnFail: { age: 7 * 24 * 3600 },
            }),
            ADD_TIMEOUT_MS,
          );
          done.push(row.id);
        } catch (err) {
          await db.query(`update outbox set attempts = attempts + 1, last_error = $2 where id = $1`, [
            row.id,
            String(err),
          ]);
          this.logFailure(`job ${row.job_id} waits: ${String(err)}`);
          break;
        }
      }
      if (done.length) {
        await db.query(
          `update outbox set dispatched_at = clock_timestamp(), last_error = null where id = any($1::bigint[])`,
          [done],
        );
        if (this.lastFailure) this.logger.log(`relaying again after: ${this.lastFailure}`);
        this.lastFailure = '';
      }
      return done.length === pending.length ? done.length : 0;
    });
  }

  private queue(name: string): Queue {
    let q = this.queues.get(name);
    if (!q) {
      q = new Queue(name, { connection: redisOptions(this.config, 'producer'), prefix: this.config.redisPrefix });
      q.on('error', () => undefined); // connection errors surface through add(), where they are logged once
      this.queues.set(name, q);
    }
    return q;
  }

  private async listen(): Promise<void> {
    try {
      const client = new Client({ connectionString: this.config.databaseUrl });
      client.on('error', () => undefined);
      client.on('notification', () => this.wake());
      await client.connect();
      await client.query(`listen ${OUTBOX_CHANNEL}`);
      this.listener = client;
    } catch (err) {
      this.logger.warn(`LISTEN failed, polling only: ${String(err)}`);
    }
  }

  private logFailure(message: string): void {
    if (message !== this.lastFailure) this.logger.warn(message);
    this.lastFailure = message;
  }
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let t: NodeJS.Timeout;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      t = setTimeout(() => reject(new Error(`queue did not answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(t));
}
