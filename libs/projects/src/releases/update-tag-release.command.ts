import { Clock, type Actor } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { updateRelease, type TagRelease } from './release';
import { TagReleaseWrites } from './tag-release-writes';

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
    private readonly writes: TagReleaseWrites,
    private readonly clock: Clock,
  ) {}

  execute({ project, release, actor }: UpdateTagRelease): Promise<TagRelease> {
    const now = this.clock.now();
    return this.writes.decide(project, release, actor, (projectId, s, tagExists) =>
      updateRelease(projectId, s, release, tagExists, now),
    );
  }
}
