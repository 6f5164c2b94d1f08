import type { ACCESS } from '@app/groups';
import { Clock, EventStore } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { AuthorizedProject } from '../projects/project.queries';
import { removeReleaseLink } from './release-link';
import { releaseDecider, releaseStream } from './release-stream';

/** `DELETE /projects/:id/releases/:tag_name/assets/links/:link_id`: developers and up. */
export class RemoveReleaseLink extends Command<void> {
  constructor(
    readonly project: AuthorizedProject<typeof ACCESS.developer>,
    readonly tagName: string,
    readonly linkId: number,
  ) {
    super();
  }
}

@CommandHandler(RemoveReleaseLink)
export class RemoveReleaseLinkHandler implements ICommandHandler<RemoveReleaseLink> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async execute({ project, tagName, linkId }: RemoveReleaseLink): Promise<void> {
    const now = this.clock.now();
    await this.store.decide(releaseStream(project.id, tagName), releaseDecider, (s) =>
      removeReleaseLink(project.id, s, tagName, linkId, now),
    );
  }
}
