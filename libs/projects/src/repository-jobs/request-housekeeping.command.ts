import { ACCESS } from '@app/groups';
import { Clock, EventStore, type Actor } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { decideOnProject } from '../projects/project-writes';
import { ProjectQueries } from '../projects/project.queries';
import { requestHousekeeping } from './housekeeping';

/** `POST /projects/:id/housekeeping`: owners and administrators; 409 while one is pending. Answers the project's id. */
export class RequestHousekeeping extends Command<number> {
  constructor(
    readonly project: string | number,
    readonly actor: Actor,
  ) {
    super();
  }
}

@CommandHandler(RequestHousekeeping)
export class RequestHousekeepingHandler implements ICommandHandler<RequestHousekeeping> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly projects: ProjectQueries,
  ) {}

  async execute({ project, actor }: RequestHousekeeping): Promise<number> {
    const row = await this.projects.require(project, actor, ACCESS.owner);
    await decideOnProject(this.store, row.id, (s) => requestHousekeeping(s, this.clock.now()));
    return row.id;
  }
}
