import { GitRepositories, projectRepo } from '@app/git';
import { Clock, EventStore, Forbidden, type Actor } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { ProjectAccessPolicy } from '../access/project-access-policy';
import { projectDecider } from '../projects/project';
import { createRelease, type TagRelease } from './release';
import { ProjectQueries } from '../projects/project.queries';

/**
 * `POST /projects/:id/repository/tags/:tag_name/release` (409 when the tag has one). GitLab's
 * `authorize_push_project`: developers and up (administrators pass), never on an archived project,
 * else `403 Forbidden`. Answers the release as GitLab presents it (the notes as given).
 */
export class CreateTagRelease extends Command<TagRelease> {
  constructor(
    readonly project: string | number,
    readonly release: TagRelease,
    readonly actor: Actor | undefined,
  ) {
    super();
  }
}

@CommandHandler(CreateTagRelease)
export class CreateTagReleaseHandler implements ICommandHandler<CreateTagRelease> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly projects: ProjectQueries,
    private readonly git: GitRepositories,
  ) {}

  async execute({ project, release, actor }: CreateTagRelease): Promise<TagRelease> {
    const row = await this.projects.getVisible(project, actor);
    if (ProjectAccessPolicy.pushCodeRefusal(row, actor)) throw new Forbidden();
    // Asked of git before the decision, outside the transaction: no git work runs inside one.
    const tagExists = (await this.git.tag(projectRepo(row.id), release.tagName)) !== undefined;
    const now = this.clock.now();
    await this.store.decide(`project-${row.id}`, projectDecider, (s) => createRelease(s, release, tagExists, now));
    return release;
  }
}
