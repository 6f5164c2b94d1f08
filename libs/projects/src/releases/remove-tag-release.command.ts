import { Clock, EventStore, type Actor } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { removeTagRelease } from './release';
import { releaseDecider, releaseStream } from './release-stream';

/**
 * Removes a tag's release notes, as GitLab's `Tags::DestroyService` does when the API deletes the tag.
 * For the tag deletion endpoint, after the tag is gone; the caller has checked access. Nothing
 * happens when the tag has no release. Answers whether one was removed.
 */
export class RemoveTagRelease extends Command<boolean> {
  constructor(
    readonly projectId: number,
    readonly tagName: string,
    readonly actor: Pick<Actor, 'id' | 'tokenId' | 'impersonatedBy'>,
  ) {
    super();
  }
}

@CommandHandler(RemoveTagRelease)
export class RemoveTagReleaseHandler implements ICommandHandler<RemoveTagRelease> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async execute({ projectId, tagName, actor }: RemoveTagRelease): Promise<boolean> {
    const now = this.clock.now();
    const events = await this.store.decide(
      releaseStream(projectId, tagName),
      releaseDecider,
      (s) => removeTagRelease(projectId, s, tagName, now),
      { actorId: actor.id, tokenId: actor.tokenId, impersonatedBy: actor.impersonatedBy },
    );
    return events.length > 0;
  }
}
