import { ACCESS } from '@app/groups';
import { Clock, EventStore, NotFound, type Actor } from '@app/platform';
import { UserQueries } from '@app/users';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { addMember } from './project-members';
import { ProjectQueries, type ProjectRow } from '../projects/project.queries';
import { decideOnProject } from '../projects/project-writes';

/** GitLab's `POST /projects/:id/members`. */
export class AddProjectMember extends Command<ProjectRow> {
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

/** Answers the project (404 invisible, 403 below maintainer, 404 `User` unknown). */
@CommandHandler(AddProjectMember)
export class AddProjectMemberHandler implements ICommandHandler<AddProjectMember> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly projects: ProjectQueries,
    private readonly users: UserQueries,
  ) {}

  async execute({ project, userId, accessLevel, expiresAt, actor }: AddProjectMember): Promise<ProjectRow> {
    const row = await this.projects.require(project, actor, ACCESS.maintainer);
    const now = this.clock.now();
    if (!(await this.users.find(userId))) throw new NotFound('User');
    await decideOnProject(this.store, row.id, (s) => addMember(s, userId, accessLevel, expiresAt, now));
    return row;
  }
}
