import { ACCESS, GroupQueries } from '@app/groups';
import { Clock, EventStore, Forbidden, NotFound, type Actor } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { removeMember } from './project-members';
import { ProjectQueries, type ProjectRow } from '../projects/project.queries';
import { decideOnProject, refuseToChangePersonalOwner } from '../projects/project-writes';

/** GitLab's `DELETE /projects/:id/members/:user_id`: a maintainer removes a member, or a member leaves. */
export class RemoveProjectMember extends Command<ProjectRow> {
  constructor(
    readonly project: string | number,
    readonly userId: number,
    readonly actor: Actor,
  ) {
    super();
  }
}

/** Answers the project (404 invisible or no such member, 403 not allowed). */
@CommandHandler(RemoveProjectMember)
export class RemoveProjectMemberHandler implements ICommandHandler<RemoveProjectMember> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly projects: ProjectQueries,
    private readonly groups: GroupQueries,
  ) {}

  async execute({ project, userId, actor }: RemoveProjectMember): Promise<ProjectRow> {
    // GitLab looks the membership up (404) before asking whether the caller may remove it; any
    // member may leave a project on their own.
    const row = await this.projects.getVisible(project, actor);
    if (!(await this.groups.hasMember('project', row.id, userId))) throw new NotFound();
    if (userId !== actor.id && !actor.isAdmin && row.access < ACCESS.maintainer) throw new Forbidden();
    refuseToChangePersonalOwner(row, userId);
    const now = this.clock.now();
    await decideOnProject(this.store, row.id, (s) => removeMember(s, userId, now));
    return row;
  }
}
