import { Clock, EventStore, type Actor } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { star, starDecider } from '../domain/project';
import { ProjectQueries } from '../queries/project.queries';

/** Stars or unstars a visible project for the caller; 304 when nothing changes. */
export class StarProject extends Command<number> {
  constructor(
    readonly project: string | number,
    readonly on: boolean,
    readonly actor: Actor,
  ) {
    super();
  }
}

@CommandHandler(StarProject)
export class StarProjectHandler implements ICommandHandler<StarProject> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly projects: ProjectQueries,
  ) {}

  async execute({ project, on, actor }: StarProject): Promise<number> {
    const row = await this.projects.getVisible(project, actor);
    await this.store.decide(`star-${row.id}-${actor.id}`, starDecider, (s) =>
      star(s, row.id, actor.id, on, this.clock.now()),
    );
    return row.id;
  }
}
