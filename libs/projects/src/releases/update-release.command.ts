import { GitRepositories, projectRepo } from '@app/git';
import type { ACCESS } from '@app/groups';
import { Clock, EventStore } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { AuthorizedProject } from '../projects/project.queries';
import { changeRelease, type ReleaseChanges } from './release';
import { releaseDecider, releaseStream } from './release-stream';

/** `PUT /projects/:id/releases/:tag_name` (`Releases::UpdateService`): developers and up. */
export class UpdateRelease extends Command<void> {
  constructor(
    readonly project: AuthorizedProject<typeof ACCESS.developer>,
    readonly tagName: string,
    readonly changes: ReleaseChanges,
  ) {
    super();
  }
}

@CommandHandler(UpdateRelease)
export class UpdateReleaseHandler implements ICommandHandler<UpdateRelease> {
  constructor(
    private readonly store: EventStore,
    private readonly git: GitRepositories,
    private readonly clock: Clock,
  ) {}

  async execute({ project, tagName, changes }: UpdateRelease): Promise<void> {
    const tagExists = (await this.git.tag(projectRepo(project.id), tagName)) !== undefined;
    const now = this.clock.now();
    await this.store.decide(releaseStream(project.id, tagName), releaseDecider, (s) =>
      changeRelease(project.id, s, tagName, changes, tagExists, now),
    );
  }
}
