import { Clock, EventStore, type Actor } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { setCustomAttribute } from './project';
import { ProjectQueries, type ProjectRow } from './project.queries';
import { ADMINISTRATORS_ONLY, decideOnProject } from './project-writes';

/** GitLab's `PUT /projects/:id/custom_attributes/:key`. */
export class SetProjectCustomAttribute extends Command<ProjectRow> {
  constructor(
    readonly project: string | number,
    readonly key: string,
    readonly value: string,
    readonly actor: Actor,
  ) {
    super();
  }
}

/** Answers the project (404 invisible, 403 for anyone but administrators). */
@CommandHandler(SetProjectCustomAttribute)
export class SetProjectCustomAttributeHandler implements ICommandHandler<SetProjectCustomAttribute> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly projects: ProjectQueries,
  ) {}

  async execute({ project, key, value, actor }: SetProjectCustomAttribute): Promise<ProjectRow> {
    const row = await this.projects.require(project, actor, ADMINISTRATORS_ONLY);
    const now = this.clock.now();
    await decideOnProject(this.store, row.id, (s) => setCustomAttribute(s, key, value, now));
    return row;
  }
}
