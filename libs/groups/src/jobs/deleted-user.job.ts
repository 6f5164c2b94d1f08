import {
  Clock,
  EventStore,
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
import { UserQueries, type UserEvent } from '@app/users';
import { InjectQueue, Processor } from '@nestjs/bullmq';
import { Command, CommandBus, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { Queue } from 'bullmq';
import { ACCESS } from '../domain/access-level';
import { groupDecider, type GroupEvent } from '../domain/group';

export type DeletedUserJob = { kind: 'deleted-user'; userId: number; hardDelete: boolean };

/** The `groups` queue: the groups' side of a user's deletion. */
export const GROUPS_JOBS = new JobQueue<DeletedUserJob>('groups', { 'deleted-user': true });
export const GROUPS_QUEUE = GROUPS_JOBS.name;

/** A deleted user leaves the groups they belonged to; that is a change to each group, made by a job. */
export const deletedUserRoute: OutboxRoute = (event: Recorded<DomainEvent>) => {
  const e = event as Recorded<UserEvent>;
  if (e.type !== 'UserDeleted') return undefined;
  return GROUPS_JOBS.job(
    { kind: 'deleted-user', userId: e.data.userId, hardDelete: e.data.hardDelete },
    `deleted-user-${e.data.userId}`,
    { attempts: 5, backoff: { type: 'exponential', delay: 1000 } },
  );
};

/**
 * Removes a deleted user from every group they were a member of. With `hard_delete`, a group they
 * alone owned is deleted instead (with its subgroups and projects), as GitLab's hard delete does.
 * Safe to run twice: a group the user already left, or that is gone, is skipped.
 */
export class ForgetDeletedUser extends Command<void> {
  constructor(
    readonly userId: number,
    readonly hardDelete: boolean,
  ) {
    super();
  }
}

@CommandHandler(ForgetDeletedUser)
export class ForgetDeletedUserHandler implements ICommandHandler<ForgetDeletedUser> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly users: UserQueries,
  ) {}

  async execute({ userId, hardDelete }: ForgetDeletedUser): Promise<void> {
    // The event log says which groups ever had this member (the read model forgot when the user went).
    const streams = await this.store.streamIdsWith('GroupMemberAdded', 'userId', userId);
    for (const streamId of streams) {
      await this.store.decide(
        streamId,
        groupDecider,
        async (s): Promise<GroupEvent[]> => {
          if (!s.exists || !Object.hasOwn(s.members, userId)) return [];
          const at = this.clock.now().toISOString();
          const otherOwners = Object.entries(s.members)
            .filter(([id, level]) => level === ACCESS.owner && Number(id) !== userId)
            .map(([id]) => Number(id));
          const live = await this.users.countExisting(otherOwners);
          if (hardDelete && s.members[userId] === ACCESS.owner && live === 0)
            return [{ type: 'GroupDeleted', data: { groupId: s.groupId, at } }];
          return [{ type: 'GroupMemberRemoved', data: { groupId: s.groupId, userId, at } }];
        },
        { origin: 'worker' },
      );
    }
  }
}

@Processor(GROUPS_QUEUE, workerOptions({ concurrency: 1 }))
export class GroupsJobsProcessor extends JobProcessor<DeletedUserJob> {
  protected readonly handlers: JobHandlers<DeletedUserJob> = {
    'deleted-user': (job) => this.commands.execute(new ForgetDeletedUser(job.data.userId, job.data.hardDelete)),
  };

  constructor(
    private readonly commands: CommandBus,
    @InjectQueue(GROUPS_QUEUE) queue: Queue,
    kinds: JobKinds,
    outbox: Outbox,
  ) {
    super(GROUPS_JOBS, queue, kinds, outbox, 'GroupsJobs');
  }
}
