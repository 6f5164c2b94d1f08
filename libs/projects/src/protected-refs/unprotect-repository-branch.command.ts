import { ACCESS } from '@app/groups';
import { Clock, EventStore, type Actor } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { decideOnProject } from '../projects/project-writes';
import { ProjectQueries } from '../projects/project.queries';
import { unprotectBranchLegacy } from './protected-branch';

/**
 * `PUT /projects/:id/repository/branches/:branch/unprotect`: removes the rule of exactly that name if there is one.
 * Masters (maintainers), owners and administrators only (GitLab's `admin_project`). Answers the project's id.
 */
export class UnprotectRepositoryBranch extends Command<number> {
  constructor(
    readonly project: string | number,
    readonly name: string,
    readonly actor: Actor | undefined,
  ) {
    super();
  }
}

@CommandHandler(UnprotectRepositoryBranch)
export class UnprotectRepositoryBranchHandler implements ICommandHandler<UnprotectRepositoryBranch> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly projects: ProjectQueries,
  ) {}

  async execute({ project, name, actor }: UnprotectRepositoryBranch): Promise<number> {
    const row = await this.projects.require(project, actor, ACCESS.maintainer);
    const now = this.clock.now();
    await decideOnProject(this.store, row.id, (s) => unprotectBranchLegacy(s, name, now));
    return row.id;
  }
}
