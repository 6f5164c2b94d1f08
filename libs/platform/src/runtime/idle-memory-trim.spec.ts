import { LodeConfig } from '../config/lode-config';
import { fragmentGlibcHeap } from '../../../../test/support/fragmented-glibc-heap';
import { BurstEnd, IdleMemoryTrim, TRIM_ABOVE_BYTES, UNDER_TRAFFIC_MARGIN_BYTES } from './idle-memory-trim';

const busy = (active: number) => ({ active, utilization: active / 2000 });
const quiet = { active: 10, utilization: 0.005 };
const large = TRIM_ABOVE_BYTES + 1;

describe('BurstEnd: when a burst of work is over and memory is worth a pause', () => {
  it('trims at the second idle tick in a row after five seconds of busy loop, then counts anew', () => {
    const burst = new BurstEnd();
    expect(burst.tick(busy(1900), large)).toBeUndefined();
    expect(burst.tick(busy(1900), large)).toBeUndefined();
    // 3.8 s of work so far: idle ticks are not the end of a burst yet.
    expect(burst.tick(quiet, large)).toBeUndefined();
    expect(burst.tick(quiet, large)).toBeUndefined();
    expect(burst.tick(busy(1900), large)).toBeUndefined(); // 5.7 s, but still busy
    // One idle tick is not yet the end: the next burst may be seconds away.
    expect(burst.tick(quiet, large)).toBeUndefined();
    expect(burst.tick(quiet, large)).toBe('idle');
    // Idle ticks after a trim never trim again until new work adds up: a day of quiet ticks, their
    // timers' few milliseconds each adding to nothing.
    for (let i = 0; i < 50_000; i++) expect(burst.tick(quiet, large)).toBeUndefined();
    for (let i = 0; i < 3; i++) burst.tick(busy(1900), large);
    expect(burst.tick(quiet, large)).toBeUndefined();
    expect(burst.tick(quiet, large)).toBe('idle');
  });

  it('runs no pause into a burst that began after one idle tick, and keeps counting the first burst', () => {
    const burst = new BurstEnd();
    for (let i = 0; i < 3; i++) burst.tick(busy(1900), large);
    expect(burst.tick(quiet, large)).toBeUndefined();
    // The next workload arrived within the two seconds: no pause lands in it.
    expect(burst.tick(busy(1900), large)).toBeUndefined();
    expect(burst.tick(quiet, large)).toBeUndefined();
    expect(burst.tick(busy(1900), large)).toBeUndefined();
    // Both bursts end together, at the first two idle ticks in a row.
    expect(burst.tick(quiet, large)).toBeUndefined();
    expect(burst.tick(quiet, large)).toBe('idle');
  });

  it('leaves a process at or under TRIM_ABOVE_BYTES alone when its burst ends, and waits for the next burst', () => {
    const burst = new BurstEnd();
    for (let i = 0; i < 3; i++) burst.tick(busy(1900), TRIM_ABOVE_BYTES);
    expect(burst.tick(quiet, TRIM_ABOVE_BYTES)).toBeUndefined();
    expect(burst.tick(quiet, TRIM_ABOVE_BYTES)).toBeUndefined();
    // That burst is over: growing later while idle does not make it trim.
    for (let i = 0; i < 10; i++) expect(burst.tick(quiet, large)).toBeUndefined();
    for (let i = 0; i < 3; i++) burst.tick(busy(1900), large);
    expect(burst.tick(quiet, large)).toBeUndefined();
    expect(burst.tick(quiet, large)).toBe('idle');
  });

  it('under light traffic, trims once six light seconds end a burst', () => {
    const burst = new BurstEnd();
    const light = busy(600); // 30 % of the loop: 50 reads a second on two slow cores
    const held = TRIM_ABOVE_BYTES + UNDER_TRAFFIC_MARGIN_BYTES + 1;
    for (let i = 0; i < 3; i++) expect(burst.tick(busy(1900), held)).toBeUndefined();
    // Two light ticks are not yet the end of the burst; the third is.
    expect(burst.tick(light, held)).toBeUndefined();
    expect(burst.tick(light, held)).toBeUndefined();
    expect(burst.tick(light, held)).toBe('light-traffic');
    // The burst is spent: the traffic goes on, the process stays as large, and is not paused again.
    for (let i = 0; i < 1_000; i++) expect(burst.tick(light, held)).toBeUndefined();
  });

  it('keeps a burst counted across a lone idle tick before light traffic (a full benchmark run ended at 327 MB so)', () => {
    const burst = new BurstEnd();
    const light = busy(600);
    const held = TRIM_ABOVE_BYTES + UNDER_TRAFFIC_MARGIN_BYTES + 1;
    for (let i = 0; i < 3; i++) burst.tick(busy(1900), held);
    // One idle tick between two workloads, then the next one's light traffic.
    expect(burst.tick(quiet, held)).toBeUndefined();
    expect(burst.tick(light, held)).toBeUndefined();
    expect(burst.tick(light, held)).toBeUndefined();
    expect(burst.tick(light, held)).toBe('light-traffic');
  });

  it('forgets a burst that idled under TRIM_ABOVE_BYTES: light traffic growing the process later is no reason to pause it', () => {
    const burst = new BurstEnd();
    const light = busy(600);
    const held = TRIM_ABOVE_BYTES + UNDER_TRAFFIC_MARGIN_BYTES + 1;
    for (let i = 0; i < 3; i++) burst.tick(busy(1900), TRIM_ABOVE_BYTES);
    expect([burst.tick(quiet, TRIM_ABOVE_BYTES), burst.tick(quiet, TRIM_ABOVE_BYTES)]).toEqual([undefined, undefined]);
    for (let i = 0; i < 1_000; i++) expect(burst.tick(light, held)).toBeUndefined();
  });

  it('ends a burst only on idle ticks in a row or light ticks in a row, never on a mix of them', () => {
    const burst = new BurstEnd();
    const light = busy(600);
    const held = TRIM_ABOVE_BYTES + UNDER_TRAFFIC_MARGIN_BYTES + 1;
    for (let i = 0; i < 3; i++) burst.tick(busy(1900), held);
    for (let i = 0; i < 100; i++) {
      // light, light, quiet: an idle tick breaks the light run; quiet, light: a light one the idle run.
      expect(burst.tick(light, held)).toBeUndefined();
      expect(burst.tick(light, held)).toBeUndefined();
      expect(burst.tick(quiet, held)).toBeUndefined();
    }
    // The burst is still counted, and ends at the first run of either kind.
    expect([burst.tick(light, held), burst.tick(light, held), burst.tick(light, held)]).toEqual([
      undefined,
      undefined,
      'light-traffic',
    ]);
  });

  it('never trims under steady light use without a burst, however long it lasts', () => {
    const burst = new BurstEnd();
    const huge = 4 * TRIM_ABOVE_BYTES;
    // 5 % of the loop (health checks) or 45 % (a steady stream of reads), all day: work adds up,
    // but no tick is idle and none is a burst's.
    for (let i = 0; i < 10_000; i++) expect(burst.tick(busy(100), huge)).toBeUndefined();
    for (let i = 0; i < 10_000; i++) expect(burst.tick(busy(900), huge)).toBeUndefined();
  });

  it('pauses requests only for memory worth it: past the margin over TRIM_ABOVE_BYTES, and over what the last trim left', () => {
    const burst = new BurstEnd();
    const light = busy(600);
    const line = TRIM_ABOVE_BYTES + UNDER_TRAFFIC_MARGIN_BYTES;
    // Large enough to trim when idle, not under traffic.
    for (let i = 0; i < 3; i++) burst.tick(busy(1900), line);
    for (let i = 0; i < 20; i++) expect(burst.tick(light, line)).toBeUndefined();
    // The traffic grows it past the line: that burst is still counted.
    expect(burst.tick(light, line + 1)).toBe('light-traffic');
    // The live heap kept it at 300 MB: the next line is the margin over that.
    const stuck = 300 * 1024 * 1024;
    burst.reduced(stuck);
    for (let i = 0; i < 3; i++) burst.tick(busy(1900), stuck + UNDER_TRAFFIC_MARGIN_BYTES);
    for (let i = 0; i < 20; i++) expect(burst.tick(light, stuck + UNDER_TRAFFIC_MARGIN_BYTES)).toBeUndefined();
    expect(burst.tick(light, stuck + UNDER_TRAFFIC_MARGIN_BYTES + 1)).toBe('light-traffic');
    // The idle rule keeps its own line.
    for (let i = 0; i < 3; i++) burst.tick(busy(1900), large);
    expect([burst.tick(quiet, large), burst.tick(quiet, large)]).toEqual([undefined, 'idle']);
  });

  it('still trims once idle when a burst tails off through light traffic under the line', () => {
    const burst = new BurstEnd();
    const light = busy(600);
    const held = 300 * 1024 * 1024; // over TRIM_ABOVE_BYTES, under it plus the margin
    for (let i = 0; i < 3; i++) burst.tick(busy(1900), held);
    for (let i = 0; i < 5; i++) expect(burst.tick(light, held)).toBeUndefined();
    expect(burst.tick(quiet, held)).toBeUndefined();
    expect(burst.tick(quiet, held)).toBe('idle');
  });

  it('never trims a loop kept half busy or more, however long it lasts', () => {
    const burst = new BurstEnd();
    const huge = 4 * TRIM_ABOVE_BYTES;
    for (let i = 0; i < 10_000; i++) expect(burst.tick(busy(i % 2 ? 1000 : 1900), huge)).toBeUndefined();
  });

  it('counts idle and light ticks in a row only: any other tick between them starts the count again', () => {
    const burst = new BurstEnd();
    const light = busy(600);
    const held = TRIM_ABOVE_BYTES + UNDER_TRAFFIC_MARGIN_BYTES + 1;
    for (let i = 0; i < 3; i++) burst.tick(busy(1900), held);
    for (let i = 0; i < 50; i++) {
      expect(burst.tick(light, held)).toBeUndefined();
      expect(burst.tick(light, held)).toBeUndefined();
      expect(burst.tick(busy(1900), held)).toBeUndefined();
      expect(burst.tick(quiet, held)).toBeUndefined();
    }
  });
});

