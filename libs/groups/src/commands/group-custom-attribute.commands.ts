import { Clock, EventStore } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { groupDecider, removeCustomAttribute, setCustomAttribute } from '../domain/group';

/** GitLab's admin-only custom attributes of groups (`value` undefined removes the key). */
export class ChangeGroupCustomAttribute extends Command<void> {
  constructor(
    readonly groupId: number,
    readonly key: string,
    readonly value: string | undefined,
  ) {
    super();
  }
}

@CommandHandler(ChangeGroupCustomAttribute)
export class ChangeGroupCustomAttributeHandler implements ICommandHandler<ChangeGroupCustomAttribute> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async execute({ groupId, key, value }: ChangeGroupCustomAttribute): Promise<void> {
    const now = this.clock.now();
    await this.store.decide(`group-${groupId}`, groupDecider, (s) =>
      value === undefined ? removeCustomAttribute(s, key, now) : setCustomAttribute(s, key, value, now),
    );
  }
}
