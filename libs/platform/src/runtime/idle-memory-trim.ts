import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { LodeConfig } from '../config/lode-config';
import { Metrics } from '../metrics/metrics';
import { mallocTrimAddon, mallocTrimMissing, type MallocTrimAddon } from './malloc-trim';
import { collector } from './streamed-memory';

/** How often the event loop's use is looked at. */
const TICK_MS = 2_000;
/** A tick whose loop was busy less than this share of the time counts as idle (40 ms in 2 s). */
const IDLE_UTILIZATION = 0.02;
/**
 * A tick whose loop was busy less than this share carries light traffic: requests go on, far from
 * what the process can serve. Measured on two slow cores (bench/RESULTS.md, twenty-first session):
 * 20 commit pages a second kept the loop 8 % busy, 50 event pages a second 25-35 %, a steady write
 * load at its limit 50-55 % and a saturated one 90-100 %.
 */
const LIGHT_UTILIZATION = 0.5;
/** Light ticks in a row that end a burst while traffic goes on: six seconds of it. */
const LIGHT_TICKS_TO_END = 3;
/** Idle ticks in a row that end a burst: some four seconds of quiet. */
const IDLE_TICKS_TO_END = 2;
/**
 * The loop's busy time since the last trim that makes another worth it: a burst of work, not the
 * odd request or timer. Measured (bench/RESULTS.md, ninth session): a trim after a benchmark's load
 * takes some 100-300 ms on two cores, so it is kept for after real work.
 */
const BUSY_BEFORE_TRIM_MS = 5_000;
/**
 * A trim runs only when the process holds more than this. It costs the next burst: the pages given
 * back are faulted in again and the heap regrown through extra collections, so the first second of
 * load after one answered up to 300 ms where it answered 100 ms without (bench/RESULTS.md, twelfth
 * session: GET /projects/:id at 500 req/s, 157 of its first 500 answers over 50 ms). Below this the
 * memory given back is worth less than that; above it (a server's high-water mark after its heaviest
 * workloads, 340 MB and more) it is what keeps the process near its resting size.
 */
export const TRIM_ABOVE_BYTES = 256 * 1024 * 1024;
/**
 * Under light traffic the memory-reducing collection's pause lands on requests (500 ms measured on two
 * slow cores, bench/RESULTS.md twenty-first session), and the traffic grows the heap back: from 204 to
 * 268 MB in 40 s and to 288 MB in two minutes after one. So it runs only when the process holds this
 * much more than TRIM_ABOVE_BYTES (320 MB: what a heavy burst leaves, not what light traffic grows
 * to), and this much more than its last memory-reducing collection left: a process kept large by its
 * traffic is not paused again and again for nothing.
 */
export const UNDER_TRAFFIC_MARGIN_BYTES = 64 * 1024 * 1024;

/**
 * How a burst of work ended, which decides a trim: into `idle` loop (nobody waits for the pause), or
 * into `light-traffic` (requests go on and wait out the pause, so only a large excess is worth one).
 */
export type BurstEndKind = 'idle' | 'light-traffic';

/**
 * Decides, tick by tick, when a burst of work has ended and a memory-reducing collection is worth its
 * pause. Kept apart from the timer and V8 so the rule is tested as it is:
 *
 * - Enough busy time since the last trim, then two idle ticks in a row, and the process holds more
 *   than TRIM_ABOVE_BYTES: `idle`. Two, not one: a burst that follows the last within a few seconds
 *   (100 project creations a second) would otherwise queue behind the pause and answer in seconds.
 * - A burst (enough busy time in ticks at least half busy), then six seconds of light traffic, and
 *   the process holds UNDER_TRAFFIC_MARGIN_BYTES more than both TRIM_ABOVE_BYTES and what the last
 *   trim left: `light-traffic`. Without it a server that never idles, polled by CI and health
 *   checks, stayed at its last burst's high-water mark (340 MB after a benchmark's light workloads,
 *   249 MB once idle). Light traffic alone is no burst: however long it lasts, it never pauses the
 *   process.
 *
 * Only the memory-reducing collection is run: an ordinary full one gives no memory back (V8 keeps the
 * pages it empties in a pool that only the memory-reducing collection releases; in the server it gave
 * back 0-3 MB every time, bench/RESULTS.md twenty-first session). A burst stays counted until a trim
 * runs or the process idles under TRIM_ABOVE_BYTES: an idle tick, or a light tail under the line,
 * between a burst and the traffic after it does not forget the burst (in a full benchmark run an
 * ordinary collection on one idle tick between two workloads did, and the light traffic after them
 * left the process at 327 MB).
 */
