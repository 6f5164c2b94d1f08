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
import { InjectQueue, Processor } from '@nestjs/bullmq';
import type { Queue } from 'bullmq';
import { AvatarStore } from '../avatars';
import type { UserEvent } from '../domain/user';

export type RemoveUserFilesJob = { kind: 'remove-user-files'; userId: number };

/** The `maintenance` queue: work that follows a user's deletion. */
export const MAINTENANCE_JOBS = new JobQueue<RemoveUserFilesJob>('maintenance', { 'remove-user-files': true });
export const MAINTENANCE_QUEUE = MAINTENANCE_JOBS.name;

/** A deleted user's files (the avatar) go in the background; the job exists exactly when `UserDeleted` does. */
export const removeUserFilesRoute: OutboxRoute = (event: Recorded<DomainEvent>) => {
  const e = event as Recorded<UserEvent>;
  if (e.type !== 'UserDeleted') return undefined;
  return MAINTENANCE_JOBS.job(
    { kind: 'remove-user-files', userId: e.data.userId },
    `remove-user-files-${e.data.userId}`,
    {
      attempts: 5,
      backoff: { type: 'exponential', delay: 1000 },
    },
  );
};

/** Idempotent: removing what is already gone succeeds, so a job run twice has one effect. */
@Processor(MAINTENANCE_QUEUE, workerOptions({ concurrency: 2 }))
export class MaintenanceProcessor extends JobProcessor<RemoveUserFilesJob> {
  protected readonly handlers: JobHandlers<RemoveUserFilesJob> = {
    'remove-user-files': async (job) => {
      await this.avatars.remove(job.data.userId);
      this.logger.log(`removed the files of deleted user ${job.data.userId} (job ${job.id})`);
    },
  };

  constructor(
    private readonly avatars: AvatarStore,
    @InjectQueue(MAINTENANCE_QUEUE) queue: Queue,
    kinds: JobKinds,
    outbox: Outbox,
  ) {
    super(MAINTENANCE_JOBS, queue, kinds, outbox, 'MaintenanceJobs');
  }
}
