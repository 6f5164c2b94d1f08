import { PGlite } from '@electric-sql/pglite';
import { mkdir, rm } from 'node:fs/promises';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';

/** PostgreSQL's wire protocol: the codes of the packets that come before a startup message. */
const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;
const PROTOCOL_3 = 196608;

/** The longest a connection waits for the session before its statement fails (55P03, lock_not_available). */
export const SESSION_WAIT_MS = 30_000;

/** A Unix socket's path is limited to 107 bytes on Linux. */
const MAX_SOCKET_PATH = 107;

/**
 * PGlite (PostgreSQL compiled to WebAssembly, one session) served to this process and to the command
 * line over a Unix socket in PostgreSQL's own wire protocol, so `pg`, TypeORM, the event store and
 * BullMQ's PostgreSQL backend use their ordinary driver (docs/architecture.md, Embedded mode).
 *
 * PGlite has ONE session, and a pool opens many connections. `@electric-sql/pglite-socket` queues
 * single messages, which lets another connection's Parse land between a connection's Parse and its
 * Sync and its COMMIT commit someone else's writes. Here a connection holds the session from its first
 * message until PostgreSQL says the session is idle again (ReadyForQuery with status `I`): a whole
 * extended-protocol exchange and a whole transaction run alone, so transactions are as isolated as
 * on a server, only serialized. What a connection set in its startup packet that BullMQ relies on
 * (`-c search_path=...`) is applied to the session whenever the session passes to that connection.
 *
 * NOTIFY reaches every connection (the session has them all as listeners); clients ignore channels
 * they did not ask for. A connection that closes inside a transaction has it rolled back.
 */
export class EmbeddedPostgres {
  private readonly connections = new Set<EmbeddedConnection>();
  private holder?: EmbeddedConnection;
  private readonly waiting: EmbeddedConnection[] = [];
  /** The search_path the session has now; undefined: the server's default. */
  private sessionSearchPath?: string;

  private constructor(
    readonly db: PGlite,
    private readonly server: Server,
    /** The directory holding the socket (`.s.PGSQL.5432`), as `pg` takes it for `host`. */
    readonly socketDir: string,
  ) {}

  /** The connection string of a server whose socket is in `socketDir`. */
  static urlFor(socketDir: string): string {
    return `postgres://postgres@localhost/postgres?host=${encodeURIComponent(socketDir)}`;
  }

  get url(): string {
    return EmbeddedPostgres.urlFor(this.socketDir);
  }