export class BurstEnd {
  /** The loop's busy time since the last trim, in ticks that were not idle. */
  private busyMs = 0;
  /** The loop's busy time since the last trim in ticks at least half busy: a burst's. */
  private burstMs = 0;
  /** Idle ticks in a row, up to now. */
  private idleTicks = 0;
  /** Light ticks in a row (less than half busy, not idle), up to now. */
  private lightTicks = 0;
  /** What the last memory-reducing collection left, in resident bytes. */
  private reducedTo = 0;

  /**
   * Counts one tick's loop use; answers how a burst ended when a memory-reducing collection should
   * run now, undefined otherwise. Counting starts anew once one is answered, and when the process
   * idles under TRIM_ABOVE_BYTES after a burst (that burst left nothing worth a trim).
   */
  tick(use: Pick<EventLoopUtilization, 'active' | 'utilization'>, residentBytes: number): BurstEndKind | undefined {
    const idle = use.utilization < IDLE_UTILIZATION;
    const light = !idle && use.utilization < LIGHT_UTILIZATION;
    // An idle tick's few milliseconds (timers, the odd health check) are no work: counted, a long
    // quiet spell alone would add up to a "burst" and pause an idle process every few minutes.
    if (!idle) this.busyMs += use.active;
    if (!idle && !light) this.burstMs += use.active;
    this.idleTicks = idle ? this.idleTicks + 1 : 0;
    this.lightTicks = light ? this.lightTicks + 1 : 0;
    if (this.idleTicks >= IDLE_TICKS_TO_END) {
      if (this.busyMs < BUSY_BEFORE_TRIM_MS) return undefined;
      this.counted();
      return residentBytes > TRIM_ABOVE_BYTES ? 'idle' : undefined;
    }
    if (this.lightTicks < LIGHT_TICKS_TO_END || this.burstMs < BUSY_BEFORE_TRIM_MS) return undefined;
    if (residentBytes <= Math.max(TRIM_ABOVE_BYTES, this.reducedTo) + UNDER_TRAFFIC_MARGIN_BYTES) return undefined;
    this.counted();
    return 'light-traffic';
  }

  /** What a memory-reducing collection left, in resident bytes, read right after it. */
  reduced(residentBytes: number): void {
    this.reducedTo = residentBytes;
  }

  /** A burst's end was judged: the next one counts from here. */
  private counted(): void {
    this.busyMs = 0;
    this.burstMs = 0;
  }
}

