import { Clock, EventStore, LodeConfig } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { RepositoryStatistics } from '../pushes/repository-push';
import { decideOnProject } from '../projects/project-writes';
import { recordImportStatus, type ImportStatus } from './fork';

/** The `fork-repository` job reports the copy's progress (repository-jobs/git-jobs.ts). */
export class RecordForkImport extends Command<void> {
  constructor(
    readonly projectId: number,
    readonly status: ImportStatus,
    readonly error?: string,
    readonly statistics?: RepositoryStatistics,
  ) {
    super();
  }
}

@CommandHandler(RecordForkImport)
export class RecordForkImportHandler implements ICommandHandler<RecordForkImport> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly config: LodeConfig,
  ) {}

  async execute({ projectId, status, error, statistics }: RecordForkImport): Promise<void> {
    const now = this.clock.now();
    await decideOnProject(
      this.store,
      projectId,
      (s) => recordImportStatus(s, status, error ?? null, now, statistics, this.config.defaultBranchProtection),
      { origin: 'worker' },
    );
  }
}
