import { GitRepositories, projectRepo } from '@app/git';
import type { GroupEvent } from '@app/groups';
import {
  JobKinds,
  JobProcessor,
  JobQueue,
  Outbox,
  type DomainEvent,
  type JobHandlers,
  type OutboxRoute,
  type Recorded,
  workerOptions,
} from '@app/platform';
import { ProjectAvatarStore } from '@app/users';
import { InjectQueue, OnWorkerEvent, Processor } from '@nestjs/bullmq';
import { CommandBus } from '@nestjs/cqrs';
import type { Job, Queue } from 'bullmq';
import { RecordForkImport } from '../forks/record-fork-import.command';
import { RecordHousekeepingFinished } from './record-housekeeping-finished.command';
import type { ProjectEvent } from '../projects/project';
import type { ReleaseStreamEvent } from '../releases/release-stream';
import type { RepositoryStatistics } from '../pushes/repository-push';
import { ProjectQueries } from '../projects/project.queries';

export type ForkRepositoryJob = { kind: 'fork-repository'; projectId: number; sourceProjectId: number };
export type HousekeepingJob = { kind: 'housekeeping'; projectId: number };
export type RemoveRepositoryJob = { kind: 'remove-repository'; projectId: number };
/** After a group's deletion: its projects went with it (a cascade, no ProjectDeleted of their own). */
export type RemoveGoneRepositoriesJob = { kind: 'remove-gone-repositories'; groupId: number };
export type GitJob = ForkRepositoryJob | HousekeepingJob | RemoveRepositoryJob | RemoveGoneRepositoriesJob;

/** The `git` queue: repository work that follows a project's (or a group's) events. */
export const GIT_JOBS = new JobQueue<GitJob>('git', {
  'fork-repository': true,
  housekeeping: true,
  'remove-repository': true,
  'remove-gone-repositories': true,
});
export const GIT_QUEUE = GIT_JOBS.name;

const RETRIES = { attempts: 5, backoff: { type: 'exponential' as const, delay: 2000 } };

/** A fork's repository copy, a housekeeping run and a removal are jobs that exist exactly when their events do. */
export const gitJobsRoute: OutboxRoute = (event: Recorded<DomainEvent>) => {
  const e = event as Recorded<ProjectEvent | ReleaseStreamEvent | GroupEvent>;
  switch (e.type) {
    case 'ProjectForked':
      return GIT_JOBS.job(
        { kind: 'fork-repository', projectId: e.data.projectId, sourceProjectId: e.data.forkedFromId },
        `fork-repository-${e.data.projectId}`,
        RETRIES,
      );
    case 'ProjectHousekeepingRequested':
      // One job per request: the stream position makes the id unique, and stable across relays.
      return GIT_JOBS.job(
        { kind: 'housekeeping', projectId: e.data.projectId },
        `housekeeping-${e.data.projectId}-${e.streamVersion}`,
        RETRIES,
      );
    case 'GroupDeleted':
      return GIT_JOBS.job(
        { kind: 'remove-gone-repositories', groupId: e.data.groupId },
        `remove-gone-repositories-${e.data.groupId}`,
        RETRIES,
      );
    case 'ProjectDeleted':
      return GIT_JOBS.job(
        { kind: 'remove-repository', projectId: e.data.projectId },
        `remove-repository-${e.data.projectId}`,
        RETRIES,
      );
    // Named one by one, so a new event of projects or groups is weighed here: does it need git work?
    case 'ProjectCreated':
    case 'ProjectUpdated':
    case 'ProjectAvatarChanged':
    case 'ProjectArchived':
    case 'ProjectUnarchived':
    case 'ProjectTransferred':
    case 'ProjectImportStatusChanged':
    case 'ProjectMemberAdded':
    case 'ProjectMemberUpdated':
    case 'ProjectMemberRemoved':
    case 'ProjectSharedWithGroup':
    case 'ProjectUnsharedWithGroup':
    case 'ProjectCustomAttributeSet':
    case 'ProjectCustomAttributeRemoved':
    case 'ProjectForkRelationCreated':
    case 'ProjectForkRelationRemoved':
    case 'ProjectHousekeepingFinished':
    case 'RepositoryPushed':
    case 'ProtectedBranchCreated':
    case 'ProtectedBranchUpdated':
    case 'ProtectedBranchRemoved':
    case 'ProtectedTagCreated':
    case 'ProtectedTagRemoved':
    case 'ProjectReleaseCreated':
    case 'ProjectReleaseUpdated':
    case 'ProjectReleaseRemoved':
    case 'ProjectReleaseChanged':
    case 'ProjectReleaseLinkAdded':
    case 'ProjectReleaseLinkChanged':
    case 'ProjectReleaseLinkRemoved':
    case 'GroupCreated':
    case 'GroupUpdated':
    case 'GroupMemberAdded':
    case 'GroupMemberUpdated':
    case 'GroupMemberRemoved':
    case 'GroupCustomAttributeSet':
    case 'GroupCustomAttributeRemoved':
    case 'GroupSharedWithGroup':
    case 'GroupUnsharedWithGroup':
    case 'GroupTransferred': // repositories are named by project id: a move renames nothing on disk
      return undefined;
    default:
      return undefined; // another context's event
  }
};

