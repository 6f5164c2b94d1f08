import { ACCESS } from '@app/groups';
import { Clock, EventStore } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { decideOnProject } from '../projects/project-writes';
import type { AuthorizedProject } from '../projects/project.queries';
import { unprotectTag } from './protected-tag';

/**
 * `DELETE /projects/:id/protected_tags/:name`: removes the rule of that name (404 `Not found` without one).
 * Maintainers, owners and administrators only (GitLab's `admin_project`), decided by the route. Answers the project's id.
 */
export class RemoveProtectedTag extends Command<number> {
  constructor(
    /** Required at maintainer by the route (GitLab's `before { authorize_admin_project }`). */
    readonly project: AuthorizedProject<typeof ACCESS.maintainer>,
    readonly name: string,
  ) {
    super();
  }
}

@CommandHandler(RemoveProtectedTag)
export class RemoveProtectedTagHandler implements ICommandHandler<RemoveProtectedTag> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async execute({ project: row, name }: RemoveProtectedTag): Promise<number> {
    const now = this.clock.now();
    await decideOnProject(this.store, row.id, (s) => unprotectTag(s, name, now));
    return row.id;
  }
}
