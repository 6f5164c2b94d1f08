import { defaultGitBudget } from '@app/platform';
import { readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { stopSpawnHelper } from './spawn-helper';
import { GitBudgetAbandoned, GitBudgetExceeded, GitWorkBudget } from './work-budget';

/** A job that runs until `finish` is called: a slot held for as long as the test wants. */
function held<T>(value: T) {
  let finish!: () => void;
  const until = new Promise<void>((r) => (finish = r));
  let runs = 0;
  return {
    job: async () => {
      runs++;
      await until;
      return value;
    },
    finish,
    runs: () => runs,
  };
}

/** A process's nice level, field 19 of `/proc/<pid>/stat` (after the command name in parentheses). */
function niceOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}

describe('GitWorkBudget', () => {
  const budget = (over: Partial<ReturnType<typeof defaultGitBudget>> = {}) =>
    new GitWorkBudget({ ...defaultGitBudget(2), archives: 1, waitMs: 200, queue: 5, ...over });

  it('sizes its slots from the core count', () => {
    expect(defaultGitBudget(2)).toMatchObject({ archives: 1, clones: 8, pushes: 4, walks: 4, nice: 10 });
    expect(defaultGitBudget(1).archives).toBe(1);
    expect(defaultGitBudget(16).archives).toBe(8);
  });

  it('past its slots a request waits, then is refused with 503 and Retry-After; a freed slot goes to the next', async () => {
    const b = budget();
    const slow = held('first');
    const first = b.run('archive', slow.job);
    const refused = await b.run('archive', async () => 'second').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(GitBudgetExceeded);
    expect((refused as GitBudgetExceeded).retryAfter).toBe(5);
    expect((refused as GitBudgetExceeded).message).toBe('503 Service Unavailable');
    // Another kind has slots of its own.
    await expect(b.run('walk', async () => 'walked')).resolves.toBe('walked');
    // A waiter that arrives while the slot is held gets it when the first ends.
    const waiting = b.run('archive', async () => 'third');
    expect(b.stats().archive).toMatchObject({ running: 1, waiting: 1 });
    slow.finish();
    await expect(first).resolves.toBe('first');
    await expect(waiting).resolves.toBe('third');
    expect(b.stats().archive).toMatchObject({ running: 0, waiting: 0, started: 2, waited: 1, refusedTimeout: 1 });
  });

  it('refuses at once when the queue is full', async () => {
    const b = budget({ queue: 1, waitMs: 60_000 });
    const slow = held(1);
    const first = b.run('archive', slow.job);
    const queued = b.run('archive', async () => 2);
    await expect(b.run('archive', async () => 3)).rejects.toMatchObject({ why: 'queue_full' });
    slow.finish();
    await expect(Promise.all([first, queued])).resolves.toEqual([1, 2]);
    expect(b.stats().archive.refusedQueueFull).toBe(1);
  });

  it('a waiter whose client went away leaves the queue without taking a slot', async () => {
    const b = budget({ waitMs: 60_000 });
    const slow = held(1);
    const first = b.run('archive', slow.job);
    const gone = new AbortController();
    const abandoned = b.run('archive', async () => 2, gone.signal);
    gone.abort();
    await expect(abandoned).rejects.toBeInstanceOf(GitBudgetAbandoned);
    expect(b.stats().archive).toMatchObject({ waiting: 0, abandoned: 1 });
    slow.finish();
    await first;
  });

  it('twenty callers of one key share one job, which the callers that stop waiting do not cancel', async () => {
    const b = budget();
    const slow = held('archive bytes');
    const callers = Array.from({ length: 20 }, () => b.singleFlight('archive', 'project-1/sha.tar.gz', slow.job));
    // Nineteen of them may go away: the job is theirs to share, not to stop.
    slow.finish();
    expect(await Promise.all(callers)).toEqual(Array(20).fill('archive bytes'));
    expect(slow.runs()).toBe(1);
    expect(b.stats().archive.started).toBe(1);
    // Once it ended, the key starts a new job (the caller finds the cache file made by the first).
    const again = held('again');
    again.finish();
    await expect(b.singleFlight('archive', 'project-1/sha.tar.gz', again.job)).resolves.toBe('again');
  });

  it('starts git children at a lower CPU priority than its own process, from the helper or from this process', async () => {
    // The helper runs at the level of the budget that started it: a budget asking for more than
    // that (5, then 10) gets `nice` in front of its children.
    for (const [level, spawnHelper, helperStartedAt] of [
      [10, true, 10],
      [10, false, undefined],
      [0, true, 0],
      [10, true, 5],
    ] as const) {
      stopSpawnHelper();
      if (helperStartedAt !== undefined && helperStartedAt !== level) {
        const first = budget({ nice: helperStartedAt, spawnHelper: true }).spawn('git', ['--version'], {
          stdio: ['pipe', 'pipe', 'pipe'],
        });
        await new Promise((r) => first.once('close', r));
      }
      const b = budget({ nice: level, spawnHelper });
      // `git cat-file --batch` answers what it reads and runs until its input ends.
      const child = b.spawn('git', ['cat-file', '--batch'], { stdio: ['pipe', 'pipe', 'pipe'] });
      await new Promise((r) => child.once('spawn', r));
      try {
        // Started through `nice`, the process is git once nice has set the level and exec'd it.
        while (readFileSync(`/proc/${child.pid}/comm`, 'utf8').trim() !== 'git')
          await new Promise((r) => setTimeout(r, 10));
        expect(niceOf(child.pid!)).toBe(Math.min(19, getPriority(0) + level));
        // Its input and output are streamed both ways.
        const answer = new Promise<string>((resolve) =>
          child.stdout!.once('data', (d: Buffer) => resolve(d.toString())),
        );
        child.stdin!.write('0000000000000000000000000000000000000000\n');
        expect(await answer).toBe('0000000000000000000000000000000000000000 missing\n');
      } finally {
        const closed = new Promise<unknown[]>((r) => child.once('close', (...a: unknown[]) => r(a)));
        child.stdin!.end();
        expect(await closed).toEqual([0, null]);
      }
    }
  });

  it('reports the children of a helper that died as killed, and starts a new helper for the next', async () => {
    const b = budget({ spawnHelper: true });
    const orphan = b.spawn('git', ['cat-file', '--batch'], { stdio: ['pipe', 'pipe', 'pipe'] });
    await new Promise((r) => orphan.once('spawn', r));
    const closed = new Promise<unknown[]>((r) => orphan.once('close', (...a: unknown[]) => r(a)));
    stopSpawnHelper();
    expect(await closed).toEqual([null, 'SIGKILL']);
    const next = b.spawn('git', ['--version'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    next.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    expect(await new Promise((r) => next.once('close', r))).toBe(0);
    expect(out).toMatch(/^git version /);
  });
});