/**
 * Runs git work for projects: copying a fork's repository (a local bare clone sharing objects by hard
 * link), housekeeping (`git gc`, `pack-refs`) and removing a deleted project's repository. Outcomes
 * are recorded through commands, so `import_status` moves scheduled → started → finished (or failed
 * after the last attempt). Every step is safe to run twice.
 */
@Processor(GIT_QUEUE, workerOptions({ concurrency: 2 }))
export class GitJobsProcessor extends JobProcessor<GitJob> {
  protected readonly handlers: JobHandlers<GitJob> = {
    // The avatar's files go with the repository (both idempotent).
    'remove-repository': async (job) => {
      await this.git.remove(projectRepo(job.data.projectId));
      await this.avatars.remove(job.data.projectId);
    },
    'remove-gone-repositories': async () => {
      // Every project the log knows that the read model no longer has; removing twice is harmless.
      for (const id of await this.projects.goneProjectIds()) {
        await this.git.remove(projectRepo(id));
        await this.avatars.remove(id);
      }
    },
    housekeeping: (job) => this.housekeeping(job),
    'fork-repository': (job) => this.fork(job),
  };

  constructor(
    private readonly commands: CommandBus,
    private readonly git: GitRepositories,
    private readonly projects: ProjectQueries,
    private readonly avatars: ProjectAvatarStore,
    @InjectQueue(GIT_QUEUE) queue: Queue,
    kinds: JobKinds,
    outbox: Outbox,
  ) {
    super(GIT_JOBS, queue, kinds, outbox, 'GitJobs');
  }

  /** A fork given up fails with the reason; a housekeeping lease given up ends, so a new request is possible. */
  protected override async abandoned(data: GitJob, reason: string): Promise<void> {
    if (data.kind === 'fork-repository')
      await this.commands.execute(new RecordForkImport(data.projectId, 'failed', reason));
    else if (data.kind === 'housekeeping') await this.commands.execute(new RecordHousekeepingFinished(data.projectId));
  }

  /** Statistics over the branch HEAD names (a fork keeps its source's default branch). */
  private async statistics(projectId: number): Promise<RepositoryStatistics> {
    const repo = projectRepo(projectId);
    return this.git.statistics(repo, (await this.git.headBranch(repo)) ?? null);
  }

  private async housekeeping(job: Job<HousekeepingJob>): Promise<void> {
    const { projectId } = job.data;
    try {
      const repo = projectRepo(projectId);
      if (await this.git.exists(repo)) await this.git.gc(repo);
    } catch (err) {
      // The lease ends with the last attempt, also when git failed, so a new request stays possible.
      if (this.isLastAttempt(job)) await this.commands.execute(new RecordHousekeepingFinished(projectId));
      throw err;
    }
    await this.commands.execute(new RecordHousekeepingFinished(projectId, await this.statistics(projectId)));
  }

  private async fork(job: Job<ForkRepositoryJob>): Promise<void> {
    const { data } = job;
    await this.commands.execute(new RecordForkImport(data.projectId, 'started'));
    try {
      await this.git.cloneBare(projectRepo(data.sourceProjectId), projectRepo(data.projectId));
      await this.commands.execute(
        new RecordForkImport(data.projectId, 'finished', undefined, await this.statistics(data.projectId)),
      );
    } catch (err) {
      this.logger.warn(
        `fork of project ${data.sourceProjectId} into ${data.projectId} failed (attempt ${job.attemptsMade + 1}): ${String(err)}`,
      );
      if (this.isLastAttempt(job))
        await this.commands.execute(new RecordForkImport(data.projectId, 'failed', String(err)));
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
        await this.commands.execute(new RecordForkImport(job.data.projectId, 'failed', err.message));
      else if (job.data.kind === 'housekeeping')
        await this.commands.execute(new RecordHousekeepingFinished(job.data.projectId));
    } catch (e) {
      this.logger.warn(`could not record the failure of job ${job.id}: ${String(e)}`);
    }
  }
}
