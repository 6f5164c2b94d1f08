import { Unavailable, type GitBudgetSettings } from '@app/platform';
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import type { Socket } from 'node:net';
import { atNiceLevel, HAS_NICE, lowerPriority, sendFileFromHelper, spawnFromHelper } from './spawn-helper';

/** The kinds of heavy git work, each with its own slots. */
export type GitWorkKind = 'archive' | 'clone' | 'push' | 'walk';
export const GIT_WORK_KINDS: readonly GitWorkKind[] = ['archive', 'clone', 'push', 'walk'];

/** How a git child is started (the budget's `spawn`, or Node's own). */
export type StartChild = (file: string, args: string[], options: SpawnOptions) => ChildProcess;

/** Seconds a refused request is told to wait (`Retry-After`). */
export const BUDGET_RETRY_AFTER_S = 5;

/** 503 with `Retry-After`: the kind's slots stayed taken for the whole wait, or too many already wait. */
export class GitBudgetExceeded extends Unavailable {
  constructor(
    readonly kind: GitWorkKind,
    readonly why: 'timeout' | 'queue_full',
  ) {
    super(
      `git work budget (${kind}): ${why === 'timeout' ? 'no slot within the wait' : 'too many waiting'}`,
      BUDGET_RETRY_AFTER_S,
    );
  }
}

/** The waiter gave up (its client went away) before it got a slot. */
export class GitBudgetAbandoned extends Error {
  constructor(readonly kind: GitWorkKind) {
    super(`git work (${kind}) abandoned while waiting for a slot`);
  }
}

interface Waiter {
  grant: () => void;
}

class Lane {
  running = 0;
  readonly waiting: Waiter[] = [];
  started = 0;
  waited = 0;
  refusedTimeout = 0;
  refusedQueueFull = 0;
  abandoned = 0;
  waitSeconds = 0;
  constructor(readonly limit: number) {}
}

/** What the metrics read, per kind. */
export interface GitWorkLaneStats {
  limit: number;
  running: number;
  waiting: number;
  /** Jobs started (each single-flight job once, however many callers share it). */
  started: number;
  /** Jobs that had to wait for a slot. */
  waited: number;
  /** Total seconds spent waiting by the jobs that got a slot. */
  waitSeconds: number;
  refusedTimeout: number;
  refusedQueueFull: number;
  /** Waiters whose client went away before they got a slot. */
  abandoned: number;
}

/**
 * The process's budget for heavy git work (cold archives, clones and fetches, pushes, compares and
 * contributors' cold walks): per kind at most `limit` run at once; the next ones wait in order up to
 * `waitMs` (at most `queue` of them), then are refused with 503 and Retry-After. Work with a key
 * (an archive's cache file) is single-flight: callers of the same key share one job, which runs to
 * its end whoever of them goes away. Git children it starts run at a lower CPU priority (`nice`), so
 * under load the kernel gives the API's process its cores first.
 */
export class GitWorkBudget {
  private readonly lanes: Record<GitWorkKind, Lane>;
  private readonly flights = new Map<string, Promise<unknown>>();

  constructor(readonly settings: GitBudgetSettings) {
    this.lanes = {
      archive: new Lane(settings.archives),
      clone: new Lane(settings.clones),
      push: new Lane(settings.pushes),
      walk: new Lane(settings.walks),
    };
  }

