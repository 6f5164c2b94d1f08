import { ACCESS } from '@app/groups';
import { Clock, EventStore } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { decideOnProject } from '../projects/project-writes';
import type { AuthorizedProject } from '../projects/project.queries';
import { unprotectBranch } from './protected-branch';

/**
 * `DELETE /projects/:id/protected_branches/:name`: removes the rule of that name (404 `Not found` without one).
 * Masters (maintainers), owners and administrators only (GitLab's `admin_project`), decided by the route. Answers the project's id.
 */
export class RemoveProtectedBranch extends Command<number> {
  constructor(
    /** Required at maintainer by the route, before it validated the parameters (GitLab's order). */
    readonly project: AuthorizedProject<typeof ACCESS.maintainer>,
    readonly name: string,
  ) {
    super();
  }
}

@CommandHandler(RemoveProtectedBranch)
export class RemoveProtectedBranchHandler implements ICommandHandler<RemoveProtectedBranch> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async execute({ project: row, name }: RemoveProtectedBranch): Promise<number> {
    const now = this.clock.now();
    await decideOnProject(this.store, row.id, (s) => unprotectBranch(s, name, now));
    return row.id;
  }
}
