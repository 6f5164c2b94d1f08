import { Clock, EventStore, NotFound, type Actor } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { ADMINISTRATORS_ONLY, decideOnProject } from '../projects/project-writes';
import { ProjectQueries } from '../projects/project.queries';
import { createForkRelation } from './fork';

/** `POST /projects/:id/fork/:forked_from_id`: administrators relate an existing project to its source. Answers the project's id. */
export class CreateForkRelation extends Command<number> {
  constructor(
    readonly project: string | number,
    readonly forkedFromId: number,
    readonly actor: Actor,
  ) {
    super();
  }
}

/** 404 `Source Project` for an unknown source; 409 when already a fork (or of itself). */
@CommandHandler(CreateForkRelation)
export class CreateForkRelationHandler implements ICommandHandler<CreateForkRelation> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly projects: ProjectQueries,
  ) {}

  async execute({ project, forkedFromId, actor }: CreateForkRelation): Promise<number> {
    const row = await this.projects.require(project, actor, ADMINISTRATORS_ONLY);
    const [source] = await this.projects.existing([forkedFromId]);
    if (!source) throw new NotFound('Source Project');
    const now = this.clock.now();
    await decideOnProject(this.store, row.id, (s) => createForkRelation(s, forkedFromId, now));
    return row.id;
  }
}