describe('IdleMemoryTrim', () => {
  it('runs the memory-reducing collection: the heap grown for garbage shrinks, the pause is counted', () => {
    const counted: number[] = [];
    let heldSeconds = -1;
    const metrics = {
      idleMemoryTrims: { inc: (labels: { after: string }) => counted.push(labels.after === 'idle' ? 1 : NaN) },
      idleMemoryTrimmedBytes: {
        inc: (labels: { after: string }, n: number) => counted.push(labels.after === 'idle' ? n : NaN),
      },
      idleMemoryTrimSeconds: {
        inc: (labels: { after: string }, s: number) => (heldSeconds = labels.after === 'idle' ? s : NaN),
      },
    };
    const trim = new IdleMemoryTrim(new LodeConfig(), metrics as never);
    // Some 100 MB of short-lived objects, as a burst of requests leaves behind.
    const burst = () => {
      let kept = 0;
      for (let round = 0; round < 20; round++) {
        const rows: unknown[] = [];
        for (let i = 0; i < 100_000; i++) rows.push({ i, text: `row ${i} of round ${round}` });
        kept += rows.length;
      }
      return kept;
    };
    expect(burst()).toBe(2_000_000);
    const before = process.memoryUsage();
    const left = trim.trim('idle');
    const after = process.memoryUsage();
    // The garbage is collected and the heap's emptied pages given up.
    expect(after.heapUsed).toBeLessThan(before.heapUsed);
    expect(after.heapTotal).toBeLessThan(before.heapTotal);
    expect(left).toBeDefined();
    // What it left is the process's size right after it, as the next line under traffic needs.
    expect(Math.abs(left!.residentBytes - after.rss)).toBeLessThan(16 * 1024 * 1024);
    expect(counted).toEqual([1, left!.freedBytes]);
    expect(heldSeconds).toBeGreaterThan(0);
    expect(heldSeconds).toBeLessThan(60);
  });

  it('gives glibc’s free pages back too, through native/malloc-trim', () => {
    const metrics = {
      idleMemoryTrims: { inc: () => undefined },
      idleMemoryTrimmedBytes: { inc: () => undefined },
      idleMemoryTrimSeconds: { inc: () => undefined },
    };
    const trim = new IdleMemoryTrim(new LodeConfig(), metrics as never);
    trim.onApplicationBootstrap();
    try {
      // 170 MB of 64 KB Buffers dropped among kept ones: holes in glibc's arena once collected.
      const kept = fragmentGlibcHeap();
      const left = trim.trim('idle');
      expect(left!.freedBytes).toBeGreaterThan(100 * 1024 * 1024);
      expect(kept).toHaveLength(300);
    } finally {
      trim.onApplicationShutdown();
    }
  });
});
