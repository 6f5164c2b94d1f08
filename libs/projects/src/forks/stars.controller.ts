import { Authenticated, CurrentActor, type Actor } from '@app/platform';
import { Controller, Param, Post } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ProjectQueries } from '../projects/project.queries';
import { ProjectPresenter } from '../projects/project-presenter';
import { StarProject } from './star-project.command';
import { UnstarProject } from './unstar-project.command';

/** Starring: GitLab answers 201 with the project (its new `star_count`), or 304 with no body when nothing changes. */
@Controller('projects/:id')
export class ProjectStarsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly projects: ProjectQueries,
    private readonly presenter: ProjectPresenter,
  ) {}

  private async present(id: number, actor: Actor) {
    return this.presenter.one(await this.projects.getVisible(id, actor), actor, {});
  }

  @Post('star')
  @Authenticated()
  async star(@Param('id') id: string, @CurrentActor() actor: Actor) {
    return this.present(await this.commands.execute(new StarProject(id, actor)), actor);
  }

  @Post('unstar')
  @Authenticated()
  async unstar(@Param('id') id: string, @CurrentActor() actor: Actor) {
    return this.present(await this.commands.execute(new UnstarProject(id, actor)), actor);
  }
}
