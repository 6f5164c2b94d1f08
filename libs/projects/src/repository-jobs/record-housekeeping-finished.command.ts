import { Clock, EventStore } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { RepositoryStatistics } from '../pushes/repository-push';
import { decideOnProject } from '../projects/project-writes';
import { finishHousekeeping } from './housekeeping';

/** The `housekeeping` job reports its end, with the repository's statistics after it when it ran (git-jobs.ts). */
export class RecordHousekeepingFinished extends Command<void> {
  constructor(
    readonly projectId: number,
    readonly statistics?: RepositoryStatistics,
  ) {
    super();
  }
}

@CommandHandler(RecordHousekeepingFinished)
export class RecordHousekeepingFinishedHandler implements ICommandHandler<RecordHousekeepingFinished> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async execute({ projectId, statistics }: RecordHousekeepingFinished): Promise<void> {
    const now = this.clock.now();
    await decideOnProject(this.store, projectId, (s) => finishHousekeeping(s, now, statistics), { origin: 'worker' });
  }
}
