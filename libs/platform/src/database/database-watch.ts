import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { LodeConfig } from '../config/lode-config';
import { sendJson } from '../http/json-response';
import { Invalidations } from '../outbox/invalidations';

/** How often the database is asked `select 1`, and how long an answer may take in any case. */
const PROBE_EVERY_MS = 250;
const PROBE_TIMEOUT_MS = 1500;
/**
 * The least time a probe may go unanswered, with nothing heard on any other connection either,
 * before the database counts as silent. A loaded machine answers slower: the bound is also three
 * times the slowest answer of the last half minute (a 2-core CI machine running a typecheck beside
 * the suite once took 0.85 s for `select 1`).
 */
const SILENCE_MIN_MS = 400;
const SLOWEST_TIMES = 3;
/** The slowest answers are kept per slot of this length, over this many slots. */
const SLOT_MS = 5000;
const SLOTS = 6;
/** How often an unanswered probe is looked at. */
const STEP_MS = 50;
/** How late a step may end before the time counts as this process's own stall, not the database's silence. */
const STALL_MS = 250;

/** The part of a pooled `pg` client the watch uses: its socket. */
interface PooledClient {
  connection?: { stream?: { destroy(err?: Error): void; on?(event: 'data', fn: () => void): unknown } };
}
interface Pool {
  on(event: 'connect' | 'remove', fn: (client: PooledClient) => void): unknown;
  /** pg-pool's options, read at each connection it opens. */
  options?: { connectionTimeoutMillis?: number };
  /** pg-pool's own list of its clients (not public API, hence optional). */
  _clients?: PooledClient[];
}

/**
 * Knows, within about half a second, that PostgreSQL stopped answering: its own connection asks
 * `select 1` every quarter second, and the database counts as silent when that answer is missing
 * and no pooled connection has heard a byte either, for at least 0.4 s (more on a machine whose
 * answers were slow lately), or when the probe alone goes 1.5 s unanswered. Then requests are
 * answered 503 at once (see `databaseGate`) instead of waiting for a connection or a statement
 * timeout, and the pool's connections are cut, so requests that were waiting on them fail now (a
 * silent network never tells the client its connection is dead). The first answer afterwards opens
 * the gate again: no restart is needed.
 */
