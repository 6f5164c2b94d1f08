import { ACCESS } from '@app/groups';
import { Clock, EventStore, type Actor } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { updateMember } from './project-members';
import { ProjectQueries, type ProjectRow } from '../projects/project.queries';
import { decideOnProject, refuseToChangePersonalOwner } from '../projects/project-writes';

/** GitLab's `PUT /projects/:id/members/:user_id`. */
export class UpdateProjectMember extends Command<ProjectRow> {
  constructor(
    readonly project: string | number,
    readonly userId: number,
    readonly accessLevel: number,
    readonly expiresAt: string | null,
    readonly actor: Actor,
  ) {
    super();
  }
}

/** Answers the project (404 invisible, 403 below maintainer or for the personal project's owner). */
@CommandHandler(UpdateProjectMember)
export class UpdateProjectMemberHandler implements ICommandHandler<UpdateProjectMember> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly projects: ProjectQueries,
  ) {}

  async execute({ project, userId, accessLevel, expiresAt, actor }: UpdateProjectMember): Promise<ProjectRow> {
    const row = await this.projects.require(project, actor, ACCESS.maintainer);
    refuseToChangePersonalOwner(row, userId);
    const now = this.clock.now();
    await decideOnProject(this.store, row.id, (s) => updateMember(s, userId, accessLevel, expiresAt, now));
    return row;
  }
}
