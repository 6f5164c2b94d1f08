import { logConnectionErrors, type DomainEvent, type OutboxRoute, type Recorded } from '@app/platform';
import { InjectQueue, OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import { Logger } from '@nestjs/common';
import type { Job, Queue } from 'bullmq';
import { AvatarStore } from '../avatars';
import type { UserEvent } from '../domain/user';

export const MAINTENANCE_QUEUE = 'maintenance';

export type RemoveUserFilesJob = { kind: 'remove-user-files'; userId: number };

/** A deleted user's files (the avatar) go in the background; the job exists exactly when `UserDeleted` does. */
export const removeUserFilesRoute: OutboxRoute = (event: Recorded<DomainEvent>) => {
  const e = event as Recorded<UserEvent>;
  if (e.type !== 'UserDeleted') return undefined;
  return {
    queue: MAINTENANCE_QUEUE,
    name: 'remove-user-files',
    jobId: `remove-user-files-${e.data.userId}`,
    data: { kind: 'remove-user-files', userId: e.data.userId } satisfies RemoveUserFilesJob,
    options: { attempts: 5, backoff: { type: 'exponential', delay: 1000 } },
  };
};

/** Idempotent: removing what is already gone succeeds, so a job run twice has one effect. */
@Processor(MAINTENANCE_QUEUE, { concurrency: 2 })
export class MaintenanceProcessor extends WorkerHost {
  private readonly logger = new Logger('MaintenanceJobs');

  private lastError = '';

  constructor(
    private readonly avatars: AvatarStore,
    @InjectQueue(MAINTENANCE_QUEUE) queue: Queue,
  ) {
    super();
    logConnectionErrors(queue, this.logger, `queue ${MAINTENANCE_QUEUE}`);
  }

  @OnWorkerEvent('error')
  onError(err: Error): void {
    if (err.message === this.lastError) return;
    this.lastError = err.message;
    this.logger.warn(`worker ${MAINTENANCE_QUEUE}: ${err.message}`);
  }

  async process(job: Job<RemoveUserFilesJob>): Promise<void> {
    if (job.data.kind === 'remove-user-files') {
      await this.avatars.remove(job.data.userId);
      this.logger.log(`removed the files of deleted user ${job.data.userId} (job ${job.id})`);
    }
  }
}
