import { GitRepositories, projectRepo } from '@app/git';
import { Clock, EventStore, Forbidden, type Actor } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { ProjectAccessPolicy } from '../access/project-access-policy';
import { projectDecider } from '../projects/project';
import { createRelease, removeTagRelease, updateRelease, type TagRelease } from './release';
import { ProjectQueries } from '../projects/project.queries';

/**
 * `POST` (`create`) or `PUT` (`update`) `/projects/:id/repository/tags/:tag_name/release`. GitLab's
 * `authorize_push_project`: developers and up (administrators pass), never on an archived project,
 * else `403 Forbidden`. Answers the release as GitLab presents it (the notes as given).
 */
export class ChangeTagRelease extends Command<TagRelease> {
  constructor(
    readonly project: string | number,
    readonly kind: 'create' | 'update',
    readonly release: TagRelease,
    readonly actor: Actor | undefined,
  ) {
    super();
  }
}

@CommandHandler(ChangeTagRelease)
export class ChangeTagReleaseHandler implements ICommandHandler<ChangeTagRelease> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly projects: ProjectQueries,
    private readonly git: GitRepositories,
  ) {}

  async execute({ project, kind, release, actor }: ChangeTagRelease): Promise<TagRelease> {
    const row = await this.projects.getVisible(project, actor);
    if (ProjectAccessPolicy.pushCodeRefusal(row, actor)) throw new Forbidden();
    // Asked of git before the decision, outside the transaction: no git work runs inside one.
    const tagExists = (await this.git.tag(projectRepo(row.id), release.tagName)) !== undefined;
    const now = this.clock.now();
    await this.store.decide(`project-${row.id}`, projectDecider, (s) =>
      kind === 'create' ? createRelease(s, release, tagExists, now) : updateRelease(s, release, tagExists, now),
    );
    return release;
  }
}

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
      `project-${projectId}`,
      projectDecider,
      (s) => removeTagRelease(s, tagName, now),
      { actorId: actor.id, tokenId: actor.tokenId, impersonatedBy: actor.impersonatedBy },
    );
    return events.length > 0;
  }
}
