import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { catFilePoolChanged, trackProcess } from './process-gauges';

export interface ObjectHeader {
  sha: string;
  type: string;
  size: number;
}

interface Pending {
  /** `info` answers a header line; `contents` a header line, `size` bytes and a newline. */
  kind: 'info' | 'contents';
  resolve: (value: { header: ObjectHeader; content?: Buffer } | undefined) => void;
  reject: (err: Error) => void;
}

/** A cat-file header line `<sha> <type> <size>`; undefined for `<name> missing` / `<name> ambiguous`. */
export function parseHeader(line: string): ObjectHeader | undefined {
  const [sha, type, size] = line.split(' ');
  return size !== undefined && /^\d+$/.test(size) ? { sha, type, size: Number(size) } : undefined;
}

/**
 * One long-lived `git cat-file --batch-command` (git 2.36+) for one repository: `info` and
 * `contents` commands written to its standard input, answered in order on its standard output.
 * Spawning git for each raw blob cost about 5 ms of process start and capped small raw reads at
 * some 100 requests a second (bench PERF-8); a command to a running process costs a pipe round trip.
 * New objects pushed after it started are found: git re-reads the pack list when an object is missing.
 */
class CatFileProcess {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly pending: Pending[] = [];
  private chunks: Buffer[] = [];
  private buffered = 0;
  /** Bytes the answer being read needs before it can be parsed (content arrives in 64 KB chunks). */
  private needed = 0;
  private closed = false;
  private idle: NodeJS.Timeout | undefined;

  constructor(
    repo: string,
    private readonly onClose: () => void,
    private readonly idleMs: number,
  ) {
    // Without `--buffer`, git flushes each answer as soon as it is written.
    this.child = trackProcess(
      spawn('git', ['cat-file', '--batch-command'], {
        cwd: repo,
        stdio: ['pipe', 'pipe', 'pipe'],
        env: { ...process.env, GIT_TERMINAL_PROMPT: '0' },
      }),
    );
    catFilePoolChanged(1);
    let inPool = true;
    this.child.once('close', () => {
      if (inPool) catFilePoolChanged(-1);
      inPool = false;
    });
    this.child.stdout.on('data', (chunk: Buffer) => this.read(chunk));
    this.child.stderr.resume();
    this.child.stdin.on('error', () => this.close(new Error('git cat-file closed its input')));
    this.child.on('error', (err) => this.close(err));
    // Exiting with callers still waiting (killed, or its repository removed) fails them; a retired
    // process has answered everyone before it exits.
    this.child.on('close', () => this.close(new Error('git cat-file exited')));
    this.touch();
  }

  info(sha: string): Promise<ObjectHeader | undefined> {
    return this.send('info', sha).then((answer) => answer?.header);
  }

  contents(sha: string): Promise<{ header: ObjectHeader; content?: Buffer } | undefined> {
    return this.send('contents', sha);
  }

  /** Ends the process at once; whoever still waits hears `reason`. */
  close(reason = new Error('closed')): void {
    this.retire();
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill();
    for (const p of this.pending.splice(0)) p.reject(reason);
  }

  /**
   * Takes no more commands: git answers those already sent, then exits at the end of its input.
   * (Evicting or idling a process never fails the callers it is still answering.)
   */
  retire(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.idle);
    this.onClose();
    this.child.stdin.end();
  }

  private send(kind: Pending['kind'], sha: string): Promise<{ header: ObjectHeader; content?: Buffer } | undefined> {
    if (this.closed) return Promise.reject(new Error('git cat-file is closed'));
    this.touch();
    return new Promise((resolve, reject) => {
      this.pending.push({ kind, resolve, reject });
      this.child.stdin.write(`${kind} ${sha}\n`);
    });
  }

  /** Ends the process after a quiet spell, so idle repositories hold no process. */
  private touch(): void {
    clearTimeout(this.idle);
    this.idle = setTimeout(() => this.retire(), this.idleMs).unref();
  }

  private read(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    for (;;) {
      const next = this.pending[0];
      if (!next || !this.buffered || this.buffered < this.needed) return;
      const data = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks, this.buffered);
      this.chunks = [data];
      const nl = data.indexOf(10);
      if (nl < 0) {
        if (data.length > 512) this.close(new Error('git cat-file answered an over-long header'));
        return;
      }
      const header = parseHeader(data.subarray(0, nl).toString('latin1'));
      let used = nl + 1;
      let content: Buffer | undefined;
      if (header && next.kind === 'contents') {
        if (data.length < used + header.size + 1) {
          this.needed = used + header.size + 1; // the content is still coming
          return;
        }
        this.needed = 0;
        content = Buffer.from(data.subarray(used, used + header.size));
        used += header.size + 1;
      }
      this.chunks = used < data.length ? [data.subarray(used)] : [];
      this.buffered = data.length - used;
      this.pending.shift();
      next.resolve(header && { header, content });
    }
  }
}

/**
 * Long-lived cat-file processes, one per recently read repository (the least recently used ends
 * beyond `max`). A process that fails answers its callers with the error; the next call starts another.
 */
export class CatFilePool {
  private readonly processes = new Map<string, CatFileProcess>();

  constructor(
    private readonly max = 32,
    private readonly idleMs = 60_000,
  ) {}

  private process(repo: string): CatFileProcess {
    let p = this.processes.get(repo);
    if (p) {
      this.processes.delete(repo);
      this.processes.set(repo, p);
      return p;
    }
    const created: CatFileProcess = new CatFileProcess(
      repo,
      () => {
        if (this.processes.get(repo) === created) this.processes.delete(repo);
      },
      this.idleMs,
    );
    p = created;
    this.processes.set(repo, p);
    for (const [oldest, proc] of this.processes) {
      if (this.processes.size <= this.max) break;
      this.processes.delete(oldest);
      proc.retire();
    }
    return p;
  }

  /** The object's type and size, undefined when the repository has no such object (or the name is ambiguous). */
  info(repo: string, sha: string): Promise<ObjectHeader | undefined> {
    return this.process(repo).info(sha);
  }

  /** The object's header and bytes, held whole: for objects whose size `info` showed to be small. */
  async contents(repo: string, sha: string): Promise<{ header: ObjectHeader; content: Buffer } | undefined> {
    const answer = await this.process(repo).contents(sha);
    return answer?.content ? { header: answer.header, content: answer.content } : undefined;
  }

  closeAll(): void {
    for (const p of [...this.processes.values()]) p.close();
  }
}
