import { logConnectionErrors, type DomainEvent, type OutboxRoute, type Recorded } from '@app/platform';
import { InjectQueue, OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import { Logger } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import type { Job, Queue } from 'bullmq';
import { RecordGitJobOutcome } from '../commands/project-maintenance.commands';
import type { ProjectEvent } from '../domain/project';

export const GIT_QUEUE = 'git';

export type ForkRepositoryJob = { kind: 'fork-repository'; projectId: number; sourceProjectId: number };
export type HousekeepingJob = { kind: 'housekeeping'; projectId: number };
export type GitJob = ForkRepositoryJob | HousekeepingJob;

const RETRIES = { attempts: 5, backoff: { type: 'exponential' as const, delay: 2000 } };

/** A fork's repository copy and a housekeeping run are jobs that exist exactly when their events do. */
export const gitJobsRoute: OutboxRoute = (event: Recorded<DomainEvent>) => {
  const e = event as Recorded<ProjectEvent>;
  if (e.type === 'ProjectForked')
    return {
      queue: GIT_QUEUE, name: 'fork-repository', jobId: `fork-repository-${e.data.projectId}`, options: RETRIES,
      data: { kind: 'fork-repository', projectId: e.data.projectId, sourceProjectId: e.data.forkedFromId } satisfies GitJob,
    };
  if (e.type === 'ProjectHousekeepingRequested')
    return {
      // One job per request: the stream position makes the id unique, and stable across relays.
      queue: GIT_QUEUE, name: 'housekeeping', jobId: `housekeeping-${e.data.projectId}-${e.streamVersion}`, options: RETRIES,
      data: { kind: 'housekeeping', projectId: e.data.projectId } satisfies GitJob,
    };
  return undefined;
};

/**
 * Runs git work for projects. Lode has no repositories yet (they come with the repositories work),
 * so a fork has nothing to copy and housekeeping nothing to pack: the jobs record their outcomes,
 * through the real state transitions (scheduled → started → finished; pending → done). A job that
 * runs twice records nothing new the second time.
 */
@Processor(GIT_QUEUE, { concurrency: 2 })
export class GitJobsProcessor extends WorkerHost {
  private readonly logger = new Logger('GitJobs');
  private lastError = '';

  constructor(private readonly commands: CommandBus, @InjectQueue(GIT_QUEUE) queue: Queue) {
    super();
    logConnectionErrors(queue, this.logger, `queue ${GIT_QUEUE}`);
  }

  async process(job: Job<GitJob>): Promise<void> {
    const { data } = job;
    if (data.kind === 'housekeeping') {
      await this.commands.execute(new RecordGitJobOutcome(data.projectId, { kind: 'housekeeping-finished' }));
      return;
    }
    await this.commands.execute(new RecordGitJobOutcome(data.projectId, { kind: 'import', status: 'started' }));
    try {
      await this.commands.execute(new RecordGitJobOutcome(data.projectId, { kind: 'import', status: 'finished' }));
    } catch (err) {
      if (job.attemptsMade + 1 >= (job.opts.attempts ?? 1))
        await this.commands.execute(new RecordGitJobOutcome(data.projectId, { kind: 'import', status: 'failed', error: String(err) }));
      throw err;
    }
  }

  @OnWorkerEvent('error')
  onError(err: Error): void {
    if (err.message === this.lastError) return;
    this.lastError = err.message;
    this.logger.warn(`worker ${GIT_QUEUE}: ${err.message}`);
  }
}
