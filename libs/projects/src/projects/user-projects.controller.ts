import { CurrentActor, GitlabParams, NotFound, Page, pageParams, type Actor } from '@app/platform';
import { UserQueries } from '@app/users';
import { Controller, Get, Param } from '@nestjs/common';
import { ProjectQueries } from './project.queries';
import { ProjectPresenter } from './project-presenter';
import { listFilters } from './projects.controller';
import { ListProjectsDto } from './projects.dto';

/** A user's personal projects. */
@Controller()
export class UserProjectsController {
  constructor(
    private readonly projects: ProjectQueries,
    private readonly users: UserQueries,
    private readonly presenter: ProjectPresenter,
  ) {}

  /** A user's personal projects (`:user_id` is an id or a username). */
  @Get('users/:user_id/projects')
  async byUser(@Param('user_id') userId: string, @GitlabParams() q: ListProjectsDto, @CurrentActor() actor?: Actor) {
    const user = await this.users.findByIdOrUsername(userId);
    if (!user) throw new NotFound('User');
    const page = pageParams(q);
    const { rows, total } = await this.projects.list(actor, { ...listFilters(q, actor), ownerId: user.id }, page);
    return new Page(
      await this.presenter.page(rows, actor, { simple: q.simple, statistics: q.statistics }),
      total,
      page,
    );
  }
}
