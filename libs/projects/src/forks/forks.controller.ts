import {
  AdminOnly,
  Authenticated,
  CurrentActor,
  GitlabParams,
  Page,
  pageParams,
  RouteIntPipe,
  type Actor,
} from '@app/platform';
import { Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { IsOptional, IsString } from 'class-validator';
import { Transform } from 'class-transformer';
import { ForkProject } from './fork-project.command';
import { CreateForkRelation } from './create-fork-relation.command';
import { RemoveForkRelation } from './remove-fork-relation.command';
import { ProjectQueries } from '../projects/project.queries';
import { ProjectPresenter } from '../projects/project-presenter';
import { listFilters } from '../projects/projects.controller';
import { ListProjectsDto } from '../projects/projects.dto';

export class ForkDto {
  /** A namespace id or full path; numbers in JSON are read as ids. */
  @IsOptional()
  @Transform(({ value }: { value: unknown }) => (typeof value === 'number' ? String(value) : value))
  @IsString()
  namespace?: string;
}

@Controller('projects/:id')
export class ForksController {
  constructor(
    private readonly commands: CommandBus,
    private readonly projects: ProjectQueries,
    private readonly presenter: ProjectPresenter,
  ) {}

  /** GitLab answers these writes with the plain Project entity (no `permissions`), admin fields included. */
  private async present(id: number, actor: Actor) {
    return this.presenter.one(await this.projects.getVisible(id, actor), actor, { adminFields: true });
  }

  /** The project's forks the caller can see, filtered as `GET /projects`. */
  @Get('forks')
  async forks(@Param('id') id: string, @GitlabParams() q: ListProjectsDto, @CurrentActor() actor?: Actor) {
    const project = await this.projects.getVisible(id, actor);
    const page = pageParams(q);
    const { rows, total } = await this.projects.list(
      actor,
      { ...listFilters(q, actor), forkedFromId: project.id },
      page,
    );
    return new Page(
      await this.presenter.page(rows, actor, { simple: q.simple, statistics: q.statistics }),
      total,
      page,
    );
  }

  /** 201 with the new project at once (`import_status` scheduled); the repository follows in a job. */
  @Post('fork')
  @Authenticated()
  async fork(@Param('id') id: string, @GitlabParams() p: ForkDto, @CurrentActor() actor: Actor) {
    return this.present(await this.commands.execute(new ForkProject(id, p.namespace, actor)), actor);
  }

  @Post('fork/:forked_from_id')
  @AdminOnly()
  async relate(
    @Param('id') id: string,
    @Param('forked_from_id', RouteIntPipe) from: number,
    @CurrentActor() actor: Actor,
  ) {
    return this.present(await this.commands.execute(new CreateForkRelation(id, from, actor)), actor);
  }

  /** 204, or 304 when the project is no fork. */
  @Delete('fork')
  @Authenticated()
  @HttpCode(204)
  async unrelate(@Param('id') id: string, @CurrentActor() actor: Actor): Promise<void> {
    await this.commands.execute(new RemoveForkRelation(id, actor));
  }
}
