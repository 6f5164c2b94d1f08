import { ACCESS } from '@app/groups';
import { Clock, EventStore, type Actor } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { decideOnProject } from '../projects/project-writes';
import { ProjectQueries } from '../projects/project.queries';
import { protectBranch, type ProtectedBranchRule } from './protected-branch';

/**
 * `POST /projects/:id/protected_branches`: a rule for an exact name or a wildcard (409 when the name has one).
 * Masters (maintainers), owners and administrators only (GitLab's `admin_project`). Answers the project's id.
 */
export class CreateProtectedBranch extends Command<number> {
  constructor(
    readonly project: string | number,
    readonly rule: ProtectedBranchRule,
    readonly actor: Actor | undefined,
  ) {
    super();
  }
}

@CommandHandler(CreateProtectedBranch)
export class CreateProtectedBranchHandler implements ICommandHandler<CreateProtectedBranch> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly projects: ProjectQueries,
  ) {}

  async execute({ project, rule, actor }: CreateProtectedBranch): Promise<number> {
    const row = await this.projects.require(project, actor, ACCESS.maintainer);
    const now = this.clock.now();
    await decideOnProject(this.store, row.id, (s) => protectBranch(s, rule, now));
    return row.id;
  }
}