  /** Whether a server already answers on the socket in `socketDir` (another Lode process serves the data). */
  static async answers(socketDir: string): Promise<boolean> {
    return new Promise((resolve) => {
      const socket = createConnection(socketPath(socketDir));
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
  }

  /**
   * Listens on the socket first (the socket is the lock: a second process finds it answering and
   * uses it), then opens the data directory, creating it on the first start.
   */
  static async start(dataDir: string, socketDir: string): Promise<EmbeddedPostgres> {
    const path = socketPath(socketDir);
    if (Buffer.byteLength(path) > MAX_SOCKET_PATH)
      throw new Error(`the embedded database's socket path is too long (${path}): choose a shorter LODE_DATA_DIR`);
    await mkdir(socketDir, { recursive: true, mode: 0o700 });
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    if (await EmbeddedPostgres.answers(socketDir))
      throw new Error(`another process already serves the embedded database at ${socketDir}`);
    await rm(path, { force: true }); // left by a process that did not stop cleanly
    let instance: EmbeddedPostgres | undefined;
    const server = createServer((socket) => (instance ? instance.accept(socket) : socket.destroy()));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, () => {
        server.off('error', reject);
        resolve();
      });
    });
    try {
      const db = await PGlite.create(dataDir);
      instance = new EmbeddedPostgres(db, server, socketDir);
      return instance;
    } catch (err) {
      server.close();
      throw err;
    }
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      for (const c of this.connections) c.socket.destroy();
    });
    // Let the closing connections roll back what they left open before the data is closed.
    while (this.holder) await new Promise((r) => setTimeout(r, 10));
    await this.db.close();
  }

  private accept(socket: Socket): void {
    const connection = new EmbeddedConnection(this, socket);
    this.connections.add(connection);
    socket.on('close', () => {
      this.connections.delete(connection);
      void this.closed(connection);
    });
  }

  /** Waits until `c` holds the session; rejects after SESSION_WAIT_MS. */
  acquire(c: EmbeddedConnection): Promise<void> {
    if (this.holder === c) return Promise.resolve();
    if (!this.holder) {
      this.holder = c;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        const i = this.waiting.indexOf(c);
        if (i >= 0) this.waiting.splice(i, 1);
        c.wake = undefined;
        reject(new Error(`the embedded database was busy for ${SESSION_WAIT_MS / 1000} s`));
      }, SESSION_WAIT_MS);
      c.wake = () => {
        clearTimeout(timer);
        resolve();
      };
      this.waiting.push(c);
    });
  }

  release(c: EmbeddedConnection): void {
    if (this.holder !== c) return;
    this.holder = undefined;
    const next = this.waiting.shift();
    if (next) {
      this.holder = next;
      const wake = next.wake;
      next.wake = undefined;
      wake?.();
    }
  }

  /** Runs one protocol message for the holder, with the holder's search_path on the session. */
  async run(c: EmbeddedConnection, message: Uint8Array, startup = false): Promise<Uint8Array> {
    if (startup) {
      // A startup packet may reset the session's settings: the next connection sets its search_path again.
      this.sessionSearchPath = UNKNOWN;
      return this.db.execProtocolRaw(message);
    }
    if (this.sessionSearchPath !== c.searchPath) {
      await this.db.exec(`SET search_path TO ${c.searchPath ?? 'DEFAULT'}`);
      this.sessionSearchPath = c.searchPath;
    }
    return this.db.execProtocolRaw(message);
  }

  /** Whether PostgreSQL's session is inside a transaction (for a connection that went away). */
  inTransaction(): boolean {
    return this.db.isInTransaction();
  }

  /** Sends a notification to every connection: the one session listens for all of them. */
  broadcast(message: Buffer): void {
    for (const c of this.connections) if (c.socket.writable) c.socket.write(message);
  }

  private async closed(c: EmbeddedConnection): Promise<void> {
    const i = this.waiting.indexOf(c);
    if (i >= 0) this.waiting.splice(i, 1);
    await c.idle();
    if (this.holder !== c) return;
    try {
      // An unfinished extended-protocol exchange is ended by a Sync; an open transaction is rolled back.
      if (c.midExchange) await this.db.execProtocolRaw(SYNC);
      if (this.db.isInTransaction()) await this.db.exec('ROLLBACK');
    } catch {
      // the session is reset by the next startup packet anyway
    } finally {
      this.release(c);
    }
  }
}

const UNKNOWN = '\0unknown';
const SYNC = new Uint8Array([0x53, 0, 0, 0, 4]);

function socketPath(dir: string): string {
  return join(dir, '.s.PGSQL.5432');
}

/** One client connection: reads whole protocol messages and runs them in order while holding the session. */
class EmbeddedConnection {
  private buffer: Buffer = Buffer.alloc(0);
  private started = false;
  private running?: Promise<void>;
  /** Set while waiting in the session's queue. */
  wake?: () => void;
  /** The `search_path` this connection asked for in its startup packet. */
  searchPath?: string;
  /** A Parse/Bind/Execute sequence sent without its Sync yet. */
  midExchange = false;
  /** The rest of an exchange that failed for want of the session: skipped up to its Sync. */
  private skipping = false;

