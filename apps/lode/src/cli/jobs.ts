import { declaredQueueNames, openQueue, Outbox, QUEUE_SCHEMA, redactSecrets, type LodeConfig } from '@app/platform';
import type { Job, JobType, Queue } from 'bullmq';
import { Option, type Command } from 'commander';
import { CliFailure, EXIT, UsageError, type ExitCode } from './exit-codes';
import { intArg } from './int-arg';
import type { LodeRun } from './lode-run';
import { redactedUrl, type Lode } from './open-lode';
import { note, print, table } from './output';

/** The job states `jobs list` shows (BullMQ's). */
const STATES: JobType[] = ['failed', 'waiting', 'active', 'delayed', 'prioritized', 'waiting-children', 'completed'];
/** How long a command waits for the job queue to answer. */
const QUEUE_TIMEOUT_MS = 5000;

function withTimeout<T>(p: Promise<T>, what: string): Promise<T> {
  let t: NodeJS.Timeout;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      t = setTimeout(
        () => reject(new CliFailure(`${what} did not answer within ${QUEUE_TIMEOUT_MS / 1000} s`)),
        QUEUE_TIMEOUT_MS,
      );
    }),
  ]).finally(() => clearTimeout(t));
}

/**
 * The named queues (all of Lode's when none is named), open and answering, for `work`; closed after.
 * A job queue that does not answer fails the command (exit 1), naming where it was looked for.
 */
async function withQueues<T>(config: LodeConfig, names: string[], work: (queues: Queue[]) => Promise<T>): Promise<T> {
  const queues = names.map((name) => openQueue(config, name));
  try {
    const where = config.redisUrl
      ? `the job queue (${redactedUrl(config.redisUrl)}, prefix ${config.redisPrefix})`
      : `the job queue (schema ${QUEUE_SCHEMA} of ${redactedUrl(config.databaseUrl)})`;
    await withTimeout(Promise.all(queues.map((q) => q.waitUntilReady())), where).catch((err: unknown) => {
      throw err instanceof CliFailure ? err : new CliFailure(`${where} cannot be used: ${String(err)}`);
    });
    return await work(queues);
  } finally {
    await Promise.all(queues.map((q) => q.close().catch(() => undefined)));
  }
}

/** A job's failure in one line, without credentials. */
const reasonOf = (job: Job): string => redactSecrets((job.failedReason ?? '').split('\n')[0]).slice(0, 200);

interface ListedJob {
  queue: string;
  id: string;
  kind: string;
  state: JobType;
  attempts: number;
  maxAttempts: number;
  createdAt: string;
  finishedAt: string | null;
  reason: string | null;
}

async function list(lode: Lode, o: { queue?: string; state: JobType; limit: number; json?: boolean }): Promise<void> {
  const names = o.queue ? [o.queue] : declaredQueueNames().sort();
  const jobs = await withQueues(lode.config, names, async (queues) => {
    const found: ListedJob[] = [];
    for (const q of queues)
      for (const job of await q.getJobs([o.state], 0, o.limit - 1, false))
        if (job)
          found.push({
            queue: q.name,
            id: String(job.id),
            kind: job.name,
            state: o.state,
            attempts: job.attemptsMade,
            maxAttempts: job.opts.attempts ?? 1,
            createdAt: new Date(job.timestamp).toISOString(),
            finishedAt: job.finishedOn ? new Date(job.finishedOn).toISOString() : null,
            reason: job.failedReason ? reasonOf(job) : null,
          });
    return found;
  });
  if (o.json) {
    print(JSON.stringify(jobs, null, 2));
    return;
  }
  if (!jobs.length) {
    note(`no ${o.state} jobs in ${names.join(', ')}`);
    return;
  }
  for (const line of table(
    ['QUEUE', 'JOB ID', 'KIND', 'ATTEMPTS', 'FINISHED', 'REASON'],
    jobs.map((j) => [j.queue, j.id, j.kind, `${j.attempts}/${j.maxAttempts}`, j.finishedAt ?? '-', j.reason ?? '']),
  ))
    print(line);
}

