import { ACCESS } from '@app/groups';
import { Clock, EventStore, type Actor } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { decideOnProject } from '../projects/project-writes';
import { ProjectQueries } from '../projects/project.queries';
import { unprotectBranch } from './protected-branch';

/**
 * `DELETE /projects/:id/protected_branches/:name`: removes the rule of that name (404 `Not found` without one).
 * Masters (maintainers), owners and administrators only (GitLab's `admin_project`). Answers the project's id.
 */
export class RemoveProtectedBranch extends Command<number> {
  constructor(
    readonly project: string | number,
    readonly name: string,
    readonly actor: Actor | undefined,
  ) {
    super();
  }
}

@CommandHandler(RemoveProtectedBranch)
export class RemoveProtectedBranchHandler implements ICommandHandler<RemoveProtectedBranch> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly projects: ProjectQueries,
  ) {}

  async execute({ project, name, actor }: RemoveProtectedBranch): Promise<number> {
    const row = await this.projects.require(project, actor, ACCESS.maintainer);
    const now = this.clock.now();
    await decideOnProject(this.store, row.id, (s) => unprotectBranch(s, name, now));
    return row.id;
  }
}