  constructor(
    private readonly server: EmbeddedPostgres,
    readonly socket: Socket,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => {
      this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
      this.running ??= this.drain().finally(() => (this.running = undefined));
    });
    socket.on('error', () => undefined);
  }

  /** Resolves when nothing of this connection's runs any more. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private async drain(): Promise<void> {
    for (;;) {
      const message = this.next();
      if (!message) return;
      if (!this.socket.writable && !this.started) return;
      await this.handle(message);
    }
  }

  /** The next whole message in the buffer, if any. */
  private next(): Buffer | undefined {
    const b = this.buffer;
    if (!this.started) {
      if (b.length < 8) return undefined;
      const length = b.readInt32BE(0);
      if (b.length < length) return undefined;
      this.buffer = b.subarray(length);
      return b.subarray(0, length);
    }
    if (b.length < 5) return undefined;
    const length = 1 + b.readInt32BE(1);
    if (b.length < length) return undefined;
    this.buffer = b.subarray(length);
    return b.subarray(0, length);
  }

  private async handle(message: Buffer): Promise<void> {
    if (!this.started) {
      const code = message.readInt32BE(4);
      if (code === SSL_REQUEST || code === GSSENC_REQUEST) return void this.socket.write('N');
      if (code === CANCEL_REQUEST) return void this.socket.destroy(); // cancellation is not supported
      if (code !== PROTOCOL_3) return void this.socket.destroy();
      this.searchPath = searchPathOption(startupParameters(message));
      this.started = true;
      return this.exchange(message, true);
    }
    const type = message[0];
    if (type === 0x58) return void this.socket.end(); // Terminate
    if (this.skipping) {
      if (type === 0x53) {
        this.skipping = false;
        this.socket.write(READY_IDLE);
      }
      return;
    }
    return this.exchange(message);
  }

  private async exchange(message: Buffer, startup = false): Promise<void> {
    try {
      await this.server.acquire(this);
    } catch (err) {
      this.socket.write(errorResponse('55P03', (err as Error).message));
      // A simple query ends here; an extended-protocol exchange is skipped up to its Sync, as PostgreSQL does after an error.
      if (message[0] === 0x51) this.socket.write(READY_IDLE);
      else if (message[0] !== 0x53) this.skipping = true;
      else this.socket.write(READY_IDLE);
      return;
    }
    const type = message[0];
    let reply: Uint8Array;
    try {
      reply = await this.server.run(this, message, startup);
    } catch (err) {
      this.server.release(this);
      this.socket.destroy(err as Error);
      return;
    }
    const { status, notifications, rest } = scan(reply);
    if (rest.length && this.socket.writable) this.socket.write(rest);
    for (const n of notifications) this.server.broadcast(n);
    if (status === undefined) {
      // No ReadyForQuery yet: the exchange goes on (Parse, Bind, Describe, Execute before their Sync).
      this.midExchange = type !== 0x53 && type !== 0x51;
      return;
    }
    this.midExchange = false;
    if (status === 'I' && this.buffer.length === 0) this.server.release(this);
  }
}

const READY_IDLE = Buffer.from([0x5a, 0, 0, 0, 5, 0x49]);

/**
 * Splits PostgreSQL's reply: NotificationResponse messages (sent to every connection), the rest, and
 * the status of its last ReadyForQuery.
 */
function scan(reply: Uint8Array): { status?: string; notifications: Buffer[]; rest: Buffer } {
  const b = Buffer.from(reply.buffer, reply.byteOffset, reply.byteLength);
  let status: string | undefined;
  const notifications: Buffer[] = [];
  const kept: Buffer[] = [];
  let keptFrom = 0;
  let at = 0;
  while (at + 5 <= b.length) {
    const type = b[at];
    const end = at + 1 + b.readInt32BE(at + 1);
    if (type === 0x5a) status = String.fromCharCode(b[end - 1]);
    if (type === 0x41) {
      kept.push(b.subarray(keptFrom, at));
      notifications.push(Buffer.from(b.subarray(at, end)));
      keptFrom = end;
    }
    at = end;
  }
  if (!notifications.length) return { status, notifications, rest: Buffer.from(b) };
  kept.push(b.subarray(keptFrom));
  return { status, notifications, rest: Buffer.concat(kept) };
}

function startupParameters(message: Buffer): Map<string, string> {
  const params = new Map<string, string>();
  const parts = message.subarray(8).toString('utf8').split('\0');
  for (let i = 0; i + 1 < parts.length && parts[i]; i += 2) params.set(parts[i], parts[i + 1]);
  return params;
}

/** `-c search_path=x` (or `--search_path=x`) in the startup packet's `options`, as BullMQ sends it. */
function searchPathOption(params: Map<string, string>): string | undefined {
  const options = params.get('options') ?? '';
  const match = /(?:-c\s*|--)search_path=("[^"]*"|\S+)/.exec(options);
  return match?.[1];
}

function errorResponse(code: string, message: string): Buffer {
  const fields = Buffer.concat([Buffer.from(`SERROR\0VERROR\0C${code}\0M${message}\0`, 'utf8'), Buffer.from([0])]);
  const header = Buffer.alloc(5);
  header[0] = 0x45;
  header.writeInt32BE(4 + fields.length, 1);
  return Buffer.concat([header, fields]);
}