/**
 * Hands V8's spare heap back to the system once a burst of work is over. Under load V8 grows its
 * heap well past what stays alive, and after its collections it keeps the emptied pages in a pool
 * for reuse: resident memory that only a memory-reducing collection gives back, and V8's own memory
 * reducer did not run in 30 idle seconds. Measured on a synthetic load (Node 24): 267 MB anonymous
 * after it, 248 MB after an ordinary full collection (the heap itself down to 6 MB), 80 MB after a
 * memory-reducing one.
 *
 * So it runs V8's memory-reducing collection (Node's `last-resort` flavor: up to seven collections,
 * compacting everything, so that V8 hands its pooled pages back) once a burst of work is over. Its
 * pause grows with the heap (100-500 ms after light workloads, 1,119 ms once in a full benchmark run,
 * bench/RESULTS.md fourteenth session), and a request arriving meanwhile waits all of it: run on the
 * first idle tick, a burst that followed the last within two seconds (100 project creations a second)
 * queued behind it and answered in seconds. So it waits for two idle ticks in a row. A process that
 * never idles (light traffic goes on: CI polling, health checks, a steady trickle of reads) gets it
 * once six seconds of light loop show the burst is over, and only when it holds enough more to be
 * worth a pause that requests meet (BurstEnd). Right after the collection, glibc's malloc_trim
 * (native/malloc-trim) gives back the free pages the collected objects' native memory left in
 * malloc's arenas. The collector is Node's `--expose-gc` function, fetched
 * without the command-line flag.
 *
 * A memory-reducing collection also shrinks V8's young generation to its minimum (1 MB a semi-space
 * by default). The next burst then scavenged every few milliseconds and promoted its requests'
 * short-lived objects (measured, bench/RESULTS.md twelfth session: 100 project creations a second
 * answered up to 800 ms for their first seconds after a trim); `npm start` sets
 * `--min-semi-space-size` to the maximum so the young generation keeps its size.
 */
@Injectable()
export class IdleMemoryTrim implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Memory');
  private timer?: NodeJS.Timeout;
  private last?: EventLoopUtilization;
  private readonly burst = new BurstEnd();
  /** glibc's malloc_trim, when the addon is built (undefined: the process keeps glibc's free pages). */
  private addon?: MallocTrimAddon;

  constructor(
    private readonly config: LodeConfig,
    private readonly metrics: Metrics,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.idleMemoryTrim) return;
    this.addon = mallocTrimAddon();
    if (!this.addon && process.platform === 'linux')
      this.logger.warn(`${mallocTrimMissing()}: glibc's free pages stay resident after a burst of work`);
    this.last = performance.eventLoopUtilization();
    this.timer = setInterval(() => this.tick(), TICK_MS);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  private tick(): void {
    const now = performance.eventLoopUtilization();
    const use = performance.eventLoopUtilization(now, this.last);
    this.last = now;
    const after = this.burst.tick(use, process.memoryUsage.rss());
    if (after === undefined) return;
    const left = this.trim(after);
    if (left !== undefined) this.burst.reduced(left.residentBytes);
  }

  /**
   * One memory-reducing collection, counted under how the burst before it ended; answers the resident
   * bytes it gave back and what the process holds after it (undefined when it could not run).
   */
  trim(after: BurstEndKind): { freedBytes: number; residentBytes: number } | undefined {
    const before = process.memoryUsage.rss();
    const started = performance.now();
    try {
      collector()({ type: 'major', execution: 'sync', flavor: 'last-resort' });
      // The collection has freed the native memory of what it collected (Buffers, libgit2's and
      // OpenSSL's objects) into glibc's arenas, where it stays resident as free holes; malloc_trim
      // hands their whole pages back (241 to 74 MB for 170 MB of freed 64 KB Buffers, 21-34 ms).
      this.addon?.mallocTrim();
    } catch (err) {
      // Never fatal: the process keeps its memory, as without this.
      this.logger.warn(`could not collect: ${String(err)}`);
      clearInterval(this.timer);
      return undefined;
    }
    // The loop was held by the collection: not counted as the next tick's work.
    this.last = performance.eventLoopUtilization();
    const residentBytes = process.memoryUsage.rss();
    const freedBytes = Math.max(0, before - residentBytes);
    const heldMs = performance.now() - started;
    this.metrics.idleMemoryTrims.inc({ after });
    this.metrics.idleMemoryTrimmedBytes.inc({ after }, freedBytes);
    this.metrics.idleMemoryTrimSeconds.inc({ after }, heldMs / 1000);
    this.logger.debug(
      `memory-reducing collection after ${after} in ${Math.round(heldMs)} ms, ${Math.round(freedBytes / 1048576)} MB given back`,
    );
    return { freedBytes, residentBytes };
  }
}
