import { Clock, EventStore, type Actor } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { removeCustomAttribute } from './project';
import { ProjectQueries, type ProjectRow } from './project.queries';
import { ADMINISTRATORS_ONLY, decideOnProject } from './project-writes';

/** GitLab's `DELETE /projects/:id/custom_attributes/:key`. */
export class RemoveProjectCustomAttribute extends Command<ProjectRow> {
  constructor(
    readonly project: string | number,
    readonly key: string,
    readonly actor: Actor,
  ) {
    super();
  }
}

/** Answers the project (404 invisible, 403 for anyone but administrators). */
@CommandHandler(RemoveProjectCustomAttribute)
export class RemoveProjectCustomAttributeHandler implements ICommandHandler<RemoveProjectCustomAttribute> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly projects: ProjectQueries,
  ) {}

  async execute({ project, key, actor }: RemoveProjectCustomAttribute): Promise<ProjectRow> {
    const row = await this.projects.require(project, actor, ADMINISTRATORS_ONLY);
    const now = this.clock.now();
    await decideOnProject(this.store, row.id, (s) => removeCustomAttribute(s, key, now));
    return row;
  }
}
