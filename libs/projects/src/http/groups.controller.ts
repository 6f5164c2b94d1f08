import {
  CreateGroup,
  CreateGroupDto,
  DeleteGroup,
  GroupQueries,
  ListGroupsDto,
  NamespaceAccess,
  serializeGroup,
  UpdateGroup,
  UpdateGroupDto,
  type GroupSettings,
  type NamespaceRecord,
} from '@app/groups';
import {
  AdminOnly,
  Authenticated,
  BadParameter,
  BadRequestMessage,
  CurrentActor,
  GitlabParams,
  Invalid,
  LodeConfig,
  Page,
  pageParams,
  type Actor,
} from '@app/platform';
import { Controller, Delete, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';
import { ChangeProject } from '../commands/change-project.command';
import { ProjectQueries, type ProjectRow } from '../queries/project.queries';
import { customAttributeFilter, listFilters } from './projects.controller';
import { serializeProject, serializeProjectSimple } from './project.serializer';
import { ListProjectsDto } from './projects.dto';

/**
 * The group endpoints whose answers include projects (GroupDetail, group project lists, statistics),
 * so they live in the projects context, which may read groups but not the other way round.
 */
@Controller('groups')
export class GroupsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly namespaces: NamespaceAccess,
    private readonly groups: GroupQueries,
    private readonly projects: ProjectQueries,
    private readonly config: LodeConfig,
    private readonly db: DataSource,
  ) {}

  private get urls() {
    return { externalUrl: this.config.externalUrl };
  }

  @Get()
  async list(@GitlabParams() q: ListGroupsDto, @CurrentActor() actor?: Actor) {
    return this.listGroups(q, actor);
  }

  @Get(':id/subgroups')
  async subgroups(@Param('id') id: string, @GitlabParams() q: ListGroupsDto, @CurrentActor() actor?: Actor) {
    const parent = await this.namespaces.visibleGroup(id, actor);
    return this.listGroups(q, actor, parent.id);
  }

  private async listGroups(q: ListGroupsDto, actor: Actor | undefined, parentId?: number) {
    const page = pageParams(q);
    const { rows, total } = await this.groups.list(
      actor,
      {
        parentId,
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
    const rows: { namespace_id: number; size: string }[] = await this.db.query(
      `select namespace_id, sum(repository_size)::bigint as size from projects where namespace_id = any($1::int[]) group by namespace_id`,
      [groupIds],
    );
    return new Map(
      rows.map((r) => [
        r.namespace_id,
        { ...emptyStatistics(), storage_size: Number(r.size), repository_size: Number(r.size) },
      ]),
    );
  }

  @Get(':id')
  async get(@Param('id') id: string, @CurrentActor() actor?: Actor) {
    return this.detail(await this.namespaces.visibleGroup(id, actor), actor);
  }

  @Post()
  @Authenticated()
  async create(@GitlabParams() p: CreateGroupDto, @CurrentActor() actor: Actor) {
    const settings: GroupSettings = {
      name: p.name,
      path: p.path,
      description: p.description ?? '',
      visibility: p.visibility ?? 'private',
      lfsEnabled: p.lfs_enabled ?? true,
      requestAccessEnabled: p.request_access_enabled ?? false,
    };
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
    const changes: Partial<GroupSettings> = {
      name: p.name,
      path: p.path,
      description: p.description,
      visibility: p.visibility,
      lfsEnabled: p.lfs_enabled,
      requestAccessEnabled: p.request_access_enabled,
    };
    for (const k of Object.keys(changes) as (keyof GroupSettings)[]) if (changes[k] === undefined) delete changes[k];
    if (!Object.keys(changes).length)
      throw new BadParameter(
        'name, path, description, visibility, lfs_enabled, request_access_enabled are missing, at least one parameter must be provided',
      );
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
  async groupProjects(@Param('id') id: string, @GitlabParams() q: ListProjectsDto, @CurrentActor() actor?: Actor) {
    const group = await this.namespaces.visibleGroup(id, actor);
    const page = pageParams(q);
    // GitLab's group project list takes fewer filters than /projects, and `archived` is a switch, not a
    // filter: hidden unless asked, `archived=true` lists them along with the others (ProjectsFinder#by_archived).
    const f = listFilters(
      {
        ...q,
        archived: undefined,
        membership: undefined,
        with_issues_enabled: undefined,
        with_merge_requests_enabled: undefined,
        custom_attributes: undefined,
      },
      actor,
    );
    const { rows, total } = await this.projects.list(
      actor,
      { ...f, archived: q.archived === true ? undefined : false, namespaceId: group.id },
      page,
    );
    if (q.simple)
      return new Page(
        rows.map((p) => serializeProjectSimple(p, this.urls)),
        total,
        page,
      );
    return new Page(await this.embedded(rows, actor), total, page);
  }

  /** Administrators move a project (by id or URL-encoded path, as GitLab) into the group: 201 with the group. */
  @Post(':id/projects/:project_id')
  @AdminOnly()
  async transfer(@Param('id') id: string, @Param('project_id') projectId: string, @CurrentActor() actor: Actor) {
    const group = await this.namespaces.visibleGroup(id, actor);
    await this.commands.execute(new ChangeProject(projectId, { kind: 'transfer', namespaceId: group.id }, actor));
    return this.detail(await this.namespaces.visibleGroup(group.id, actor), actor);
  }

  /** GroupDetail: the group with its projects and the projects shared with it, as far as the caller may see them. */
  private async detail(group: NamespaceRecord, actor: Actor | undefined, withShared = true) {
    const all = await this.projects.list(
      actor,
      { namespaceId: group.id, orderBy: 'id', sort: 'asc' },
      { page: 1, perPage: 100_000, offset: 0 },
      { count: false, lean: true },
    );
    const shared = withShared ? await this.projects.sharedWithGroup(group.id, actor) : [];
    const embedded = await this.embedded([...all.rows, ...shared], actor);
    const body: Record<string, unknown> = {
      ...serializeGroup(group, this.urls),
      projects: embedded.slice(0, all.rows.length),
    };
    if (withShared) body.shared_projects = embedded.slice(all.rows.length);
    return body;
  }

  /**
   * GitLab's plain Project entity, which group answers embed and group project lists use for every
   * caller: no `permissions`, and never `runners_token` nor `import_error` (those need the
   * `user_can_admin_project` option, which only the single-project endpoints set).
   */
  private async embedded(rows: ProjectRow[], actor: Actor | undefined) {
    // Rows read with the full columns carry their shares (the serializer reads them); lean ones (a
    // group's embedded projects) are looked up together.
    const lean = rows.filter((p) => p.shared_with === null).map((p) => p.id);
    const [links, sources] = await Promise.all([
      this.projects.sharedWith(lean),
      this.projects.forkSources(rows, actor),
    ]);
    return rows.map((p) =>
      serializeProject(p, {
        externalUrl: this.urls.externalUrl,
        actor,
        sharedWith: links.get(p.id),
        withoutPermissions: true,
        adminFields: false,
        forkedFrom: p.forked_from_id === null ? undefined : sources.get(p.forked_from_id),
      }),
    );
  }
}

const emptyStatistics = () => ({ storage_size: 0, repository_size: 0, lfs_objects_size: 0, job_artifacts_size: 0 });

/** Ruby's `Hash#to_s` of an errors hash: `{:path=>["has already been taken"]}`. */
function rubyHash(fields: Record<string, string[]>): string {
  return `{${Object.entries(fields)
    .map(([k, v]) => `:${k}=>[${v.map((m) => JSON.stringify(m)).join(', ')}]`)
    .join(', ')}}`;
}
