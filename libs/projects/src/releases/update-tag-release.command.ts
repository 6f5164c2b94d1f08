import { GitRepositories, projectRepo } from '@app/git';
import { Clock, EventStore, Forbidden, type Actor } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { ProjectAccessPolicy } from '../access/project-access-policy';
import { projectDecider } from '../projects/project';
import { updateRelease, type TagRelease } from './release';
import { ProjectQueries } from '../projects/project.queries';

/**
 * `PUT /projects/:id/repository/tags/:tag_name/release` (404 when the tag has none). Access as
 * `CreateTagRelease`. Answers the release as GitLab presents it.
 */
export class UpdateTagRelease extends Command<TagRelease> {
  constructor(
    readonly project: string | number,
    readonly release: TagRelease,
    readonly actor: Actor | undefined,
  ) {
    super();
  }
}

@CommandHandler(UpdateTagRelease)
export class UpdateTagReleaseHandler implements ICommandHandler<UpdateTagRelease> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly projects: ProjectQueries,
    private readonly git: GitRepositories,
  ) {}

  async execute({ project, release, actor }: UpdateTagRelease): Promise<TagRelease> {
    const row = await this.projects.getVisible(project, actor);
    if (ProjectAccessPolicy.pushCodeRefusal(row, actor)) throw new Forbidden();
    // Asked of git before the decision, outside the transaction: no git work runs inside one.
    const tagExists = (await this.git.tag(projectRepo(row.id), release.tagName)) !== undefined;
    const now = this.clock.now();
    await this.store.decide(`project-${row.id}`, projectDecider, (s) => updateRelease(s, release, tagExists, now));
    return release;
  }
}
