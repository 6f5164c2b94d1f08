import { ACCESS } from '@app/groups';
import { Clock, EventStore } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { decideOnProject } from '../projects/project-writes';
import type { AuthorizedProject } from '../projects/project.queries';
import { unprotectBranchLegacy } from './protected-branch';

/**
 * `PUT /projects/:id/repository/branches/:branch/unprotect`: removes the rule of exactly that name if there is one.
 * Masters (maintainers), owners and administrators only (GitLab's `admin_project`), decided by the route. Answers the project's id.
 */
export class UnprotectRepositoryBranch extends Command<number> {
  constructor(
    /** Required at maintainer by the route, after it validated the parameters (10.x's order there). */
    readonly project: AuthorizedProject<typeof ACCESS.maintainer>,
    readonly name: string,
  ) {
    super();
  }
}

@CommandHandler(UnprotectRepositoryBranch)
export class UnprotectRepositoryBranchHandler implements ICommandHandler<UnprotectRepositoryBranch> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async execute({ project: row, name }: UnprotectRepositoryBranch): Promise<number> {
    const now = this.clock.now();
    await decideOnProject(this.store, row.id, (s) => unprotectBranchLegacy(s, name, now));
    return row.id;
  }
}
