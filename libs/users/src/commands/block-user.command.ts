import { Clock, EventMetadata, EventStore } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { block, unblock, userDecider } from '../domain/user';

/**
 * Blocks or unblocks a user. Answers whether the state moved (GitLab's API returns that boolean).
 * `byDirectory` is the directory synchronisation's block, which the API may not lift; Lode has no
 * directory sync yet, so only the admin command line sets it.
 */
export class ChangeUserBlock extends Command<boolean> {
  constructor(
    readonly userId: number,
    readonly action: 'block' | 'unblock',
    readonly byDirectory = false,
    readonly metadata?: EventMetadata,
  ) {
    super();
  }
}

@CommandHandler(ChangeUserBlock)
export class ChangeUserBlockHandler implements ICommandHandler<ChangeUserBlock> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async execute({ userId, action, byDirectory, metadata }: ChangeUserBlock): Promise<boolean> {
    const decide = action === 'block' ? block : unblock;
    const events = await this.store.decide(
      `user-${userId}`,
      userDecider,
      (s) => decide(s, this.clock.now(), byDirectory),
      metadata,
    );
    return events.length > 0;
  }
}
