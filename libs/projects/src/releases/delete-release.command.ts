import { GitRepositories, projectRepo } from '@app/git';
import type { ACCESS } from '@app/groups';
import { Clock, EventStore } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { AuthorizedProject } from '../projects/project.queries';
import { deleteRelease } from './release';
import { releaseDecider, releaseStream } from './release-stream';

/**
 * `DELETE /projects/:id/releases/:tag_name` (`Releases::DestroyService`): maintainers and up, as
 * GitLab's documentation of the route says; the tag stays.
 */
export class DeleteRelease extends Command<void> {
  constructor(
    readonly project: AuthorizedProject<typeof ACCESS.maintainer>,
    readonly tagName: string,
  ) {
    super();
  }
}

@CommandHandler(DeleteRelease)
export class DeleteReleaseHandler implements ICommandHandler<DeleteRelease> {
  constructor(
    private readonly store: EventStore,
    private readonly git: GitRepositories,
    private readonly clock: Clock,
  ) {}

  async execute({ project, tagName }: DeleteRelease): Promise<void> {
    const tagExists = (await this.git.tag(projectRepo(project.id), tagName)) !== undefined;
    const now = this.clock.now();
    await this.store.decide(releaseStream(project.id, tagName), releaseDecider, (s) =>
      deleteRelease(project.id, s, tagName, tagExists, now),
    );
  }
}
