import { Clock, EventStore } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { remove, userDecider } from '../domain/user';

/**
 * Deletes a user. `UserDeleted` says whether it was a hard delete, so later contexts can move the
 * user's contributions to the ghost user or remove them; the user's files go in a background job.
 */
export class DeleteUser extends Command<void> {
  constructor(readonly userId: number, readonly hardDelete: boolean) {
    super();
  }
}

@CommandHandler(DeleteUser)
export class DeleteUserHandler implements ICommandHandler<DeleteUser> {
  constructor(private readonly store: EventStore, private readonly clock: Clock) {}

  async execute({ userId, hardDelete }: DeleteUser): Promise<void> {
    await this.store.decide(`user-${userId}`, userDecider, (s) => remove(s, hardDelete, this.clock.now()));
  }
}
