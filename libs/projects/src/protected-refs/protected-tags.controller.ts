import { ACCESS } from '@app/groups';
import {
  CurrentActor,
  GitlabParams,
  Page,
  PaginationDto,
  pageParams,
  ToInt,
  validateParams,
  type Actor,
} from '@app/platform';
import { Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBody } from '@nestjs/swagger';
import { IsDefined, IsIn, IsInt, IsOptional, IsString } from 'class-validator';
import { ProjectQueries } from '../projects/project.queries';
import { CreateProtectedTag } from './create-protected-tag.command';
import { PROTECTED_TAG_ACCESS_LEVELS } from './protected-tag';
import { ProtectedTagQueries } from './protected-tag.queries';
import { serializeProtectedTag } from './protected-tag.serializer';
import { RemoveProtectedTag } from './remove-protected-tag.command';

export class ProtectTagDto {
  @IsDefined() @IsString() name: string;
  @IsOptional() @ToInt() @IsIn(PROTECTED_TAG_ACCESS_LEVELS) @IsInt() create_access_level?: number;
}

/**
 * Protected tags (GitLab API v4 11.3, `lib/api/protected_tags.rb`). Every route is for the project's
 * maintainers and owners and administrators (`before { authorize_admin_project }`), anonymous
 * callers included in that rule: 404 `Project Not Found` to whoever cannot see the project, 403 to
 * everyone else, before the parameters are validated. `:name` may be a wildcard (`v*`) and holds a
 * slash only URL-encoded.
 */
@Controller('projects/:id/protected_tags')
export class ProtectedTagsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly projects: ProjectQueries,
    private readonly rules: ProtectedTagQueries,
  ) {}

  @Get()
  async list(@Param('id') id: string, @GitlabParams() q: PaginationDto, @CurrentActor() actor?: Actor) {
    const project = await this.projects.require(id, actor, ACCESS.maintainer);
    const page = pageParams(q);
    const { rows, total } = await this.rules.page(project.id, page);
    return new Page(rows.map(serializeProtectedTag), total, page);
  }

  /** The rule of this exact name: a wildcard is asked for as written, never matched against. */
  @Get(':name')
  async get(@Param('id') id: string, @Param('name') name: string, @CurrentActor() actor?: Actor) {
    const project = await this.projects.require(id, actor, ACCESS.maintainer);
    return serializeProtectedTag(await this.rules.get(project.id, name));
  }

  /** 201; `create_access_level` defaults to 40 (maintainers). */
  @Post()
  @ApiBody({ type: ProtectTagDto })
  async create(
    @Param('id') id: string,
    @GitlabParams() params: Record<string, unknown>,
    @CurrentActor() actor?: Actor,
  ) {
    const project = await this.projects.require(id, actor, ACCESS.maintainer);
    const p = await validateParams(ProtectTagDto, params);
    const rule = { name: p.name, createAccessLevel: p.create_access_level ?? ACCESS.maintainer };
    await this.commands.execute(new CreateProtectedTag(project, rule));
    return serializeProtectedTag(await this.rules.get(project.id, p.name));
  }

  /** 204. */
  @Delete(':name')
  @HttpCode(204)
  async remove(@Param('id') id: string, @Param('name') name: string, @CurrentActor() actor?: Actor): Promise<void> {
    const project = await this.projects.require(id, actor, ACCESS.maintainer);
    await this.commands.execute(new RemoveProtectedTag(project, name));
  }
}
