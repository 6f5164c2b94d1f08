import { ACCESS } from '@app/groups';
import { Clock, EventStore, type Actor } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { decideOnProject } from '../projects/project-writes';
import { ProjectQueries } from '../projects/project.queries';
import { protectBranchLegacy } from './protected-branch';

/**
 * `PUT /projects/:id/repository/branches/:branch/protect`: creates the rule of the branch's name, or updates the flags given on an existing one (GitLab's LegacyApiCreateService / LegacyApiUpdateService).
 * Masters (maintainers), owners and administrators only (GitLab's `admin_project`). Answers the project's id.
 */
export class ProtectRepositoryBranch extends Command<number> {
  constructor(
    readonly project: string | number,
    readonly name: string,
    readonly flags: { developersCanPush?: boolean; developersCanMerge?: boolean },
    readonly actor: Actor | undefined,
  ) {
    super();
  }
}

@CommandHandler(ProtectRepositoryBranch)
export class ProtectRepositoryBranchHandler implements ICommandHandler<ProtectRepositoryBranch> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly projects: ProjectQueries,
  ) {}

  async execute({ project, name, flags, actor }: ProtectRepositoryBranch): Promise<number> {
    const row = await this.projects.require(project, actor, ACCESS.maintainer);
    const now = this.clock.now();
    await decideOnProject(this.store, row.id, (s) => protectBranchLegacy(s, name, flags, now));
    return row.id;
  }
}
