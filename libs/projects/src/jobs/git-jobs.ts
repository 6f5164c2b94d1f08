import { GitRepositories, projectRepo } from '@app/git';
import { logConnectionErrors, type DomainEvent, type OutboxRoute, type Recorded } from '@app/platform';
import { InjectQueue, OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import { Logger } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import type { Job, Queue } from 'bullmq';
import { RecordGitJobOutcome } from '../commands/project-maintenance.commands';
import type { ProjectEvent } from '../domain/project';
import type { RepositoryStatistics } from '../domain/repository-push';
import { ProjectQueries } from '../queries/project.queries';

export const GIT_QUEUE = 'git';

export type ForkRepositoryJob = { kind: 'fork-repository'; projectId: number; sourceProjectId: number };
export type HousekeepingJob = { kind: 'housekeeping'; projectId: number };
export type RemoveRepositoryJob = { kind: 'remove-repository'; projectId: number };
/** After a group's deletion: its projects went with it (a cascade, no ProjectDeleted of their own). */
export type RemoveGoneRepositoriesJob = { kind: 'remove-gone-repositories'; groupId: number };
export type GitJob = ForkRepositoryJob | HousekeepingJob | RemoveRepositoryJob | RemoveGoneRepositoriesJob;

const RETRIES = { attempts: 5, backoff: { type: 'exponential' as const, delay: 2000 } };

/** A fork's repository copy and a housekeeping run are jobs that exist exactly when their events do. */
export const gitJobsRoute: OutboxRoute = (event: Recorded<DomainEvent>) => {
  const e = event as Recorded<ProjectEvent>;
  if (e.type === 'ProjectForked')
    return {
      queue: GIT_QUEUE,
      name: 'fork-repository',
      jobId: `fork-repository-${e.data.projectId}`,
      options: RETRIES,
      data: {
        kind: 'fork-repository',
        projectId: e.data.projectId,
        sourceProjectId: e.data.forkedFromId,
      } satisfies GitJob,
    };
  if (e.type === 'ProjectHousekeepingRequested')
    return {
      // One job per request: the stream position makes the id unique, and stable across relays.
      queue: GIT_QUEUE,
      name: 'housekeeping',
      jobId: `housekeeping-${e.data.projectId}-${e.streamVersion}`,
      options: RETRIES,
      data: { kind: 'housekeeping', projectId: e.data.projectId } satisfies GitJob,
    };
  if ((e as Recorded<DomainEvent>).type === 'GroupDeleted') {
    const groupId = (e.data as unknown as { groupId: number }).groupId;
    return {
      queue: GIT_QUEUE,
      name: 'remove-gone-repositories',
      jobId: `remove-gone-repositories-${groupId}`,
      options: RETRIES,
      data: { kind: 'remove-gone-repositories', groupId } satisfies GitJob,
    };
  }
  if (e.type === 'ProjectDeleted')
    return {
      queue: GIT_QUEUE,
      name: 'remove-repository',
      jobId: `remove-repository-${e.data.projectId}`,
      options: RETRIES,
      data: { kind: 'remove-repository', projectId: e.data.projectId } satisfies GitJob,
    };
  return undefined;
};

/**
 * Runs git work for projects: copying a fork's repository (a local bare clone sharing objects by hard
 * link), housekeeping (`git gc`, `pack-refs`) and removing a deleted project's repository. Outcomes
 * are recorded through commands, so `import_status` moves scheduled → started → finished (or failed
 * after the last attempt). Every step is safe to run twice.
 */
@Processor(GIT_QUEUE, { concurrency: 2 })
export class GitJobsProcessor extends WorkerHost {
  private readonly logger = new Logger('GitJobs');
  private lastError = '';

  constructor(
    private readonly commands: CommandBus,
    private readonly git: GitRepositories,
    private readonly projects: ProjectQueries,
    @InjectQueue(GIT_QUEUE) queue: Queue,
  ) {
    super();
    logConnectionErrors(queue, this.logger, `queue ${GIT_QUEUE}`);
  }

  /** Statistics over the branch HEAD names (a fork keeps its source's default branch). */
  private async statistics(projectId: number): Promise<RepositoryStatistics> {
    const repo = projectRepo(projectId);
    return this.git.statistics(repo, (await this.git.headBranch(repo)) ?? null);
  }

  async process(job: Job<GitJob>): Promise<void> {
    const { data } = job;
    if (data.kind === 'remove-repository') return this.git.remove(projectRepo(data.projectId));
    if (data.kind === 'remove-gone-repositories') {
      // Every project the log knows that the read model no longer has; removing twice is harmless.
      for (const id of await this.projects.goneProjectIds()) await this.git.remove(projectRepo(id));
      return;
    }
    if (data.kind === 'housekeeping') {
      try {
        const repo = projectRepo(data.projectId);
        if (await this.git.exists(repo)) await this.git.gc(repo);
      } catch (err) {
        // The lease ends with the last attempt, also when git failed, so a new request stays possible.
        if (job.attemptsMade + 1 >= (job.opts.attempts ?? 1))
          await this.commands.execute(new RecordGitJobOutcome(data.projectId, { kind: 'housekeeping-finished' }));
        throw err;
      }
      await this.commands.execute(
        new RecordGitJobOutcome(data.projectId, {
          kind: 'housekeeping-finished',
          statistics: await this.statistics(data.projectId),
        }),
      );
      return;
    }
    await this.commands.execute(new RecordGitJobOutcome(data.projectId, { kind: 'import', status: 'started' }));
    try {
      await this.git.cloneBare(projectRepo(data.sourceProjectId), projectRepo(data.projectId));
      await this.commands.execute(
        new RecordGitJobOutcome(data.projectId, {
          kind: 'import',
          status: 'finished',
          statistics: await this.statistics(data.projectId),
        }),
      );
    } catch (err) {
      this.logger.warn(
        `fork of project ${data.sourceProjectId} into ${data.projectId} failed (attempt ${job.attemptsMade + 1}): ${String(err)}`,
      );
      if (job.attemptsMade + 1 >= (job.opts.attempts ?? 1))
        await this.commands.execute(
          new RecordGitJobOutcome(data.projectId, { kind: 'import', status: 'failed', error: String(err) }),
        );
      throw err;
    }
  }

  /**
   * A job killed mid-way (the process died, a deploy) is retried by BullMQ's stalled-job check; one
   * that stalls past its limit fails without passing through `process`. Either way a fork must not
   * stay `started` forever, and a housekeeping lease must end.
   */
  @OnWorkerEvent('failed')
  async onFailed(job: Job<GitJob> | undefined, err: Error): Promise<void> {
    if (!job) return;
    const final = job.attemptsMade >= (job.opts.attempts ?? 1) || /stalled/i.test(err.message);
    if (!final) return;
    try {
      if (job.data.kind === 'fork-repository')
        await this.commands.execute(
          new RecordGitJobOutcome(job.data.projectId, { kind: 'import', status: 'failed', error: err.message }),
        );
      else if (job.data.kind === 'housekeeping')
        await this.commands.execute(new RecordGitJobOutcome(job.data.projectId, { kind: 'housekeeping-finished' }));
    } catch (e) {
      this.logger.warn(`could not record the failure of job ${job.id}: ${String(e)}`);
    }
  }

  @OnWorkerEvent('error')
  onError(err: Error): void {
    if (err.message === this.lastError) return;
    this.lastError = err.message;
    this.logger.warn(`worker ${GIT_QUEUE}: ${err.message}`);
  }
}
