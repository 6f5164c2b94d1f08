import {
  Inject,
  Injectable,
  Logger,
  Optional,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { LodeConfig } from '../config/lode-config';
import { sendJson } from '../http/json-response';
import { Invalidations } from '../outbox/invalidations';

/** How often the database is asked `select 1`, and how long an answer may take. */
const PROBE_EVERY_MS = 500;
const PROBE_TIMEOUT_MS = 1500;
/** How late the probe's timeout may fire before the silence counts as this process's own stall. */
const STALL_MS = 250;
/** How long a probe that timed out may still be answered: long enough to read an answer already in the socket. */
const UNREAD_ANSWER_GRACE_MS = 100;

/** The part of a pooled `pg` client the watch uses: its socket. */
interface PooledClient {
  connection?: { stream?: { destroy(err?: Error): void } };
}
interface Pool {
  on(event: 'connect' | 'remove', fn: (client: PooledClient) => void): unknown;
  /** pg-pool's options, read at each connection it opens. */
  options?: { connectionTimeoutMillis?: number };
  /** pg-pool's own list of its clients (not public API, hence optional). */
  _clients?: PooledClient[];
}

/**
 * Whether this process's DatabaseWatch probes at all: only where HTTP requests or workers run. A
 * command line (`lode projections rebuild`, `lode check`) has no request to answer 503 and nothing to
 * cut short: its statements wait for their own timeouts. And a long command keeps its event loop busy
 * (a rebuild replays pages of events with little I/O between them), which the probe would take for
 * a silent database and cut the command's own connection, failing a rebuild of a million events
 * after minutes of work (seen in the PERF-14 benchmark on a loaded machine).
 */
export const DATABASE_WATCH_ACTIVE = Symbol('DATABASE_WATCH_ACTIVE');

/**
 * Knows, within two seconds, that PostgreSQL stopped answering: its own connection asks `select 1`
 * every half second. When an answer is missing, requests are answered 503 at once (see
 * `databaseGate`) instead of waiting for a connection or a statement timeout, and the pool's
 * connections are cut, so requests that were waiting on them fail now (a silent network never
 * tells the client its connection is dead). The first answer afterwards opens the gate again: no
 * restart is needed.
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

  constructor(
    private readonly dataSource: DataSource,
    private readonly config: LodeConfig,
    private readonly invalidations: Invalidations,
    @Optional() @Inject(DATABASE_WATCH_ACTIVE) private readonly active: boolean = true,
  ) {}

  /** Why PostgreSQL counts as unreachable right now, or undefined while it answers. */
  get unreachable(): string | undefined {
    return this.down;
  }

  onApplicationBootstrap(): void {
    // The embedded database runs in this process and cannot drop off a network; its one session is
    // held by each transaction in turn, so a probe waiting behind a long one would be a false alarm.
    if (this.config.embeddedDatabase || !this.active) return;
    const pool = (this.dataSource.driver as unknown as { master?: Pool }).master;
    this.pool = pool;
    // The connections opened before now (TypeORM's own at start) are only in pg-pool's list.
    for (const c of pool?._clients ?? []) this.clients.add(c);
    pool?.on('connect', (c) => this.clients.add(c));
    pool?.on('remove', (c) => this.clients.delete(c));
    this.schedule();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.dropProbe();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.check().finally(() => this.schedule()), PROBE_EVERY_MS);
    this.timer.unref();
  }

  private async check(): Promise<void> {
    const started = performance.now();
    const asking = this.ask();
    try {
      await withTimeout(asking, PROBE_TIMEOUT_MS);
      this.answered();
    } catch (err) {
      // A process that stalled (a long garbage collection, a burst of synchronous work) fires the
      // timeout late, when PostgreSQL's answer may already wait unread in the socket: the silence was
      // this process's, not the database's. Such a probe gets the time it missed before it counts.
      // A stall that ended just past the deadline fires the timeout first too (timers run before the
      // poll that would read the answer), so every probe gets a moment to be read before it counts.
      const overdue = performance.now() - started - PROBE_TIMEOUT_MS;
      if (await settles(asking, overdue > STALL_MS ? PROBE_TIMEOUT_MS : UNREAD_ANSWER_GRACE_MS)) return this.answered();
      await this.dropProbe();
      if (this.stopped) return;
      const reason = `PostgreSQL did not answer: ${(err as Error).message}`;
      if (!this.down) {
        this.logger.warn(`${reason}; answering 503 until it does, cutting ${this.clients.size} pooled connection(s)`);
        this.cutPool();
      }
      this.down = reason;
    }
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
      // No connect timeout of pg's own: `check` gives up on the connecting as on the query, with its
      // allowance for a stall of this process (pg's timer would fire first after a stall and reject
      // the probe; seen as "timeout expired" verdicts on a busy machine), and a probe given up on is
      // dropped by closing its socket.
      const probe = new Client({
        connectionString: this.config.databaseUrl,
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

/** Whether `p` resolves within `ms`. */
function settles(p: Promise<unknown>, ms: number): Promise<boolean> {
  return withTimeout(p, ms).then(
    () => true,
    () => false,
  );
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let t: NodeJS.Timeout;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      t = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(t));
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