@Injectable()
export class DatabaseWatch implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Database');
  private readonly clients = new Set<PooledClient>();
  private probe?: Client;
  private timer?: NodeJS.Timeout;
  private stopped = false;
  /** Why the database counts as unreachable; undefined while it answers. */
  private down?: string;
  private pool?: Pool;
  /** The pool's connect timeout, put back when the database answers again. */
  private connectTimeout?: number;
  /** When a pooled connection last received bytes from PostgreSQL (performance.now()). */
  private heardAt = performance.now();
  private readonly hear = (): void => {
    this.heardAt = performance.now();
  };
  private readonly recentAnswers = new SlowestRecently(SLOT_MS, SLOTS);

  constructor(
    private readonly dataSource: DataSource,
    private readonly config: LodeConfig,
    private readonly invalidations: Invalidations,
  ) {}

  /** Why PostgreSQL counts as unreachable right now, or undefined while it answers. */
  get unreachable(): string | undefined {
    return this.down;
  }

  onApplicationBootstrap(): void {
    // The embedded database runs in this process and cannot drop off a network; its one session is
    // held by each transaction in turn, so a probe waiting behind a long one would be a false alarm.
    if (this.config.embeddedDatabase) return;
    const pool = (this.dataSource.driver as unknown as { master?: Pool }).master;
    this.pool = pool;
    // The connections opened before now (TypeORM's own at start) are only in pg-pool's list.
    for (const c of pool?._clients ?? []) this.follow(c);
    pool?.on('connect', (c) => this.follow(c));
    pool?.on('remove', (c) => this.clients.delete(c));
    this.schedule();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.dropProbe();
  }

  /** Keeps a pooled connection to cut, and counts its bytes as the database being heard. */
  private follow(client: PooledClient): void {
    if (this.clients.has(client)) return;
    this.clients.add(client);
    client.connection?.stream?.on?.('data', this.hear);
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.check().finally(() => this.schedule()), PROBE_EVERY_MS);
    this.timer.unref();
  }

  private async check(): Promise<void> {
    const asking = this.ask();
    const silence = await this.waitForAnswer(asking, performance.now());
    if (silence === undefined) return this.answered();
    await this.dropProbe();
    if (this.stopped) return;
    const reason = `PostgreSQL did not answer: ${silence}`;
    if (!this.down) {
      this.logger.warn(`${reason}; answering 503 until it does, cutting ${this.clients.size} pooled connection(s)`);
      this.cutPool();
    }
    this.down = reason;
  }

  /** Waits for the probe's answer: undefined once it came, otherwise why the database counts as silent. */
  private async waitForAnswer(asking: Promise<void>, sent: number): Promise<string | undefined> {
    const bound = this.silenceBound();
    // The time this process was awake to read an answer: a step that ends far later than asked was
    // this process's own stall (a long garbage collection, a burst of synchronous work), when an
    // answer may already wait unread in the socket. Such time does not count; the next step reads it.
    let awake = 0;
    let suspected = false;
    for (;;) {
      const before = performance.now();
      const state = await within(asking, STEP_MS);
      const took = performance.now() - before;
      if (state === 'answered') {
        this.recentAnswers.note(awake + Math.min(took, STEP_MS), performance.now());
        return undefined;
      }
      // Refused or reset: the database (or the network) said so, nothing to wait for.
      if (state instanceof Error) return state.message;
      if (took - STEP_MS > STALL_MS) {
        suspected = false;
        continue;
      }
      awake += took;
      if (awake >= PROBE_TIMEOUT_MS) return `no answer within ${PROBE_TIMEOUT_MS} ms`;
      const quiet = performance.now() - Math.max(this.heardAt, sent);
      if (awake < bound || quiet < bound) {
        suspected = false;
        continue;
      }
      // An answer that arrived as this step's timer fired is read in the poll after it: one more step.
      if (suspected) return `nothing heard from it on any connection for ${Math.round(quiet)} ms`;
      suspected = true;
    }
  }

  /** How long the probe and every pooled connection may stay unanswered before the database counts as silent. */
  private silenceBound(): number {
    const slowest = this.recentAnswers.slowest(performance.now());
    return Math.min(PROBE_TIMEOUT_MS, Math.max(SILENCE_MIN_MS, SLOWEST_TIMES * slowest));
  }

  private answered(): void {
    if (this.down) this.logger.log(`PostgreSQL answers again (after: ${this.down})`);
    this.down = undefined;
    if (this.pool?.options && this.connectTimeout !== undefined) {
      this.pool.options.connectionTimeoutMillis = this.connectTimeout;
      this.connectTimeout = undefined;
    }
  }

  private async ask(): Promise<void> {
    if (!this.probe) {
      const probe = new Client({
        connectionString: this.config.databaseUrl,
        connectionTimeoutMillis: PROBE_TIMEOUT_MS,
        keepAlive: true,
        application_name: `lode-${this.config.role}-watch`,
      });
      probe.on('error', () => undefined);
      this.probe = probe;
      await probe.connect();
    }
    await this.probe.query('select 1');
  }

  private async dropProbe(): Promise<void> {
    const probe = this.probe;
    this.probe = undefined;
    // Ending politely would wait on the same silent network: the socket is simply closed.
    (probe as unknown as PooledClient | undefined)?.connection?.stream?.destroy();
    await probe?.end().catch(() => undefined);
  }

  /** Closes every pooled connection's socket (and the LISTEN one): queries waiting on them fail, and new ones are opened later. */
  private cutPool(): void {
    // Without an error of its own, the client fails its queries with "Connection terminated".
    for (const c of this.clients) c.connection?.stream?.destroy();
    this.clients.clear();
    // And the LISTEN connection, whose fences the caches' reads wait on.
    this.invalidations.cut();
    // A request already past the gate (waiting on a cut connection or on a fence) would next wait
    // LODE_DB_CONNECT_TIMEOUT_MS for a new connection the silence cannot give: until the probe is
    // answered again, the pool gives up on a new connection at once (its timeout is read per connect).
    if (this.pool?.options && this.connectTimeout === undefined) {
      this.connectTimeout = this.pool.options.connectionTimeoutMillis ?? 0;
      this.pool.options.connectionTimeoutMillis = 1;
    }
  }
}

