import { Clock, EventMetadata, EventStore } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { activate, ban, deactivate, unban, userDecider } from '../domain/user';
import { UserQueries } from '../queries/user.queries';

export type UserStateAction = 'activate' | 'deactivate' | 'ban' | 'unban';

/**
 * An administrator activates, deactivates, bans or unbans a user (GitLab 12.4 and 14.3). Answers
 * whether the state moved. Deactivation is decided on the user's last activity, which the read model
 * holds (a day's activity has its own stream, so the user's stream stays short).
 */
export class ChangeUserState extends Command<boolean> {
  constructor(
    readonly userId: number,
    readonly action: UserStateAction,
    readonly metadata?: EventMetadata,
  ) {
    super();
  }
}

@CommandHandler(ChangeUserState)
export class ChangeUserStateHandler implements ICommandHandler<ChangeUserState> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly users: UserQueries,
  ) {}

  async execute({ userId, action, metadata }: ChangeUserState): Promise<boolean> {
    const lastActivityOn = action === 'deactivate' ? ((await this.users.find(userId))?.lastActivityOn ?? null) : null;
    const events = await this.store.decide(
      `user-${userId}`,
      userDecider,
      (s) => {
        const now = this.clock.now();
        if (action === 'deactivate') return deactivate(s, lastActivityOn, now);
        if (action === 'activate') return activate(s, now);
        return action === 'ban' ? ban(s, now) : unban(s, now);
      },
      metadata,
    );
    return events.length > 0;
  }
}
