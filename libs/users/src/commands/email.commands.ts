import { Clock, EventStore, Invalid, UniqueViolation } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { addEmail, removeEmail, userDecider } from '../domain/user';

export class AddEmail extends Command<number> {
  constructor(
    readonly userId: number,
    readonly email: string,
  ) {
    super();
  }
}

@CommandHandler(AddEmail)
export class AddEmailHandler implements ICommandHandler<AddEmail> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async execute({ userId, email }: AddEmail): Promise<number> {
    const emailId = await this.store.nextId('email_id_seq');
    await this.store
      .decide(`user-${userId}`, userDecider, (s) => addEmail(s, emailId, email, this.clock.now()))
      .catch((err) => {
        // Unique across every user's primary and secondary addresses.
        if (err instanceof UniqueViolation && err.constraint === 'user_email_claims_pkey')
          throw new Invalid({ email: ['has already been taken'] });
        throw err;
      });
    return emailId;
  }
}

export class RemoveEmail extends Command<void> {
  constructor(
    readonly userId: number,
    readonly emailId: number,
  ) {
    super();
  }
}

@CommandHandler(RemoveEmail)
export class RemoveEmailHandler implements ICommandHandler<RemoveEmail> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async execute({ userId, emailId }: RemoveEmail): Promise<void> {
    await this.store.decide(`user-${userId}`, userDecider, (s) => removeEmail(s, emailId, this.clock.now()));
  }
}
