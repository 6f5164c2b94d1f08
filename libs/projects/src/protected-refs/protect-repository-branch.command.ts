import { ACCESS } from '@app/groups';
import { Clock, EventStore } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { decideOnProject } from '../projects/project-writes';
import type { AuthorizedProject } from '../projects/project.queries';
import { protectBranchLegacy } from './protected-branch';

/**
 * `PUT /projects/:id/repository/branches/:branch/protect`: creates the rule of the branch's name, or updates the flags given on an existing one (GitLab's LegacyApiCreateService / LegacyApiUpdateService).
 * Masters (maintainers), owners and administrators only (GitLab's `admin_project`), decided by the route. Answers the project's id.
 */
export class ProtectRepositoryBranch extends Command<number> {
  constructor(
    /** Required at maintainer by the route, after it validated the parameters (10.x's order there). */
    readonly project: AuthorizedProject<typeof ACCESS.maintainer>,
    readonly name: string,
    readonly flags: { developersCanPush?: boolean; developersCanMerge?: boolean },
  ) {
    super();
  }
}

@CommandHandler(ProtectRepositoryBranch)
export class ProtectRepositoryBranchHandler implements ICommandHandler<ProtectRepositoryBranch> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async execute({ project: row, name, flags }: ProtectRepositoryBranch): Promise<number> {
    const now = this.clock.now();
    await decideOnProject(this.store, row.id, (s) => protectBranchLegacy(s, name, flags, now));
    return row.id;
  }
}
