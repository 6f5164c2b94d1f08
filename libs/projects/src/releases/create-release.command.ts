import { GitRepositories, projectRepo } from '@app/git';
import type { ACCESS } from '@app/groups';
import { Clock, EventStore } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { AuthorizedProject } from '../projects/project.queries';
import { publishRelease, type NewRelease } from './release';
import { addLinksOfNewRelease, type ReleaseLinkValues } from './release-link';
import { releaseDecider, releaseStream } from './release-stream';

/**
 * `POST /projects/:id/releases` (11.7 `Releases::CreateService`), once the route made the tag a
 * missing one needed from `ref`: the release and the links given with it, in one transaction.
 * Developers and up (the route's `authorize_create_release!`).
 */
export class CreateRelease extends Command<void> {
  constructor(
    readonly project: AuthorizedProject<typeof ACCESS.developer>,
    readonly release: NewRelease,
    readonly links: readonly ReleaseLinkValues[],
  ) {
    super();
  }
}

@CommandHandler(CreateRelease)
export class CreateReleaseHandler implements ICommandHandler<CreateRelease> {
  constructor(
    private readonly store: EventStore,
    private readonly git: GitRepositories,
    private readonly clock: Clock,
  ) {}

  async execute({ project, release, links }: CreateRelease): Promise<void> {
    // Asked of git outside the transaction: no git work runs inside one.
    const tagExists = (await this.git.tag(projectRepo(project.id), release.tagName)) !== undefined;
    // One after another, so the ids follow the links' order: links made together share a creation
    // time, and the newest-first order falls back on the id, as GitLab's later-saved link comes first.
    const linkIds: number[] = [];
    for (const _link of links) linkIds.push(await this.store.nextId('release_link_id_seq'));
    const now = this.clock.now();
    await this.store.decide(releaseStream(project.id, release.tagName), releaseDecider, (s) => [
      ...publishRelease(project.id, s, release, tagExists, now),
      ...addLinksOfNewRelease(project.id, release.tagName, links, linkIds, now),
    ]);
  }
}
