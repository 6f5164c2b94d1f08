import {
  AdminOnly,
  Authenticated,
  BadRequestMessage,
  CurrentActor,
  customAttributeFilter,
  GitlabParams,
  intParam,
  Invalid,
  LodeConfig,
  Page,
  pageParams,
  type Actor,
} from '@app/platform';
import { Controller, Delete, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { CommandBus } from '@nestjs/cqrs';
import { CreateGroup, DeleteGroup, UpdateGroup } from '../commands/group.commands';
import { ShareGroup, UnshareGroup } from '../commands/group-share.commands';
import { TransferGroup } from '../commands/transfer-group.command';
import { GroupQueries, type GroupListFilters } from '../queries/group.queries';
import { NamespaceAccess, type NamespaceRecord } from '../queries/namespace-access';
import { serializeGroup } from './group.serializer';
import { groupChanges, newGroupSettings } from './group-settings';
import { GroupProjects } from './group-projects';
import { expiresAt as expiresAtParam } from './group-members.controller';
import { CreateGroupDto, ListGroupsDto, ShareGroupDto, TransferGroupDto, UpdateGroupDto } from './groups.dto';

/** Every `/groups` endpoint but members and custom attributes; the projects shown come through GroupProjects. */
@Controller('groups')
export class GroupsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly namespaces: NamespaceAccess,
    private readonly groups: GroupQueries,
    private readonly config: LodeConfig,
    private readonly moduleRef: ModuleRef,
  ) {}

  /** The projects context provides the port from a module that imports this one, so it is looked up across the application. */
  private get projects(): GroupProjects {
    return this.moduleRef.get(GroupProjects, { strict: false });
  }

  private get urls() {
    return { externalUrl: this.config.externalUrl, gravatar: this.config.gravatar };
  }

  @Get()
  async list(@GitlabParams() q: ListGroupsDto, @CurrentActor() actor?: Actor) {
    return this.listGroups(q, actor);
  }

  @Get(':id/subgroups')
  async subgroups(@Param('id') id: string, @GitlabParams() q: ListGroupsDto, @CurrentActor() actor?: Actor) {
    const parent = await this.namespaces.visibleGroup(id, actor);
    return this.listGroups(q, actor, { parentId: parent.id });
  }

  private async listGroups(
    q: ListGroupsDto,
    actor: Actor | undefined,
    under: Pick<GroupListFilters, 'parentId' | 'ancestorId'> = {},
  ) {
    const page = pageParams(q);
    const { rows, total } = await this.groups.list(
      actor,
      {
        ...under,
        skipGroups: q.skip_groups,
        allAvailable: q.all_available,
        search: q.search,
        orderBy: q.order_by ?? 'name',
        sort: q.sort ?? 'asc',
        owned: actor ? q.owned : undefined,
        customAttributes: customAttributeFilter(q.custom_attributes, actor),
      },
      page,
    );
    const items = rows.map((g) => serializeGroup(g, this.urls));
    // Statistics are for administrators only; GitLab ignores the flag for others.
    if (q.statistics && actor?.isAdmin) {
      const stats = await this.statistics(rows.map((g) => g.id));
      return new Page(
        items.map((g) => ({ ...g, statistics: stats.get(g.id) ?? emptyStatistics() })),
        total,
        page,
      );
    }
    return new Page(items, total, page);
  }

  /** Sums of the groups' own projects' statistics, one statement for the page. */
  private async statistics(groupIds: number[]) {
    const sizes = await this.projects.repositorySizes(groupIds);
    return new Map(
      [...sizes].map(([groupId, size]) => [
        groupId,
        { ...emptyStatistics(), storage_size: size, repository_size: size },
      ]),
    );
  }

  /** GitLab 13.5+: every group below this one, at any depth, that the caller may see; the list's parameters. */
  @Get(':id/descendant_groups')
  async descendantGroups(@Param('id') id: string, @GitlabParams() q: ListGroupsDto, @CurrentActor() actor?: Actor) {
    const ancestor = await this.namespaces.visibleGroup(id, actor);
    return this.listGroups(q, actor, { ancestorId: ancestor.id });
  }

  @Get(':id')
  async get(@Param('id') id: string, @CurrentActor() actor?: Actor) {
    return this.detail(await this.namespaces.visibleGroup(id, actor), actor);
  }

  @Post()
  @Authenticated()
  async create(@GitlabParams() p: CreateGroupDto, @CurrentActor() actor: Actor) {
    const settings = newGroupSettings(p, { defaultBranchProtection: this.config.defaultBranchProtection });
    const id = await this.commands
      .execute(new CreateGroup(settings, p.parent_id ?? null, actor))
      .catch((err: unknown) => {
        // GitLab 10.x words every failed save of a new group as one sentence holding Ruby's hash of errors.
        if (err instanceof Invalid) throw new BadRequestMessage(`Failed to save group ${rubyHash(err.fields)}`);
        throw err;
      });
    return this.detail(await this.namespaces.visibleGroup(id, actor), actor);
  }

  @Put(':id')
  @Authenticated()
  async update(@Param('id') id: string, @GitlabParams() p: UpdateGroupDto, @CurrentActor() actor: Actor) {
    const changes = groupChanges(p);
    const group = await this.namespaces.visibleGroup(id, actor);
    await this.commands.execute(new UpdateGroup(group.id, changes, actor));
    return this.detail(await this.namespaces.visibleGroup(group.id, actor), actor, false);
  }

  /** GitLab 10.x deletes at once and answers 204 (11.x moved to 202 and a background job). */
  @Delete(':id')
  @Authenticated()
  @HttpCode(204)
  async remove(@Param('id') id: string, @CurrentActor() actor: Actor): Promise<void> {
    const group = await this.namespaces.visibleGroup(id, actor);
    await this.commands.execute(new DeleteGroup(group.id, actor));
  }

  @Get(':id/projects')
  async groupProjects(
    @Param('id') id: string,
    @GitlabParams() params: Record<string, unknown>,
    @CurrentActor() actor?: Actor,
  ) {
    const list = await this.projects.listing(params);
    const group = await this.namespaces.visibleGroup(id, actor);
    return list(group.id, actor);
  }

  /** Administrators move a project (by id or URL-encoded path, as GitLab) into the group: 201 with the group. */
  @Post(':id/projects/:project_id')
  @AdminOnly()
  async transfer(@Param('id') id: string, @Param('project_id') projectId: string, @CurrentActor() actor: Actor) {
    const group = await this.namespaces.visibleGroup(id, actor);
    await this.projects.transfer(projectId, group.id, actor);
    return this.detail(await this.namespaces.visibleGroup(group.id, actor), actor);
  }

  /** GitLab 12.2+: the members of `group_id` get up to `group_access` in this group; 201 with the group. */
  @Post(':id/share')
  @Authenticated()
  async share(@Param('id') id: string, @GitlabParams() p: ShareGroupDto, @CurrentActor() actor: Actor) {
    const groupId = await this.commands.execute(
      new ShareGroup(id, p.group_id, p.group_access, expiresAtParam(p.expires_at), actor),
    );
    return this.detail(await this.namespaces.visibleGroup(groupId, actor), actor);
  }

  @Delete(':id/share/:group_id')
  @Authenticated()
  @HttpCode(204)
  async unshare(
    @Param('id') id: string,
    @Param('group_id', intParam('group_id')) sharedWithGroupId: number,
    @CurrentActor() actor: Actor,
  ): Promise<void> {
    await this.commands.execute(new UnshareGroup(id, sharedWithGroupId, actor));
  }

  /** GitLab 14.6+: moves the group under `group_id`, or to the top level without it; 201 with the group. */
  @Post(':id/transfer')
  @Authenticated()
  async transferGroup(@Param('id') id: string, @GitlabParams() p: TransferGroupDto, @CurrentActor() actor: Actor) {
    const groupId = await this.commands.execute(new TransferGroup(id, p.group_id ?? null, actor));
    return this.detail(await this.namespaces.visibleGroup(groupId, actor), actor);
  }

  /**
   * GroupDetail: the group, the groups it is shared with (12.2+), its projects and the projects shared
   * with it, as far as the caller may see them.
   */
  private async detail(group: NamespaceRecord, actor: Actor | undefined, withShared = true) {
    const { projects, sharedProjects } = await this.projects.embedded(group.id, actor, withShared);
    const sharedWithGroups = await this.groups.sharedWithGroups(group.id, actor);
    const body: Record<string, unknown> = {
      ...serializeGroup(group, this.urls),
      shared_with_groups: sharedWithGroups,
      projects,
    };
    if (withShared) body.shared_projects = sharedProjects;
    return body;
  }
}

const emptyStatistics = () => ({ storage_size: 0, repository_size: 0, lfs_objects_size: 0, job_artifacts_size: 0 });

/** Ruby's `Hash#to_s` of an errors hash: `{:path=>["has already been taken"]}`. */
function rubyHash(fields: Record<string, string[]>): string {
  return `{${Object.entries(fields)
    .map(([k, v]) => `:${k}=>[${v.map((m) => JSON.stringify(m)).join(', ')}]`)
    .join(', ')}}`;
}
