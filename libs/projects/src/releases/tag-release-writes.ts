import { GitRepositories, projectRepo } from '@app/git';
import { EventStore, Forbidden, type Actor } from '@app/platform';
import { Injectable } from '@nestjs/common';
import { ProjectAccessPolicy } from '../access/project-access-policy';
import { ProjectQueries } from '../projects/project.queries';
import type { TagRelease } from './release';
import { releaseDecider, releaseStream, type Release, type ReleaseStreamEvent } from './release-stream';

/**
 * What creating and updating a tag's release notes share: GitLab's `authorize_push_project`
 * (developers and up, administrators pass, never on an archived project, else `403 Forbidden`), then
 * whether the tag exists, asked of git before the decision and outside the transaction (no git work
 * runs inside one), then the decision on the release's stream. Answers the release as given.
 */
@Injectable()
export class TagReleaseWrites {
  constructor(
    private readonly store: EventStore,
    private readonly projects: ProjectQueries,
    private readonly git: GitRepositories,
  ) {}

  async decide(
    project: string | number,
    release: TagRelease,
    actor: Actor | undefined,
    decision: (projectId: number, s: Release, tagExists: boolean) => ReleaseStreamEvent[],
  ): Promise<TagRelease> {
    const row = await this.projects.getVisible(project, actor);
    if (ProjectAccessPolicy.pushCodeRefusal(row, actor)) throw new Forbidden();
    const tagExists = (await this.git.tag(projectRepo(row.id), release.tagName)) !== undefined;
    await this.store.decide(releaseStream(row.id, release.tagName), releaseDecider, (s) =>
      decision(row.id, s, tagExists),
    );
    return release;
  }
}
