import { Clock, EventStore } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { activityDay, recordActivity, userActivityDecider, userActivityStream } from '../domain/user-activity';

/** Notes that a user was active today (at most one event a day); answers the day recorded. */
export class RecordUserActivity extends Command<string> {
  constructor(readonly userId: number) {
    super();
  }
}

@CommandHandler(RecordUserActivity)
export class RecordUserActivityHandler implements ICommandHandler<RecordUserActivity> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async execute({ userId }: RecordUserActivity): Promise<string> {
    const now = this.clock.now();
    const on = activityDay(now);
    await this.store.decide(userActivityStream(userId, on), userActivityDecider, (s) => recordActivity(s, userId, now));
    return on;
  }
}
