import type { ACCESS } from '@app/groups';
import { Clock, EventStore } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { AuthorizedProject } from '../projects/project.queries';
import { addReleaseLink, type ReleaseLinkValues } from './release-link';
import { releaseDecider, releaseStream } from './release-stream';

/** `POST /projects/:id/releases/:tag_name/assets/links`: developers and up. Answers the new link's id. */
export class AddReleaseLink extends Command<number> {
  constructor(
    readonly project: AuthorizedProject<typeof ACCESS.developer>,
    readonly tagName: string,
    readonly link: ReleaseLinkValues,
  ) {
    super();
  }
}

@CommandHandler(AddReleaseLink)
export class AddReleaseLinkHandler implements ICommandHandler<AddReleaseLink> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async execute({ project, tagName, link }: AddReleaseLink): Promise<number> {
    const linkId = await this.store.nextId('release_link_id_seq');
    const now = this.clock.now();
    await this.store.decide(releaseStream(project.id, tagName), releaseDecider, (s) =>
      addReleaseLink(project.id, s, tagName, linkId, link, now),
    );
    return linkId;
  }
}
