import {
  AdminOnly,
  Authenticated,
  CurrentActor,
  GitlabParams,
  ToInt,
  Page,
  pageParams,
  RouteIntPipe,
  type Actor,
} from '@app/platform';
import { Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { VISIBILITIES, type Visibility } from '@app/groups';
import { IsIn, IsInt, IsOptional, IsString } from 'class-validator';
import { Transform } from 'class-transformer';
import { ForkProject } from './fork-project.command';
import { CreateForkRelation } from './create-fork-relation.command';
import { RemoveForkRelation } from './remove-fork-relation.command';
import { ProjectQueries } from '../projects/project.queries';
import { ProjectPresenter } from '../projects/project-presenter';
import { listFilters } from '../projects/projects.controller';
import { serializeProjectImportStatus } from './project-import-status.serializer';
import { ListProjectsDto } from '../projects/projects.dto';

/**
 * GitLab's fork parameters: the target as `namespace_id`, else `namespace_path`, else the older
 * `namespace` (an id or a full path); the fork's `name`, `path`, `description` and `visibility` in
 * place of the source's (GitLab 13.x/14.x; 10.x knew only `namespace`).
 */
export class ForkDto {
  /** A namespace id or full path; numbers in JSON are read as ids. */
  @IsOptional()
  @Transform(({ value }: { value: unknown }) => (typeof value === 'number' ? String(value) : value))
  @IsString()
  namespace?: string;
  @IsOptional() @ToInt() @IsInt() namespace_id?: number;
  @IsOptional() @IsString() namespace_path?: string;
  @IsOptional() @IsString() name?: string;
  @IsOptional() @IsString() path?: string;
  @IsOptional() @IsString() description?: string;
  @IsOptional() @IsIn(VISIBILITIES) visibility?: Visibility;
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

  /** Anyone who sees the project reads its import status (GitLab: `user_project`, no further check). */
  @Get('import')
  async importStatus(@Param('id') id: string, @CurrentActor() actor?: Actor) {
    const row = await this.projects.getVisible(id, actor);
    return serializeProjectImportStatus(row, { ...this.presenter.urls, actor });
  }

  /** 201 with the new project at once (`import_status` scheduled); the repository follows in a job. */
  @Post('fork')
  @Authenticated()
  async fork(@Param('id') id: string, @GitlabParams() p: ForkDto, @CurrentActor() actor: Actor) {
    const namespace = p.namespace_id ?? (p.namespace_path || undefined) ?? p.namespace;
    const fork = { name: p.name, path: p.path, description: p.description, visibility: p.visibility };
    return this.present(await this.commands.execute(new ForkProject(id, namespace, actor, fork)), actor);
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
