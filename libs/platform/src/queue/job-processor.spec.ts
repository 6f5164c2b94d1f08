import { UnrecoverableError, type Job, type Queue } from 'bullmq';
import { JobKinds, JobProcessor, JobQueue, type JobHandlers } from './job-processor';

type PaintJob = { kind: 'paint'; colour: string } | { kind: 'sand'; grit: number };
const PAINT_JOBS = new JobQueue<PaintJob>('paint', { paint: true, sand: true });

const fakeQueue = { on: () => undefined } as unknown as Queue;
const job = <J>(data: J, attemptsMade = 0, attempts = 3) =>
  ({ id: '1', data, attemptsMade, opts: { attempts } }) as Job<J>;

class PaintProcessor extends JobProcessor<PaintJob> {
  readonly done: string[] = [];
  protected readonly handlers: JobHandlers<PaintJob> = {
    paint: async (j) => void this.done.push(`paint ${j.data.colour}`),
    sand: async (j) => void this.done.push(`sand ${j.data.grit}`),
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
    const p = new PaintProcessor(PAINT_JOBS, fakeQueue, new JobKinds(), 'Paint');
    await p.process(job<PaintJob>({ kind: 'sand', grit: 120 }));
    await p.process(job<PaintJob>({ kind: 'paint', colour: 'red' }));
    expect(p.done).toEqual(['sand 120', 'paint red']);
  });

  it('fails a job of an unknown kind for good (no retry can help)', async () => {
    const p = new PaintProcessor(PAINT_JOBS, fakeQueue, new JobKinds(), 'Paint');
    await expect(p.process(job({ kind: 'varnish' } as unknown as PaintJob))).rejects.toBeInstanceOf(UnrecoverableError);
  });

  it('knows the last attempt', () => {
    const p = new PaintProcessor(PAINT_JOBS, fakeQueue, new JobKinds(), 'Paint');
    expect(p.lastAttempt(job({}, 1, 3))).toBe(false);
    expect(p.lastAttempt(job({}, 2, 3))).toBe(true);
  });
});

describe('JobKinds', () => {
  it('refuses a second handler for the same kind', () => {
    const kinds = new JobKinds();
    new PaintProcessor(PAINT_JOBS, fakeQueue, kinds, 'Paint').onModuleInit();
    expect(() => kinds.handle('paint', ['sand'], 'OtherProcessor')).toThrow(
      'job kind paint/sand has two handlers: PaintProcessor and OtherProcessor',
    );
  });

  it('refuses to start a worker that leaves a declared kind without a handler', () => {
    new JobQueue<{ kind: 'polish' }>('finish', { polish: true });
    const kinds = new JobKinds();
    new PaintProcessor(PAINT_JOBS, fakeQueue, kinds, 'Paint').onModuleInit();
    expect(kinds.unhandled()).toEqual(['finish/polish']);
    expect(() => kinds.onApplicationBootstrap()).toThrow('job kinds without a handler: finish/polish');
    kinds.handle('finish', ['polish'], 'FinishProcessor');
    expect(() => kinds.onApplicationBootstrap()).not.toThrow();
  });

  it('asks nothing of a process that runs no workers', () => {
    expect(() => new JobKinds().onApplicationBootstrap()).not.toThrow();
  });
});
