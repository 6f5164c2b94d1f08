import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { EventEmitterAsyncResource } from 'node:events';
import { existsSync, mkdtempSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { getPriority, setPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { commandStarted, trackProcess } from './process-gauges';

/*
 * Streaming git children (the smart-HTTP CGI, upload-pack and receive-pack over SSH, archives)
 * started by a small long-lived helper process instead of the server. Node starts a child with
 * fork() on the event loop's thread and waits there until the child has exec'd: measured on this
 * project's two-core machine under load (2026-11-28, load 20-30), spawn() blocked the loop for a
 * median of 30-72 ms in a 49 MB process and 210-295 ms (P90 320 ms to 2 s) in a 650 MB one, the
 * server's size after the read workloads. Every clone, fetch, push and cold archive paid that on
 * the loop every other request waits for.
 *
 * The helper listens on a unix socket. Each child is one connection: the server sends one JSON line
 * (what to run), the helper starts the child with that very socket as its standard input and output,
 * so the bytes flow between git and the server through the kernel, never through the helper. Its
 * stderr, its pid and its exit come back over the helper's IPC channel; a kill goes the same way.
 */
const HELPER_SOURCE = `
const { spawn } = require('node:child_process');
const { createServer } = require('node:net');
const { rmSync } = require('node:fs');
const { dirname } = require('node:path');
const children = new Map();
// The socket's directory is private to this user (mkdtemp's 0700): nobody else may ask for a process.
process.on('exit', () => rmSync(dirname(process.argv[1]), { recursive: true, force: true }));
process.on('disconnect', () => process.exit(0));
// It ends with its parent (the channel closes, also after a kill -9) or when told (stopSpawnHelper
// disconnects), always through 'exit' so the socket's directory goes too. A terminal's Ctrl-C or a
// supervisor's SIGTERM to the whole group is the server's to handle: transfers it lets finish
// while it drains keep their helper.
process.on('SIGINT', () => undefined);
process.on('SIGTERM', () => undefined);
process.on('message', (m, handle) => {
  if (m.kind === 'kill') children.get(m.id)?.kill(m.signal);
  else if (m.kind === 'send-file') sendFile(m, handle);
});
// A download handed over by the server (sendFileFromHelper): the client's connection, its answer's
// head already written, becomes the standard output of a (niced) cat of the file; the helper keeps
// no copy of it, so the connection closes when cat is done. A kill reaches cat as any child's.
function sendFile(m, handle) {
  let reported = false;
  const sent = () => {
    if (reported) return;
    reported = true;
    children.delete(m.id);
    process.send({ kind: 'sent', id: m.id });
  };
  if (!handle) return sent();
  try {
    const child = spawn(m.file, m.args, { stdio: ['ignore', handle, 'ignore'] });
    children.set(m.id, child);
    process.send({ kind: 'sending', id: m.id });
    child.on('error', sent);
    child.on('close', sent);
  } catch {
    sent();
  } finally {
    handle.close();
  }
}
const server = createServer({ allowHalfOpen: true, pauseOnConnect: false }, (socket) => {
  let head = Buffer.alloc(0);
  const onData = (chunk) => {
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf(10);
    if (end < 0) return;
    socket.off('data', onData);
    socket.pause();
    const m = JSON.parse(head.subarray(0, end).toString());
    let child;
    try {
      child = spawn(m.file, m.args, { cwd: m.cwd, env: m.env, stdio: [socket, socket, 'pipe'] });
    } catch (err) {
      process.send({ kind: 'error', id: m.id, message: String(err) });
      return socket.destroy();
    }
    // The child holds its own copies of the socket: the helper's must not read what is git's.
    socket.destroy();
    children.set(m.id, child);
    child.on('error', (err) => process.send({ kind: 'error', id: m.id, message: String(err) }));
    if (child.pid) process.send({ kind: 'spawned', id: m.id, pid: child.pid });
    child.stderr.on('data', (d) => process.send({ kind: 'stderr', id: m.id, data: d }));
    child.on('close', (code, signal) => {
      children.delete(m.id);
      process.send({ kind: 'exit', id: m.id, code, signal });
    });
  };
  socket.on('data', onData);
  socket.on('error', () => undefined);
});
server.listen(process.argv[1], () => process.send({ kind: 'listening' }));
`;

type Message =
  | { kind: 'listening' }
  | { kind: 'sending'; id: number }
  | { kind: 'sent'; id: number }
  | { kind: 'spawned'; id: number; pid: number }
  | { kind: 'stderr'; id: number; data: Uint8Array }
  | { kind: 'error'; id: number; message: string }
  | { kind: 'exit'; id: number; code: number | null; signal: NodeJS.Signals | null };

interface Helper {
  process: ChildProcess;
  socketPath: string;
  ready: Promise<void>;
  /** How far below this process's CPU priority the helper runs (its children inherit it). */
  nice: number;
}

const NICE = '/usr/bin/nice';
export const HAS_NICE = existsSync(NICE);

/**
 * Lowers a started process's CPU priority by `level` below this process's (as `nice -n` does:
 * setPriority takes an absolute level, at most 19): how far below it now runs, 0 when it could not
 * be lowered (the process already gone).
 */
export function lowerPriority(pid: number, level: number): number {
  try {
    const own = getPriority(0);
    const lowered = Math.min(19, own + level);
    setPriority(pid, lowered);
    return lowered - own;
  } catch {
    return 0;
  }
}

/**
 * `file args...` to run at `level` below the priority of the process that starts it: through `nice`
 * (so the level holds from the child's first instruction and its own children inherit it), where
 * there is a level to set and a `nice` on the machine.
 */
export function atNiceLevel(file: string, args: string[], level: number): [string, string[]] {
  return level > 0 && HAS_NICE ? [NICE, ['-n', String(level), file, ...args]] : [file, args];
}

/**
 * The command for the helper to start at `level`: the helper itself runs at the level it was started
 * with, so its children need no `nice` in front (an exec of /usr/bin/nice each: two per push over
 * HTTP) unless another level is asked for.
 */
function forHelper(h: Helper, file: string, args: string[], level: number): [string, string[]] {
  return atNiceLevel(file, args, level - h.nice);
}

let helper: Helper | undefined;
const running = new Map<number, HelpedChild>();
/** At most this many downloads are handed to the helper at once (a `cat` process each). */
const HANDED_OFF_LIMIT = 256;

/** Downloads handed to the helper (sendFileFromHelper) whose cat has not ended. */
const handedOff = new Map<number, HandedOff>();
interface HandedOff {
  helper: ChildProcess;
  /** The helper has the connection (its cat started). */
  taken(): void;
  /** Its cat ended, or the hand-over failed: the entry goes. */
  end(): void;
  /** Settles at `end` (a graceful stop waits for these). */
  ended: Promise<void>;
}
/** How long a handed-over connection may go without the helper saying it took it (Node drops a handle it could not receive). */
const TAKE_TIMEOUT_MS = 10_000;
let nextId = 1;

function start(level: number): Helper {
  // A directory only this user may enter (mkdtemp makes it 0700): the socket starts any process.
  const socketPath = join(mkdtempSync(join(tmpdir(), 'lode-spawn-')), 'helper.sock');
  const child = trackProcess(
    spawn(process.execPath, ['-e', HELPER_SOURCE, socketPath], {
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      serialization: 'advanced',
    }),
  );
  // Lowered while Node is still starting in it, long before it listens and starts any child: every
  // child it starts then inherits the level, as under `nice`. The helper's own few instructions per
  // child (start, relay stderr and exit) run at that level too: under load they wait with the git
  // work they serve, not ahead of the API.
  // Where it could not be lowered, its children get `nice` in front instead.
  const nice = level > 0 && child.pid !== undefined ? lowerPriority(child.pid, level) : 0;
  let listening!: () => void;
  let failed!: (err: Error) => void;
  const ready = new Promise<void>((resolve, reject) => ((listening = resolve), (failed = reject)));
  ready.catch(() => undefined);
  child.on('message', (m: Message) => {
    if (m.kind === 'listening') return listening();
    if (m.kind === 'sending') return handedOff.get(m.id)?.taken();
    if (m.kind === 'sent') return handedOff.get(m.id)?.end();
    // The helper's channel was opened inside whichever request started it first: each child's
    // messages are handled in the context of the request that spawned that child (its log lines,
    // and the events a push's exit records, carry that request's id).
    const c = running.get(m.id);
    c?.asyncResource.runInAsyncScope(() => c.receive(m));
  });
  const gone = () => {
    failed(new Error('the spawn helper exited before it listened'));
    if (helper?.process === child) helper = undefined;
    // Children it started go on (their sockets stay with the server) but their exit is not heard:
    // each is reported failed, so nothing waits for it forever.
    for (const c of [...running.values()])
      if (c.startedBy(child)) c.asyncResource.runInAsyncScope(() => c.helperGone());
    for (const sending of [...handedOff.values()]) if (sending.helper === child) sending.end();
  };
  child.on('exit', gone);
  child.on('error', gone);
  const h: Helper = { process: child, socketPath, ready, nice };
  idle(h);
  return h;
}

/** The helper keeps the process alive only while it has children running, so a CLI or a test run can end. */
function idle(h: Helper | undefined = helper): void {
  const channel = h?.process.channel as { ref(): void; unref(): void } | undefined;
  if (running.size || handedOff.size) {
    channel?.ref();
    h?.process.ref();
  } else {
    channel?.unref();
    h?.process.unref();
  }
}

/**
 * A child started by the helper, with the part of ChildProcess the git port uses: `stdin`,
 * `stdout`, `stderr`, `pid` (once `spawn` was emitted), `exitCode`, `signalCode`, `kill`, and the
 * `spawn`, `exit`, `close` and `error` events.
 */
class HelpedChild extends EventEmitterAsyncResource {
  readonly stdin = new PassThrough();
  readonly stdout = new PassThrough();
  readonly stderr = new PassThrough();
  pid: number | undefined;
  exitCode: number | null = null;
  signalCode: NodeJS.Signals | null = null;
  killed = false;
  private socket: Socket | undefined;
  private pendingKill: NodeJS.Signals | undefined;
  private exited = false;
  private outputEnded = false;
  private closed = false;

  constructor(
    private readonly id: number,
    private readonly h: Helper,
  ) {
    // Listeners run in the async context the child was spawned in, as a ChildProcess's do.
    super({ name: 'LodeHelpedChild' });
  }

  async begin(file: string, args: string[], options: SpawnOptions): Promise<void> {
    await this.h.ready;
    const socket = connect({ path: this.h.socketPath, allowHalfOpen: true });
    this.socket = socket;
    socket.on('error', (err) => this.fail(err));
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    const env = options.env ?? process.env;
    socket.write(`${JSON.stringify({ id: this.id, file, args, cwd: options.cwd, env })}\n`);
    socket.pipe(this.stdout);
    const ended = () => {
      this.outputEnded = true;
      this.settle();
    };
    socket.on('end', ended);
    socket.on('close', ended);
  }

  receive(m: Message): void {
    if (m.kind === 'spawned') {
      this.pid = m.pid;
      if (this.pendingKill) this.send({ kind: 'kill', id: this.id, signal: this.pendingKill });
      // git reads its input only now: nothing meant for it reaches the helper.
      if (this.socket) this.stdin.pipe(this.socket);
      this.emit('spawn');
    } else if (m.kind === 'stderr') this.stderr.write(Buffer.from(m.data));
    else if (m.kind === 'error') this.fail(new Error(m.message));
    else if (m.kind === 'exit') this.exit(m.code, m.signal);
  }

  kill(signal: NodeJS.Signals = 'SIGTERM'): boolean {
    if (this.exited) return false;
    this.killed = true;
    if (this.pid === undefined) this.pendingKill = signal;
    else this.send({ kind: 'kill', id: this.id, signal });
    return true;
  }

  startedBy(helperProcess: ChildProcess): boolean {
    return this.h.process === helperProcess;
  }

  /** The helper died: its child's exit will not be heard, so the child is cut off (its socket closed) and reported killed. */
  helperGone(): void {
    if (this.exited) return;
    this.socket?.destroy();
    this.outputEnded = true;
    this.exit(null, 'SIGKILL');
  }

  fail(err: Error): void {
    if (this.exited) return;
    this.emit('error', err);
    this.socket?.destroy();
    this.exit(null, null, true);
  }

  private send(m: { kind: 'kill'; id: number; signal: NodeJS.Signals }): void {
    if (this.h.process.connected) this.h.process.send(m);
  }

  private exit(code: number | null, signal: NodeJS.Signals | null, failed = false): void {
    if (this.exited) return;
    this.exited = true;
    this.exitCode = code;
    this.signalCode = signal;
    running.delete(this.id);
    idle(this.h);
    this.stderr.end();
    if (!failed) this.emit('exit', code, signal);
    if (failed || !this.socket) this.outputEnded = true;
    this.settle();
  }

  /** `close` once the child exited and its output was read to the end, as ChildProcess does. */
  private settle(): void {
    if (!this.exited || !this.outputEnded || this.closed) return;
    this.closed = true;
    this.socket?.destroy();
    if (!this.stdout.writableEnded) this.stdout.end();
    this.emit('close', this.exitCode, this.signalCode);
  }
}

/**
 * Starts `file` with `args` from the spawn helper (started on first use, and again when it died),
 * with piped standard input, output and error, `nice` levels below this process's CPU priority;
 * answers at once, like `spawn`.
 */
export function spawnFromHelper(file: string, args: string[], options: SpawnOptions, nice = 0): ChildProcess {
  helper ??= start(nice);
  const id = nextId++;
  const child = new HelpedChild(id, helper);
  running.set(id, child);
  idle();
  child.begin(...forHelper(helper, file, args, nice), options).catch((err: unknown) => child.fail(err as Error));
  return child as unknown as ChildProcess;
}

/** Ends the helper (at shutdown); later calls start another. */
export function stopSpawnHelper(): void {
  if (helper?.process.connected) helper.process.disconnect();
  helper = undefined;
}

/** A socket's libuv handle: what Node's IPC passes to another process as a descriptor. */
type WithHandle = Socket & { _handle?: object | null };

/**
 * Answers an HTTP request with a whole file from outside this process: writes the answer's `head`
 * (status line and headers, the connection to close after the body) on the client's `socket`, then
 * passes the connection to the helper, which starts `file args...` (a niced `cat` of the file) with
 * the connection as its standard output, and closes this process's copy. The body's bytes then go
 * from the page cache to the client without passing this process's event loop: twenty downloads of
 * a 100 MB archive were the server's loop writing 2 GB to sockets (on loopback the kernel's cost of
 * sending, and most of receiving, is the sender's), and every other request waited behind them
 * (bench PERF-10). GitLab does the same with Workhorse's `send-archive`.
 *
 * Answers false, the connection untouched, when the helper cannot take it (the caller answers
 * itself); true once the connection left this process. `handedOver` is called just before this
 * process lets the connection go. Once the head is written the connection is the helper's or
 * closed: a failure past that point is a short body. The client must send nothing more (the caller
 * checks the request was read whole and is the connection's last): bytes left unread when cat
 * closes the connection would make the close a reset. At most `limit` downloads are out at once.
 */
export async function sendFileFromHelper(
  socket: Socket,
  head: string,
  file: string,
  args: string[],
  handedOver: () => void,
  limit = HANDED_OFF_LIMIT,
  /** Levels below this process's CPU priority the process runs at. */
  nice = 0,
): Promise<boolean> {
  // Each is a process until its client has read it all, which a client that stops reading never
  // does: past the limit the caller answers itself, as it does with the helper off. The slot is
  // taken here, before any wait, so downloads arriving together cannot all pass the count.
  if (handedOff.size + reserved >= limit) return false;
  reserved++;
  let released = false;
  const release = () => {
    if (!released) reserved--;
    released = true;
  };
  try {
    return await handOver(socket, head, file, args, handedOver, release, nice);
  } finally {
    release();
  }
}

/** Downloads between sendFileFromHelper's count and their entry in `handedOff`. */
let reserved = 0;

async function handOver(
  socket: Socket,
  head: string,
  file: string,
  args: string[],
  handedOver: () => void,
  /** Called once the download is in `handedOff`, which then counts it. */
  counted: () => void,
  nice: number,
): Promise<boolean> {
  helper ??= start(nice);
  const h = helper;
  [file, args] = forHelper(h, file, args, nice);
  if (
    !(await h.ready.then(
      () => true,
      () => false,
    ))
  )
    return false;
  const handle = (socket as WithHandle)._handle;
  // A plain TCP or unix socket only (a TLS socket's bytes are not the client's).
  if (!handle || (socket as Socket & { encrypted?: boolean }).encrypted || !h.process.connected || !socket.writable)
    return false;
  // The request is read: nothing more of the client's is for this process.
  socket.pause();
  const written = await new Promise<boolean>((resolve) => socket.write(head, 'latin1', (err) => resolve(!err)));
  const id = nextId++;
  const finished = commandStarted();
  let passed!: (ok: boolean) => void;
  const passing = new Promise<boolean>((resolve) => (passed = resolve));
  let watchdog: NodeJS.Timeout | undefined;
  let settle!: () => void;
  const entry: HandedOff = {
    helper: h.process,
    taken: () => clearTimeout(watchdog),
    end: () => {
      if (handedOff.get(id) !== entry) return;
      clearTimeout(watchdog);
      handedOff.delete(id);
      idle(h);
      finished();
      // Before the send completed (the helper died with the connection in its queue): closed below.
      passed(false);
      settle();
    },
    ended: new Promise<void>((resolve) => (settle = resolve)),
  };
  handedOff.set(id, entry);
  counted();
  idle(h);
  if (written) {
    try {
      // A raw handle, not the Socket: Node passes a net.Server's Socket as a cluster worker's
      // connection, counted out of the server (server.close() would then stop waiting for the
      // requests still in flight). This one stays the server's to close, below.
      h.process.send({ kind: 'send-file', id, file, args }, handle as never, (err) => passed(!err));
    } catch {
      passed(false);
    }
  }
  if (written && (await passing)) {
    handedOver();
    // Node drops a handle the helper could not receive (NODE_HANDLE_NACK) without a word to either side.
    watchdog = setTimeout(entry.end, TAKE_TIMEOUT_MS).unref();
  } else entry.end();
  // The descriptor is in the helper's hands (or in flight to it): this process's copy closes
  // without ending the connection, which closes when cat's copy does.
  socket.destroy();
  return true;
}

/**
 * Waits up to `ms` for the downloads handed to the helper to end (a graceful stop's window, as the
 * HTTP server's own connections get), then ends those still running.
 */
export async function drainHandedOff(ms: number): Promise<void> {
  if (!handedOff.size) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.all([...handedOff.values()].map((d) => d.ended)),
    new Promise((resolve) => (timer = setTimeout(resolve, ms))),
  ]);
  clearTimeout(timer);
  for (const [id, { helper: child }] of handedOff)
    if (child.connected) child.send({ kind: 'kill', id, signal: 'SIGTERM' });
}
