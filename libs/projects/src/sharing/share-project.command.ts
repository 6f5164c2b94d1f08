import { ACCESS, NamespaceAccess } from '@app/groups';
import { Clock, EventStore, type Actor } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { share } from './project-sharing';
import { ProjectQueries, type ProjectRow } from '../projects/project.queries';
import { decideOnProject } from '../projects/project-writes';

/** GitLab's `POST /projects/:id/share`: the group's members get up to `groupAccess` on the project. */
export class ShareProject extends Command<ProjectRow> {
  constructor(
    readonly project: string | number,
    readonly groupId: number,
    readonly groupAccess: number,
    readonly expiresAt: string | null,
    readonly actor: Actor,
  ) {
    super();
  }
}

/** Answers the project (404 invisible, 403 below maintainer, 404 for a group the caller cannot see). */
@CommandHandler(ShareProject)
export class ShareProjectHandler implements ICommandHandler<ShareProject> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly projects: ProjectQueries,
    private readonly namespaces: NamespaceAccess,
  ) {}

  async execute({ project, groupId, groupAccess, expiresAt, actor }: ShareProject): Promise<ProjectRow> {
    const row = await this.projects.require(project, actor, ACCESS.maintainer);
    const now = this.clock.now();
    await this.namespaces.visibleGroup(groupId, actor);
    const ancestry = await this.namespaces.ancestorIds(row.namespace_id);
    const linkId = await this.store.nextId('project_group_link_id_seq');
    await decideOnProject(this.store, row.id, (s) =>
      share(s, { linkId, groupId, groupAccess, expiresAt }, ancestry, now),
    );
    return row;
  }
}
