import type { ACCESS } from '@app/groups';
import { Clock, EventStore } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { AuthorizedProject } from '../projects/project.queries';
import { changeReleaseLink, type ReleaseLinkValues } from './release-link';
import { releaseDecider, releaseStream } from './release-stream';

/** `PUT /projects/:id/releases/:tag_name/assets/links/:link_id`: developers and up. */
export class UpdateReleaseLink extends Command<void> {
  constructor(
    readonly project: AuthorizedProject<typeof ACCESS.developer>,
    readonly tagName: string,
    readonly linkId: number,
    readonly changes: Partial<ReleaseLinkValues>,
  ) {
    super();
  }
}

@CommandHandler(UpdateReleaseLink)
export class UpdateReleaseLinkHandler implements ICommandHandler<UpdateReleaseLink> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async execute({ project, tagName, linkId, changes }: UpdateReleaseLink): Promise<void> {
    const now = this.clock.now();
    await this.store.decide(releaseStream(project.id, tagName), releaseDecider, (s) =>
      changeReleaseLink(project.id, s, tagName, linkId, changes, now),
    );
  }
}