/**
 * Gives a failed job all its attempts again. The outbox row is made unfinished first, so the job's
 * new outcome is recorded in PostgreSQL (where `check` and the sweep read it); should the queue then
 * refuse the retry, the row is marked failed again.
 */
async function retryOne(outbox: Outbox, job: Job): Promise<void> {
  const reopened = await outbox.reopen(job.id);
  try {
    // A handler may take a job an operator asked for again as a resend: a webhook delivery is then
    // sent even to a hook disabled for failing (GitLab's `force`).
    await job.updateData({ ...(job.data as object), retriedByOperator: true });
    await job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
  } catch (err) {
    if (reopened) await outbox.finished(job.id, 'failed', job.failedReason);
    throw err;
  }
}

async function retry(lode: Lode, jobId: string | undefined, o: { all?: boolean; queue?: string }): Promise<ExitCode> {
  const names = o.queue ? [o.queue] : declaredQueueNames().sort();
  const outbox = lode.app.get(Outbox);
  return withQueues(lode.config, names, async (queues) => {
    if (jobId) {
      const found = (await Promise.all(queues.map(async (q) => [q, await q.getJob(jobId)] as const))).find(
        ([, job]) => job,
      );
      if (!found) throw new CliFailure(`no job ${jobId} in ${names.join(', ')}`);
      const [queue, job] = found as [Queue, Job];
      const state = await job.getState();
      if (state !== 'failed')
        throw new CliFailure(`job ${jobId} (${queue.name}) is ${state}, not failed: nothing to retry`);
      await retryOne(outbox, job);
      print(`retried ${queue.name} ${jobId}`);
      return EXIT.ok;
    }
    const tried = new Set<string>();
    let retried = 0;
    let refused = 0;
    for (const q of queues)
      for (;;) {
        // One page at a time from the start: each retried job leaves the failed list.
        const page = (await q.getFailed(0, 99)).filter((j): j is Job => !!j);
        const fresh = page.filter((j) => !tried.has(`${q.name}/${j.id}`));
        if (!fresh.length) break;
        for (const job of fresh) {
          tried.add(`${q.name}/${job.id}`);
          try {
            await retryOne(outbox, job);
            retried++;
            print(`retried ${q.name} ${job.id}`);
          } catch (err) {
            refused++;
            note(`lode: could not retry ${q.name} ${job.id}: ${String(err)}`);
          }
        }
      }
    note(`${retried} failed job(s) retried${refused ? `, ${refused} could not be` : ''}`);
    return refused ? EXIT.failed : EXIT.ok;
  });
}
/** `jobs list` and `jobs retry`: the job queue's jobs, through the one way Lode opens a queue. */
export function registerJobCommands(program: Command, run: LodeRun): void {
  const queues = declaredQueueNames().sort();
  const jobs = program.command('jobs').description("the job queue's jobs (webhook deliveries, git work, housekeeping)");
  jobs
    .command('list')
    .description('list jobs in one state (failed by default), newest first')
    .addOption(new Option('--queue <name>', 'only this queue').choices(queues))
    .addOption(new Option('--state <state>', 'the state to list').choices(STATES).default('failed'))
    .option('--limit <n>', 'at most this many jobs per queue', intArg(1, 10_000), 50)
    .option('--json', 'print one JSON document instead of a table')
    .action(run.withLode(list));
  jobs
    .command('retry')
    .description('run a failed job again, with all its attempts')
    .argument('[job-id]', 'the job to retry (as `jobs list` shows it)')
    .option('--all', 'retry every failed job (of --queue, or of every queue)')
    .addOption(new Option('--queue <name>', 'look only in this queue').choices(queues))
    .action((jobId: string | undefined, o: { all?: boolean; queue?: string }) => {
      if (!!jobId === !!o.all) throw new UsageError('name one job id, or --all');
      return run.withLode(retry)(jobId, o);
    });
}
