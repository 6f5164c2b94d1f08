import { GROUP_ACCESS_LEVELS, GroupQueries, serializePublicGroup } from '@app/groups';
import {
  CurrentActor,
  GitlabParams,
  LodeConfig,
  Page,
  PaginationDto,
  pageParams,
  ToBool,
  ToInt,
  ToIntArray,
  type Actor,
} from '@app/platform';
import { Controller, Get, Param } from '@nestjs/common';
import { IsBoolean, IsIn, IsInt, IsOptional, IsString } from 'class-validator';
import { ProjectQueries } from '../projects/project.queries';
import { ProjectSharingQueries } from './project-sharing.queries';

/** GitLab 14.x's parameters of `GET /projects/:id/groups`. */
export class ListProjectGroupsDto extends PaginationDto {
  @IsOptional() @IsString() search?: string;
  @IsOptional() @ToIntArray() @IsInt({ each: true }) skip_groups?: number[];
  @IsOptional() @ToBool() @IsBoolean() with_shared?: boolean;
  @IsOptional() @ToBool() @IsBoolean() shared_visible_only?: boolean;
  // Decorators apply bottom-up: the type is checked first (`is invalid`), then the values.
  @IsOptional() @ToInt() @IsIn(GROUP_ACCESS_LEVELS) @IsInt() shared_min_access_level?: number;
}

/**
 * `GET /projects/:id/groups` (GitLab 14.x): the project's group and its ancestors, and with
 * `with_shared` the groups the project is shared with; whoever sees the project may ask.
 */
@Controller('projects/:id/groups')
export class ProjectGroupsController {
  constructor(
    private readonly projects: ProjectQueries,
    private readonly shares: ProjectSharingQueries,
    private readonly groups: GroupQueries,
    private readonly config: LodeConfig,
  ) {}

  @Get()
  async list(@Param('id') id: string, @GitlabParams() q: ListProjectGroupsDto, @CurrentActor() actor?: Actor) {
    const project = await this.projects.getVisible(id, actor);
    const page = pageParams(q);
    const sharedIds = q.with_shared ? await this.shares.sharedGroupIds(project.id, q.shared_min_access_level) : [];
    const { rows, total } = await this.groups.projectGroups(
      project.namespace_id,
      sharedIds,
      { search: q.search, skipGroups: q.skip_groups, sharedVisibleOnly: q.shared_visible_only },
      actor,
      page,
    );
    const urls = { externalUrl: this.config.externalUrl, gravatar: this.config.gravatar };
    return new Page(
      rows.map((g) => serializePublicGroup(g, urls)),
      total,
      page,
    );
  }
}
