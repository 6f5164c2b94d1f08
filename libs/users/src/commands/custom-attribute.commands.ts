import { Clock, EventStore } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { removeCustomAttribute, setCustomAttribute, userDecider } from '../domain/user';

export class SetUserCustomAttribute extends Command<void> {
  constructor(
    readonly userId: number,
    readonly key: string,
    readonly value: string,
  ) {
    super();
  }
}

@CommandHandler(SetUserCustomAttribute)
export class SetUserCustomAttributeHandler implements ICommandHandler<SetUserCustomAttribute> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async execute({ userId, key, value }: SetUserCustomAttribute): Promise<void> {
    await this.store.decide(`user-${userId}`, userDecider, (s) => setCustomAttribute(s, key, value, this.clock.now()));
  }
}

export class RemoveUserCustomAttribute extends Command<void> {
  constructor(
    readonly userId: number,
    readonly key: string,
  ) {
    super();
  }
}

@CommandHandler(RemoveUserCustomAttribute)
export class RemoveUserCustomAttributeHandler implements ICommandHandler<RemoveUserCustomAttribute> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async execute({ userId, key }: RemoveUserCustomAttribute): Promise<void> {
    await this.store.decide(`user-${userId}`, userDecider, (s) => removeCustomAttribute(s, key, this.clock.now()));
  }
}
