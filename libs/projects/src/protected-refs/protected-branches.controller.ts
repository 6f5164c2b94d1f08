import { ACCESS } from '@app/groups';
import {
  CurrentActor,
  GitlabParams,
  Page,
  PaginationDto,
  pageParams,
  ToBool,
  ToInt,
  validateParams,
  type Actor,
} from '@app/platform';
import { Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBody } from '@nestjs/swagger';
import { IsBoolean, IsDefined, IsIn, IsInt, IsOptional, IsString } from 'class-validator';
import { CreateProtectedBranch } from './create-protected-branch.command';
import { RemoveProtectedBranch } from './remove-protected-branch.command';
import { UpdateProtectedBranch } from './update-protected-branch.command';
import { PROTECTED_BRANCH_ACCESS_LEVELS } from './protected-branch';
import { ProjectQueries } from '../projects/project.queries';
import { ProtectedBranchQueries } from './protected-branch.queries';
import { serializeProtectedBranch } from './protected-branch.serializer';

export class ProtectBranchDto {
  @IsDefined() @IsString() name: string;
  @IsOptional() @ToInt() @IsIn(PROTECTED_BRANCH_ACCESS_LEVELS) @IsInt() push_access_level?: number;
  @IsOptional() @ToInt() @IsIn(PROTECTED_BRANCH_ACCESS_LEVELS) @IsInt() merge_access_level?: number;
  /** GitLab 13.x. */
  @IsOptional() @ToBool() @IsBoolean() allow_force_push?: boolean;
}

export class UpdateProtectedBranchDto {
  @IsOptional() @ToBool() @IsBoolean() allow_force_push?: boolean;
}

/**
 * Protected branches (GitLab API v4, 10.x `lib/api/protected_branches.rb`). Every route is for the
 * project's masters (maintainers) and owners and administrators (`before { authorize_admin_project }`),
 * anonymous callers included in that rule: 404 `Project Not Found` to whoever cannot see the project,
 * 403 to everyone else. Grape runs that check before it validates the parameters, so the body is read
 * after it here too. `:name` may be a wildcard (`*-stable`) and holds a slash only URL-encoded.
 */
@Controller('projects/:id/protected_branches')
export class ProtectedBranchesController {
  constructor(
    private readonly commands: CommandBus,
    private readonly projects: ProjectQueries,
    private readonly rules: ProtectedBranchQueries,
  ) {}

  @Get()
  async list(@Param('id') id: string, @GitlabParams() q: PaginationDto, @CurrentActor() actor?: Actor) {
    const project = await this.projects.require(id, actor, ACCESS.maintainer);
    const page = pageParams(q);
    const { rows, total } = await this.rules.page(project.id, page);
    return new Page(rows.map(serializeProtectedBranch), total, page);
  }

  /** The rule of this exact name: a wildcard is asked for as written, never matched against. */
  @Get(':name')
  async get(@Param('id') id: string, @Param('name') name: string, @CurrentActor() actor?: Actor) {
    const project = await this.projects.require(id, actor, ACCESS.maintainer);
    return serializeProtectedBranch(await this.rules.get(project.id, name));
  }

  /** 201; both levels default to 40 (masters). */
  @Post()
  @ApiBody({ type: ProtectBranchDto })
  async create(
    @Param('id') id: string,
    @GitlabParams() params: Record<string, unknown>,
    @CurrentActor() actor?: Actor,
  ) {
    const project = await this.projects.require(id, actor, ACCESS.maintainer);
    const p = await validateParams(ProtectBranchDto, params);
    const rule = {
      name: p.name,
      pushAccessLevel: p.push_access_level ?? ACCESS.maintainer,
      mergeAccessLevel: p.merge_access_level ?? ACCESS.maintainer,
      ...(p.allow_force_push ? { allowForcePush: true } : {}),
    };
    await this.commands.execute(new CreateProtectedBranch(project, rule));
    return serializeProtectedBranch(await this.rules.get(project.id, p.name));
  }

  /**
   * Later GitLab's update of a rule (Terraform's `gitlab_branch_protection` sends `allow_force_push`
   * through it): 200 with the rule; 404 `Not found` without a rule of that exact name. Lode takes
   * `allow_force_push` only; other parameters are ignored.
   */
  @Patch(':name')
  @ApiBody({ type: UpdateProtectedBranchDto })
  async update(
    @Param('id') id: string,
    @Param('name') name: string,
    @GitlabParams() params: Record<string, unknown>,
    @CurrentActor() actor?: Actor,
  ) {
    const project = await this.projects.require(id, actor, ACCESS.maintainer);
    const p = await validateParams(UpdateProtectedBranchDto, params);
    await this.commands.execute(new UpdateProtectedBranch(project, name, { allowForcePush: p.allow_force_push }));
    return serializeProtectedBranch(await this.rules.get(project.id, name));
  }

  /** 204. */
  @Delete(':name')
  @HttpCode(204)
  async remove(@Param('id') id: string, @Param('name') name: string, @CurrentActor() actor?: Actor): Promise<void> {
    const project = await this.projects.require(id, actor, ACCESS.maintainer);
    await this.commands.execute(new RemoveProtectedBranch(project, name));
  }
}
