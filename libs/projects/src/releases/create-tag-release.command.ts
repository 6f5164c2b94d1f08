import { Clock, type Actor } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { createRelease, type TagRelease } from './release';
import { TagReleaseWrites } from './tag-release-writes';

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
    private readonly writes: TagReleaseWrites,
    private readonly clock: Clock,
  ) {}

  execute({ project, release, actor }: CreateTagRelease): Promise<TagRelease> {
    const now = this.clock.now();
    return this.writes.decide(project, release, actor, (projectId, s, tagExists) =>
      createRelease(projectId, s, release, tagExists, now),
    );
  }
}
