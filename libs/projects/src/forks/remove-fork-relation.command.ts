import { ACCESS } from '@app/groups';
import { Clock, EventStore, type Actor } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { decideOnProject } from '../projects/project-writes';
import { ProjectQueries } from '../projects/project.queries';
import { removeForkRelation } from './fork';

/** `DELETE /projects/:id/fork`: owners (and administrators) undo a project's fork relation. Answers the project's id. */
export class RemoveForkRelation extends Command<number> {
  constructor(
    readonly project: string | number,
    readonly actor: Actor,
  ) {
    super();
  }
}

/** 304 when the project is no fork. */
@CommandHandler(RemoveForkRelation)
export class RemoveForkRelationHandler implements ICommandHandler<RemoveForkRelation> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly projects: ProjectQueries,
  ) {}

  async execute({ project, actor }: RemoveForkRelation): Promise<number> {
    const row = await this.projects.require(project, actor, ACCESS.owner);
    const now = this.clock.now();
    await decideOnProject(this.store, row.id, (s) => removeForkRelation(s, now));
    return row.id;
  }
}
