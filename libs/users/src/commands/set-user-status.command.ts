import { Clock, EventStore } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { setStatus, userStatusDecider, userStatusStream, type StatusInput } from '../domain/user-status';

/** A user sets (or, with nothing given, clears) their own status (`PUT /user/status`). */
export class SetUserStatus extends Command<void> {
  constructor(
    readonly userId: number,
    readonly input: StatusInput,
  ) {
    super();
  }
}

@CommandHandler(SetUserStatus)
export class SetUserStatusHandler implements ICommandHandler<SetUserStatus> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async execute({ userId, input }: SetUserStatus): Promise<void> {
    const now = this.clock.now();
    await this.store.decide(userStatusStream(userId, now), userStatusDecider, (s) => setStatus(s, userId, input, now));
  }
}