/** Whether an error says PostgreSQL could not be reached or did not answer in time (not a bad statement). */
export function isDatabaseUnavailable(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | undefined;
  if (!e || typeof e !== 'object') return false;
  const code = typeof e.code === 'string' ? e.code : '';
  const message = typeof e.message === 'string' ? e.message : '';
  // SQLSTATE class 08 (connection exception), 57P01-57P03 (shutting down, cannot connect now),
  // 57014 (statement timeout), 53300 (too many connections), 55P03 (the embedded database's one
  // session stayed busy past its wait: the same as a pool that had no connection to give).
  if (/^08...$/.test(code) || /^57P0[123]$/.test(code) || ['57014', '53300', '55P03'].includes(code)) return true;
  if (['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH'].includes(code)) return true;
  return /^(timeout exceeded when trying to connect|Connection terminated|Query read timeout|Client has encountered a connection error)/.test(
    message,
  );
}

/** The largest value noted within the last `slots` slots of `slotMs` each: a window that costs a few numbers. */
export class SlowestRecently {
  private readonly largest: Float64Array;
  private readonly slotOfEntry: Float64Array;

  constructor(
    private readonly slotMs: number,
    private readonly slots: number,
  ) {
    this.largest = new Float64Array(slots);
    this.slotOfEntry = new Float64Array(slots).fill(-Infinity);
  }

  note(value: number, now: number): void {
    const slot = Math.floor(now / this.slotMs);
    const i = slot % this.slots;
    if (this.slotOfEntry[i] !== slot) {
      this.slotOfEntry[i] = slot;
      this.largest[i] = 0;
    }
    this.largest[i] = Math.max(this.largest[i], value);
  }

  /** The largest value noted in the window ending at `now`, 0 when none was. */
  slowest(now: number): number {
    const slot = Math.floor(now / this.slotMs);
    let largest = 0;
    for (let i = 0; i < this.slots; i++) {
      if (slot - this.slotOfEntry[i] < this.slots) largest = Math.max(largest, this.largest[i]);
    }
    return largest;
  }
}

/** What became of `p` within `ms`: 'answered', the error it failed with, or 'waiting'. */
function within(p: Promise<unknown>, ms: number): Promise<'answered' | 'waiting' | Error> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p.then(
      () => 'answered' as const,
      (err: unknown) => (err instanceof Error ? err : new Error(String(err))),
    ),
    new Promise<'waiting'>((resolve) => {
      timer = setTimeout(() => resolve('waiting'), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** What operators' probes and scrapers read: answered while PostgreSQL is away too. */
const OPERATIONS = new Set(['/-/health', '/-/liveness', '/-/readiness', '/-/metrics']);

/**
 * Answers 503 with Retry-After, in GitLab's body, while DatabaseWatch knows PostgreSQL is not
 * answering: a request would only wait for its timeouts. Health and readiness still answer.
 */
export function databaseGate(watch: DatabaseWatch) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!watch.unreachable || OPERATIONS.has(req.path)) return next();
    res.setHeader('Retry-After', String(RETRY_AFTER_S));
    sendJson(res, 503, { message: '503 Service Unavailable' });
  };
}

/** What a client is told to wait before trying again while the database is away. */
export const RETRY_AFTER_S = 5;