  /**
   * Waits for a slot of `kind` and answers its release (call it once, when the work ended).
   * Rejects with GitBudgetExceeded past the wait or when the queue is full, and with
   * GitBudgetAbandoned when `signal` aborts first.
   */
  acquire(kind: GitWorkKind, signal?: AbortSignal): Promise<() => void> {
    const lane = this.lanes[kind];
    if (signal?.aborted) return Promise.reject(new GitBudgetAbandoned(kind));
    if (lane.running < lane.limit && !lane.waiting.length) {
      lane.running++;
      lane.started++;
      return Promise.resolve(this.releaser(lane));
    }
    if (lane.waiting.length >= this.settings.queue) {
      lane.refusedQueueFull++;
      return Promise.reject(new GitBudgetExceeded(kind, 'queue_full'));
    }
    return new Promise((resolve, reject) => {
      const since = performance.now();
      const leave = () => {
        const i = lane.waiting.indexOf(waiter);
        if (i >= 0) lane.waiting.splice(i, 1);
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      const waiter: Waiter = {
        grant: () => {
          leave();
          lane.running++;
          lane.started++;
          lane.waited++;
          lane.waitSeconds += (performance.now() - since) / 1000;
          resolve(this.releaser(lane));
        },
      };
      const timer = setTimeout(() => {
        leave();
        lane.refusedTimeout++;
        reject(new GitBudgetExceeded(kind, 'timeout'));
      }, this.settings.waitMs);
      const onAbort = () => {
        leave();
        lane.abandoned++;
        reject(new GitBudgetAbandoned(kind));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      lane.waiting.push(waiter);
    });
  }

  /** Runs `job` in a slot of `kind`, released when it settles. */
  async run<T>(kind: GitWorkKind, job: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const release = await this.acquire(kind, signal);
    try {
      return await job();
    } finally {
      release();
    }
  }

  /**
   * `run`, shared by every caller of `key` while it waits or runs: twenty requests for one cold
   * archive start one `git archive`. Nobody can cancel it (a caller whose client went away stops
   * reading the answer, not the work the others wait for). The map holds only jobs that wait or
   * run, so it is bounded by the lane's slots and queue.
   */
  singleFlight<T>(kind: GitWorkKind, key: string, job: () => Promise<T>): Promise<T> {
    const flightKey = `${kind}\0${key}`;
    const existing = this.flights.get(flightKey) as Promise<T> | undefined;
    if (existing) return existing;
    const flight = this.run(kind, job).finally(() => this.flights.delete(flightKey));
    this.flights.set(flightKey, flight);
    return flight;
  }

  /**
   * Starts a heavy git child (or its compressor) at the budget's nice level: from the helper, which
   * runs at that level itself (its children inherit it); without the helper through `nice`, so the
   * level holds from the child's first instruction and its own children (pack-objects) inherit it,
   * or, without `nice` on the machine, reniced right after the start.
   */
  spawn(file: string, args: string[], options: SpawnOptions): ChildProcess {
    const level = this.settings.nice;
    // From the small helper process, not this big one (spawn-helper.ts says why).
    if (this.settings.spawnHelper) return spawnFromHelper(file, args, options, level);
    const child = spawn(...atNiceLevel(file, args, level), options);
    // The child may already be gone: it ran at our priority.
    if (level > 0 && !HAS_NICE && child.pid !== undefined) lowerPriority(child.pid, level);
    return child;
  }

  /**
   * Answers an HTTP request on `socket` with `head` and then the whole of `file`, sent by a `cat`
   * the helper starts at the budget's nice level with the connection as its output
   * (sendFileFromHelper): false, the connection untouched, where the helper is off or cannot take
   * it. `handedOver` is called when the connection is about to be the helper's.
   */
  sendFile(socket: Socket, head: string, file: string, handedOver: () => void): Promise<boolean> {
    if (!this.settings.spawnHelper) return Promise.resolve(false);
    return sendFileFromHelper(socket, head, 'cat', ['--', file], handedOver, undefined, this.settings.nice);
  }

  /** For the metrics. */
  stats(): Record<GitWorkKind, GitWorkLaneStats> {
    const out = {} as Record<GitWorkKind, GitWorkLaneStats>;
    for (const kind of GIT_WORK_KINDS) {
      const l = this.lanes[kind];
      out[kind] = {
        limit: l.limit,
        running: l.running,
        waiting: l.waiting.length,
        started: l.started,
        waited: l.waited,
        waitSeconds: l.waitSeconds,
        refusedTimeout: l.refusedTimeout,
        refusedQueueFull: l.refusedQueueFull,
        abandoned: l.abandoned,
      };
    }
    return out;
  }

  private releaser(lane: Lane): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      lane.running--;
      lane.waiting[0]?.grant();
    };
  }
}
