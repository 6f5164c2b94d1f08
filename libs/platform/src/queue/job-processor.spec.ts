import { UnrecoverableError, type Job, type Queue } from 'bullmq';
import type { Outbox } from '../outbox/outbox';
import { JobKinds, JobProcessor, JobQueue, type JobHandlers } from './job-processor';

type PaintJob = { kind: 'paint'; colour: string } | { kind: 'sand'; grit: number };
const PAINT_JOBS = new JobQueue<PaintJob>('paint', { paint: true, sand: true });

const fakeQueue = { on: () => undefined } as unknown as Queue;
/** What the processor reports to the outbox's ledger (PostgreSQL in real life). */
const reported: [string | undefined, string][] = [];
const outbox = {
  finished: async (id: string | undefined, outcome: string) => void reported.push([id, outcome]),
  // No request caused these jobs (the e2e suites check the request id a job's lines carry).
  causeOf: async () => undefined,
} as unknown as Outbox;
const job = <J>(data: J, attemptsMade = 0, attempts = 3) =>
  ({ id: '1', data, attemptsMade, opts: { attempts } }) as Job<J>;

class PaintProcessor extends JobProcessor<PaintJob> {
  readonly done: string[] = [];
  failOn = '';
  protected readonly handlers: JobHandlers<PaintJob> = {
    paint: async (j) => void this.done.push(`paint ${j.data.colour}`),
    sand: async (j) => {
      if (String(j.data.grit) === this.failOn) throw new Error('bad grit');
      this.done.push(`sand ${j.data.grit}`);
    },
  };
  lastAttempt(j: Job): boolean {
    return this.isLastAttempt(j);
  }
}

describe('JobQueue', () => {
  it('makes outbox jobs named by their kind', () => {
    expect(PAINT_JOBS.job({ kind: 'sand', grit: 80 }, 'sand-1')).toEqual({
      queue: 'paint',
      name: 'sand',
      jobId: 'sand-1',
      data: { kind: 'sand', grit: 80 },
    });
    expect(PAINT_JOBS.kinds).toEqual(['paint', 'sand']);
  });
});

describe('JobProcessor', () => {
  it('hands each job to the handler of its kind', async () => {
    const p = new PaintProcessor(PAINT_JOBS, fakeQueue, new JobKinds(), outbox, 'Paint');
    await p.process(job<PaintJob>({ kind: 'sand', grit: 120 }));
    await p.process(job<PaintJob>({ kind: 'paint', colour: 'red' }));
    expect(p.done).toEqual(['sand 120', 'paint red']);
  });

  it('fails a job of an unknown kind for good (no retry can help)', async () => {
    const p = new PaintProcessor(PAINT_JOBS, fakeQueue, new JobKinds(), outbox, 'Paint');
    await expect(p.process(job({ kind: 'varnish' } as unknown as PaintJob))).rejects.toBeInstanceOf(UnrecoverableError);
  });

  it('reports a job finished when it completes or fails for good, not when an attempt fails', async () => {
    reported.length = 0;
    const p = new PaintProcessor(PAINT_JOBS, fakeQueue, new JobKinds(), outbox, 'Paint');
    await p.process({ ...job<PaintJob>({ kind: 'sand', grit: 40 }), id: 'sand-1@k1' } as Job<PaintJob>);
    const failing = (attemptsMade: number) =>
      ({ ...job({ kind: 'sand', grit: 'x' }, attemptsMade, 2), id: 'sand-2@k2' }) as unknown as Job<PaintJob>;
    p.failOn = 'x';
    await expect(p.process(failing(0))).rejects.toThrow('bad grit');
    expect(reported).toEqual([['sand-1@k1', 'completed']]);
    await expect(p.process(failing(1))).rejects.toThrow('bad grit');
    expect(reported).toEqual([
      ['sand-1@k1', 'completed'],
      ['sand-2@k2', 'failed'],
    ]);
  });

  it('knows the last attempt', () => {
    const p = new PaintProcessor(PAINT_JOBS, fakeQueue, new JobKinds(), outbox, 'Paint');
    expect(p.lastAttempt(job({}, 1, 3))).toBe(false);
    expect(p.lastAttempt(job({}, 2, 3))).toBe(true);
  });
});

describe('JobKinds', () => {
  it('refuses a second handler for the same kind', () => {
    const kinds = new JobKinds();
    new PaintProcessor(PAINT_JOBS, fakeQueue, kinds, outbox, 'Paint').onModuleInit();
    expect(() => kinds.handle('paint', ['sand'], 'OtherProcessor')).toThrow(
      'job kind paint/sand has two handlers: PaintProcessor and OtherProcessor',
    );
  });

  it('refuses to start a worker that leaves a declared kind without a handler', () => {
    new JobQueue<{ kind: 'polish' }>('finish', { polish: true });
    const kinds = new JobKinds();
    new PaintProcessor(PAINT_JOBS, fakeQueue, kinds, outbox, 'Paint').onModuleInit();
    expect(kinds.unhandled()).toEqual(['finish/polish']);
    expect(() => kinds.onApplicationBootstrap()).toThrow('job kinds without a handler: finish/polish');
    kinds.handle('finish', ['polish'], 'FinishProcessor');
    expect(() => kinds.onApplicationBootstrap()).not.toThrow();
  });

  it('asks nothing of a process that runs no workers', () => {
    expect(() => new JobKinds().onApplicationBootstrap()).not.toThrow();
  });
});
