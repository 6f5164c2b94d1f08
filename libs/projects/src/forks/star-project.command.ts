import { Clock, EventStore, type Actor } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { star, starDecider } from './star';
import { ProjectQueries } from '../projects/project.queries';

/** `POST /projects/:id/star`: the caller stars a project they can see (304 when starred already). Answers its id. */
export class StarProject extends Command<number> {
  constructor(
    readonly project: string | number,
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

  async execute({ project, actor }: StarProject): Promise<number> {
    const row = await this.projects.getVisible(project, actor);
    await this.store.decide(`star-${row.id}-${actor.id}`, starDecider, (s) =>
      star(s, row.id, actor.id, this.clock.now()),
    );
    return row.id;
  }
}
