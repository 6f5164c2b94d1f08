import { expiresAtParam, GroupQueries, ListMembersDto, serializeMember } from '@app/groups';
import {
  AdminOnly,
  Authenticated,
  CurrentActor,
  GitlabParams,
  intParam,
  LodeConfig,
  NotFound,
  Page,
  pageParams,
  type Actor,
} from '@app/platform';
import { UserQueries } from '@app/users';
import { Controller, Delete, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { AddProjectMember } from '../commands/add-project-member.command';
import { RemoveProjectCustomAttribute } from '../commands/remove-project-custom-attribute.command';
import { RemoveProjectMember } from '../commands/remove-project-member.command';
import { SetProjectCustomAttribute } from '../commands/set-project-custom-attribute.command';
import { ShareProject } from '../commands/share-project.command';
import { UnshareProject } from '../commands/unshare-project.command';
import { UpdateProjectMember } from '../commands/update-project-member.command';
import { ProjectQueries } from '../queries/project.queries';
import { ProjectPresenter } from './project-presenter';
import { listFilters } from './projects.controller';
import {
  AddProjectMemberDto,
  CustomAttributeDto,
  ListProjectsDto,
  ShareProjectDto,
  UpdateProjectMemberDto,
} from './projects.dto';

/** Projects by owner and by fork parent. */
@Controller()
export class ProjectListsController {
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

  @Get('projects/:id/forks')
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
    const { rows, total } = await this.groups.members('project', project.id, q.query, page);
    return new Page(
      rows.map((m) => serializeMember(m, this.urls)),
      total,
      page,
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

/** Sharing a project with a group (`POST /projects/:id/share`, `DELETE /projects/:id/share/:group_id`). */
@Controller('projects/:id/share')
export class ProjectSharingController {
  constructor(
    private readonly commands: CommandBus,
    private readonly projects: ProjectQueries,
  ) {}

  @Post()
  @Authenticated()
  async share(@Param('id') id: string, @GitlabParams() p: ShareProjectDto, @CurrentActor() actor: Actor) {
    const project = await this.commands.execute(
      new ShareProject(id, p.group_id, p.group_access, expiresAtParam(p.expires_at), actor),
    );
    return this.projects.groupLink(project.id, p.group_id);
  }

  @Delete(':group_id')
  @Authenticated()
  @HttpCode(204)
  async unshare(
    @Param('id') id: string,
    @Param('group_id', intParam('group_id')) groupId: number,
    @CurrentActor() actor: Actor,
  ): Promise<void> {
    await this.commands.execute(new UnshareProject(id, groupId, actor));
  }
}

/** GitLab's admin-only custom attributes of projects, which `GET /projects?custom_attributes[k]=v` filters on. */
@Controller('projects/:id/custom_attributes')
@AdminOnly()
export class ProjectCustomAttributesController {
  constructor(
    private readonly commands: CommandBus,
    private readonly projects: ProjectQueries,
  ) {}

  @Get()
  async list(@Param('id') id: string, @CurrentActor() actor: Actor) {
    return this.projects.customAttributes((await this.projects.getVisible(id, actor)).id);
  }

  @Get(':key')
  async get(@Param('id') id: string, @Param('key') key: string, @CurrentActor() actor: Actor) {
    return this.projects.customAttribute((await this.projects.getVisible(id, actor)).id, key);
  }

  @Put(':key')
  async set(
    @Param('id') id: string,
    @Param('key') key: string,
    @GitlabParams() p: CustomAttributeDto,
    @CurrentActor() actor: Actor,
  ) {
    const project = await this.commands.execute(new SetProjectCustomAttribute(id, key, p.value, actor));
    return this.projects.customAttribute(project.id, key);
  }

  @Delete(':key')
  @HttpCode(204)
  async remove(@Param('id') id: string, @Param('key') key: string, @CurrentActor() actor: Actor): Promise<void> {
    await this.commands.execute(new RemoveProjectCustomAttribute(id, key, actor));
  }
}
