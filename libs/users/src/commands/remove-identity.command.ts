import { Clock, EventStore } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { removeIdentity, userDecider } from '../domain/user';

/** An administrator removes a user's identity of one provider (`DELETE /users/:id/identities/:provider`). */
export class RemoveIdentity extends Command<void> {
  constructor(
    readonly userId: number,
    readonly provider: string,
  ) {
    super();
  }
}

@CommandHandler(RemoveIdentity)
export class RemoveIdentityHandler implements ICommandHandler<RemoveIdentity> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async execute({ userId, provider }: RemoveIdentity): Promise<void> {
    await this.store.decide(`user-${userId}`, userDecider, (s) => removeIdentity(s, provider, this.clock.now()));
  }
}
