import { ACCESS } from '@app/groups';
import { Clock, EventStore, type Actor } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { unshare } from './project-sharing';
import { ProjectQueries, type ProjectRow } from '../projects/project.queries';
import { decideOnProject } from '../projects/project-writes';

/** GitLab's `DELETE /projects/:id/share/:group_id`. */
export class UnshareProject extends Command<ProjectRow> {
  constructor(
    readonly project: string | number,
    readonly groupId: number,
    readonly actor: Actor,
  ) {
    super();
  }
}

/** Answers the project (404 invisible, 403 below maintainer). */
@CommandHandler(UnshareProject)
export class UnshareProjectHandler implements ICommandHandler<UnshareProject> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly projects: ProjectQueries,
  ) {}

  async execute({ project, groupId, actor }: UnshareProject): Promise<ProjectRow> {
    const row = await this.projects.require(project, actor, ACCESS.maintainer);
    const now = this.clock.now();
    await decideOnProject(this.store, row.id, (s) => unshare(s, groupId, now));
    return row;
  }
}
