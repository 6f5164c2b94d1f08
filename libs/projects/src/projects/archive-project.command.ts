import { ACCESS } from '@app/groups';
import { Clock, EventStore, type Actor } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { archive } from './project';
import { ProjectQueries, type ProjectRow } from './project.queries';
import { decideOnProject } from './project-writes';

/** GitLab's `POST /projects/:id/archive` (`archive_project`, an owner's right). */
export class ArchiveProject extends Command<ProjectRow> {
  constructor(
    readonly project: string | number,
    readonly actor: Actor,
  ) {
    super();
  }
}

/** Answers the project as it was before the change (404 invisible, 403 below owner; administrators pass). */
@CommandHandler(ArchiveProject)
export class ArchiveProjectHandler implements ICommandHandler<ArchiveProject> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly projects: ProjectQueries,
  ) {}

  async execute({ project, actor }: ArchiveProject): Promise<ProjectRow> {
    const row = await this.projects.require(project, actor, ACCESS.owner);
    const now = this.clock.now();
    await decideOnProject(this.store, row.id, (s) => archive(s, now));
    return row;
  }
}
