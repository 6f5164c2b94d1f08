import { ACCESS } from '@app/groups';
import { Clock, EventStore } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { decideOnProject } from '../projects/project-writes';
import type { AuthorizedProject } from '../projects/project.queries';
import { protectTag, type ProtectedTagRule } from './protected-tag';

/**
 * `POST /projects/:id/protected_tags`: a rule for an exact name or a wildcard (409 when the name has one).
 * Maintainers, owners and administrators only (GitLab's `admin_project`), decided by the route. Answers the project's id.
 */
export class CreateProtectedTag extends Command<number> {
  constructor(
    /** Required at maintainer by the route, before it validated the parameters (GitLab's order). */
    readonly project: AuthorizedProject<typeof ACCESS.maintainer>,
    readonly rule: ProtectedTagRule,
  ) {
    super();
  }
}

@CommandHandler(CreateProtectedTag)
export class CreateProtectedTagHandler implements ICommandHandler<CreateProtectedTag> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async execute({ project: row, rule }: CreateProtectedTag): Promise<number> {
    const now = this.clock.now();
    await decideOnProject(this.store, row.id, (s) => protectTag(s, rule, now));
    return row.id;
  }
}
