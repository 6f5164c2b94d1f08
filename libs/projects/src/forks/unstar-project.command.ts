import { Clock, EventStore, type Actor } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { starDecider, unstar } from './star';
import { ProjectQueries } from '../projects/project.queries';

/** `POST /projects/:id/unstar`: the caller takes their star back (304 when there is none). Answers the project's id. */
export class UnstarProject extends Command<number> {
  constructor(
    readonly project: string | number,
    readonly actor: Actor,
  ) {
    super();
  }
}

@CommandHandler(UnstarProject)
export class UnstarProjectHandler implements ICommandHandler<UnstarProject> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly projects: ProjectQueries,
  ) {}

  async execute({ project, actor }: UnstarProject): Promise<number> {
    const row = await this.projects.getVisible(project, actor);
    await this.store.decide(`star-${row.id}-${actor.id}`, starDecider, (s) =>
      unstar(s, row.id, actor.id, this.clock.now()),
    );
    return row.id;
  }
}
