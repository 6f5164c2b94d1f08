import { expiresAtParam, GroupQueries, ListMembersDto, serializeMember } from '@app/groups';
import {
  Authenticated,
  CurrentActor,
  GitlabParams,
  intParam,
  LodeConfig,
  Page,
  pageParams,
  Nullable,
  ToInt,
  type Actor,
} from '@app/platform';
import { Controller, Delete, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { IsDefined, IsInt, IsOptional, IsString } from 'class-validator';
import { projectMembershipsSql } from '../access/project-access';
import { ProjectQueries } from '../projects/project.queries';
import { AddProjectMember } from './add-project-member.command';
import { RemoveProjectMember } from './remove-project-member.command';
import { UpdateProjectMember } from './update-project-member.command';

/** Grape only types `access_level`; the member model refuses levels outside 10..40 (400 on `access_level`). */
export class AddProjectMemberDto {
  @IsDefined() @ToInt() @IsInt() user_id: number;
  @IsDefined() @ToInt() @IsInt() access_level: number;
  @Nullable() @IsOptional() @IsString() expires_at?: string | null;
}

export class UpdateProjectMemberDto {
  @IsDefined() @ToInt() @IsInt() access_level: number;
  @Nullable() @IsOptional() @IsString() expires_at?: string | null;
}

/**
 * GitLab's project members API: whoever sees the project sees its members; maintainers change them.
 * `:user_id` is a Grape Integer: anything else is 400 `user_id is invalid`.
 */
@Controller('projects/:id/members')
export class ProjectMembersController {
  constructor(
    private readonly commands: CommandBus,
    private readonly projects: ProjectQueries,
    private readonly groups: GroupQueries,
    private readonly config: LodeConfig,
  ) {}

  private get urls() {
    return { externalUrl: this.config.externalUrl, gravatar: this.config.gravatar };
  }

  @Get()
  async list(@Param('id') id: string, @GitlabParams() q: ListMembersDto, @CurrentActor() actor?: Actor) {
    const project = await this.projects.getVisible(id, actor);
    const page = pageParams(q);
    const { rows, total } = await this.groups.members('project', project.id, q.query, page, q.user_ids);
    return new Page(
      rows.map((m) => serializeMember(m, this.urls)),
      total,
      page,
    );
  }

  /**
   * GitLab's `members/all` (13.11+ semantics): everyone with a way into the project (access/project-access.ts
   * `projectMembershipsSql`), once each with their highest level. Declared before `:user_id`, so `all` is
   * never read as a user id.
   */
  @Get('all')
  async listAll(@Param('id') id: string, @GitlabParams() q: ListMembersDto, @CurrentActor() actor?: Actor) {
    const project = await this.projects.getVisible(id, actor);
    const page = pageParams(q);
    const { rows, total } = await this.groups.allMembers(
      projectMembershipsSql('$1::int'),
      project.id,
      q.query,
      page,
      q.user_ids,
    );
    return new Page(
      rows.map((m) => serializeMember(m, this.urls)),
      total,
      page,
    );
  }

  /** GitLab 12.4+: one user's effective membership; 404 `404 Not found` for a user with none. */
  @Get('all/:user_id')
  async getAll(
    @Param('id') id: string,
    @Param('user_id', intParam('user_id')) userId: number,
    @CurrentActor() actor?: Actor,
  ) {
    const project = await this.projects.getVisible(id, actor);
    return serializeMember(
      await this.groups.allMember(projectMembershipsSql('$1::int'), project.id, userId),
      this.urls,
    );
  }

  @Get(':user_id')
  async get(
    @Param('id') id: string,
    @Param('user_id', intParam('user_id')) userId: number,
    @CurrentActor() actor?: Actor,
  ) {
    const project = await this.projects.getVisible(id, actor);
    return serializeMember(await this.groups.member('project', project.id, userId), this.urls);
  }

  @Post()
  @Authenticated()
  async add(@Param('id') id: string, @GitlabParams() p: AddProjectMemberDto, @CurrentActor() actor: Actor) {
    const project = await this.commands.execute(
      new AddProjectMember(id, p.user_id, p.access_level, expiresAtParam(p.expires_at), actor),
    );
    return serializeMember(await this.groups.member('project', project.id, p.user_id), this.urls);
  }

  @Put(':user_id')
  @Authenticated()
  async update(
    @Param('id') id: string,
    @Param('user_id', intParam('user_id')) userId: number,
    @GitlabParams() p: UpdateProjectMemberDto,
    @CurrentActor() actor: Actor,
  ) {
    const project = await this.commands.execute(
      new UpdateProjectMember(id, userId, p.access_level, expiresAtParam(p.expires_at), actor),
    );
    return serializeMember(await this.groups.member('project', project.id, userId), this.urls);
  }

  @Delete(':user_id')
  @Authenticated()
  @HttpCode(204)
  async remove(
    @Param('id') id: string,
    @Param('user_id', intParam('user_id')) userId: number,
    @CurrentActor() actor: Actor,
  ): Promise<void> {
    await this.commands.execute(new RemoveProjectMember(id, userId, actor));
  }
}
