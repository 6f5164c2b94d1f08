import { Outbox, type OutboxQueueStatus } from '@app/platform';
import type { Command } from 'commander';
import type { LodeRun } from './lode-run';
import { age, print, table } from './output';

/** The outbox's rows summed over every queue; the oldest ages are the oldest of any queue. */
export function outboxTotals(queues: OutboxQueueStatus[]): Omit<OutboxQueueStatus, 'queue'> {
  const oldest = (pick: (q: OutboxQueueStatus) => number | null) =>
    queues.reduce<number | null>(
      (max, q) => (pick(q) !== null && (max === null || pick(q)! > max) ? pick(q) : max),
      null,
    );
  const sum = (pick: (q: OutboxQueueStatus) => number) => queues.reduce((n, q) => n + pick(q), 0);
  const lastFailed = queues
    .map((q) => q.lastFailedAt)
    .filter((d): d is Date => d !== null)
    .sort((a, b) => b.getTime() - a.getTime())[0];
  return {
    undispatched: sum((q) => q.undispatched),
    oldestUndispatchedAge: oldest((q) => q.oldestUndispatchedAge),
    unfinished: sum((q) => q.unfinished),
    oldestUnfinishedAge: oldest((q) => q.oldestUnfinishedAge),
    completed: sum((q) => q.completed),
    failed: sum((q) => q.failed),
    failedLastDay: sum((q) => q.failedLastDay),
    lastFailedAt: lastFailed ?? null,
  };
}

/** `outbox status`: per queue, what waits for the relay, what runs, what finished and how. */
export function registerOutboxCommands(program: Command, run: LodeRun): void {
  program
    .command('outbox')
    .description('the jobs written with the events, on their way to the job queue')
    .command('status')
    .description('counts and oldest ages of the outbox rows, per queue')
    .option('--json', 'print one JSON document instead of a table')
    .action(
      run.withLode(async ({ app }, o: { json?: boolean }) => {
        const queues = await app.get(Outbox).status();
        const totals = outboxTotals(queues);
        if (o.json) {
          print(JSON.stringify({ queues, totals }, null, 2));
          return;
        }
        const row = (name: string, q: Omit<OutboxQueueStatus, 'queue'>) => [
          name,
          String(q.undispatched),
          age(q.oldestUndispatchedAge),
          String(q.unfinished),
          age(q.oldestUnfinishedAge),
          String(q.completed),
          String(q.failed),
          String(q.failedLastDay),
        ];
        for (const line of table(
          ['QUEUE', 'UNDISPATCHED', 'OLDEST', 'UNFINISHED', 'OLDEST', 'COMPLETED', 'FAILED', 'FAILED (1 DAY)'],
          [...queues.map((q) => row(q.queue, q)), row('(all)', totals)],
        ))
          print(line);
      }),
    );
}
