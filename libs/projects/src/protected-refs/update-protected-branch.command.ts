import { ACCESS } from '@app/groups';
import { Clock, EventStore } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { decideOnProject } from '../projects/project-writes';
import type { AuthorizedProject } from '../projects/project.queries';
import { updateProtectedBranch } from './protected-branch';

/**
 * `PATCH /projects/:id/protected_branches/:name`: changes `allow_force_push` of the rule of that exact
 * name (404 `Not found` without one). Maintainers, owners and administrators only, decided by the route.
 */
export class UpdateProtectedBranch extends Command<number> {
  constructor(
    /** Required at maintainer by the route, before it validated the parameters (GitLab's order). */
    readonly project: AuthorizedProject<typeof ACCESS.maintainer>,
    readonly name: string,
    readonly changes: { allowForcePush?: boolean },
  ) {
    super();
  }
}

@CommandHandler(UpdateProtectedBranch)
export class UpdateProtectedBranchHandler implements ICommandHandler<UpdateProtectedBranch> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async execute({ project: row, name, changes }: UpdateProtectedBranch): Promise<number> {
    const now = this.clock.now();
    await decideOnProject(this.store, row.id, (s) => updateProtectedBranch(s, name, changes, now));
    return row.id;
  }
}
