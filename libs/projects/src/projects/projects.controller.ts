import {
  AcceptsFiles,
  Authenticated,
  AdminOnly,
  BadParameter,
  CurrentActor,
  customAttributeFilter,
  GitlabParams,
  intParam,
  KeysetPage,
  KeysetUnavailable,
  keysetPerPage,
  LodeConfig,
  Page,
  pageParams,
  type Actor,
} from '@app/platform';
import { avatarParam, serializeUserBasic, uploadedFile, UserQueries } from '@app/users';
import { Controller, Delete, Get, HttpCode, Param, Post, Put, Req, UseInterceptors } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import type { Request } from 'express';
import { ArchiveProject } from './archive-project.command';
import { InitialReadme } from './initial-readme';
import { CreateProject } from './create-project.command';
import { DeleteProject } from './delete-project.command';
import { TransferProjectToNamespace } from './transfer-project-to-namespace.command';
import { UnarchiveProject } from './unarchive-project.command';
import { UpdateProject } from './update-project.command';
import { ProjectQueries, type ProjectListFilters, type ProjectRow } from './project.queries';
import { newProjectSettings, projectChanges, sendsParamsNotKept } from './project-setting-params';
import { ProjectPresenter, readsStatistics, type Presentation } from './project-presenter';
import { PublicProjectAnswers } from './public-project-answers';
import {
  CreateProjectDto,
  ListProjectsDto,
  ProjectUsersDto,
  ProjectWriteDto,
  StatisticsDto,
  TransferProjectDto,
} from './projects.dto';

export function listFilters(q: ListProjectsDto, actor: Actor | undefined): ProjectListFilters {
  return {
    // GitLab 10.x: `archived` defaults to false, which hides archived projects, and `archived=true`
    // lists them along with the others (ProjectsFinder#by_archived); only 11.x made it "archived only".
    archived: q.archived === true ? undefined : false,
    visibility: q.visibility,
    search: q.search,
    // These need a caller; GitLab ignores them for anonymous requests.
    owned: actor ? q.owned : undefined,
    membership: actor ? q.membership : undefined,
    starred: actor ? q.starred : undefined,
    withIssuesEnabled: q.with_issues_enabled,
    withMergeRequestsEnabled: q.with_merge_requests_enabled,
    customAttributes: customAttributeFilter(q.custom_attributes, actor),
    orderBy: q.order_by ?? 'created_at',
    sort: q.sort ?? 'desc',
  };
}

@Controller('projects')
export class ProjectsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly projects: ProjectQueries,
    private readonly users: UserQueries,
    private readonly presenter: ProjectPresenter,
    private readonly config: LodeConfig,
    private readonly readme: InitialReadme,
    private readonly answers: PublicProjectAnswers,
  ) {}

  private async present(idOrRow: number | ProjectRow, actor: Actor | undefined, how: Presentation) {
    const row = typeof idOrRow === 'number' ? await this.projects.getVisible(idOrRow, actor) : idOrRow;
    return this.presenter.one(row, actor, how);
  }

  @Get()
  async list(@GitlabParams() q: ListProjectsDto, @CurrentActor() actor?: Actor) {
    if (q.pagination === 'keyset') return this.keysetList(q, actor);
    const page = pageParams(q);
    const { rows, total } = await this.projects.list(actor, listFilters(q, actor), page);
    const items = await this.presenter.page(rows, actor, { simple: q.simple, statistics: q.statistics });
    return new Page(items, total, page);
  }

  /**
   * GitLab's keyset pages of projects (Gitlab::Pagination::Keyset, 12.x and later): ordered by id only
   * (another `order_by` is 405), newest first unless `sort=asc`; the next page starts below (`id_before`)
   * or above (`id_after`) the last id shown. A project created or deleted between two pages moves no
   * other project across the boundary, so none is shown twice or skipped, as offset pages would.
   */
  private async keysetList(q: ListProjectsDto, actor: Actor | undefined) {
    if (q.order_by !== undefined && q.order_by !== 'id') throw new KeysetUnavailable();
    const sort = q.sort ?? 'desc';
    const perPage = keysetPerPage(q.per_page);
    const filters = {
      ...listFilters(q, actor),
      orderBy: 'id' as const,
      sort,
      ...(sort === 'desc' ? { idBefore: q.id_before } : { idAfter: q.id_after }),
    };
    // One row more than the page tells whether a next page exists, without counting.
    const { rows } = await this.projects.list(
      actor,
      filters,
      { page: 1, perPage: perPage + 1, offset: 0 },
      { count: false },
    );
    const shown = rows.slice(0, perPage);
    const items = await this.presenter.page(shown, actor, { simple: q.simple, statistics: q.statistics });
    const last = shown.at(-1);
    const next =
      rows.length > perPage && last ? { [sort === 'desc' ? 'id_before' : 'id_after']: String(last.id) } : undefined;
    return new KeysetPage(items, perPage, next);
  }

  /** GitLab: ProjectWithAccess for signed-in callers, BasicProjectDetails (the simple shape) for anonymous ones. */
  @Get(':id')
  async get(@Param('id') id: string, @GitlabParams() q: StatisticsDto, @CurrentActor() actor?: Actor) {
    // Taken before the read: an eviction while it runs means the row read may already be stale.
    const epoch = this.answers.epoch;
    const row = await this.projects.getVisible(id, actor);
    if (!actor) {
      // The same answer for every anonymous caller, whatever the query: kept for the next one.
      const answer = this.presenter.simple(row);
      this.answers.keep(row.id, answer, epoch);
      return answer;
    }
    return this.present(row, actor, {
      permissions: true,
      statistics: q.statistics === true && readsStatistics(row, actor),
      adminFields: true,
    });
  }

  /** A multipart `avatar` is stored as GitLab's project avatar; a bad one is a 400 on `avatar`, nothing created. */
  @Post()
  @Authenticated()
  @UseInterceptors(AcceptsFiles)
  async create(@GitlabParams() p: CreateProjectDto, @CurrentActor() actor: Actor, @Req() req: Request) {
    const settings = newProjectSettings(p);
    const id = await this.commands.execute(
      new CreateProject(settings, p.namespace_id, actor, actor.id, uploadedFile(req, 'avatar')),
    );
    // The repository was made with this branch as HEAD (CreateProject).
    if (p.initialize_with_readme) await this.readme.write(id, actor, actor.id, settings.defaultBranch ?? 'master');
    return this.present(id, actor, { adminFields: true });
  }

  /** The project is created as if by that user (GitLab runs its CreateService as them): they are its creator. */
  @Post('user/:user_id')
  @AdminOnly()
  @UseInterceptors(AcceptsFiles)
  async createForUser(
    @Param('user_id', intParam('user_id')) userId: number,
    @GitlabParams() p: ProjectWriteDto,
    @CurrentActor() actor: Actor,
    @Req() req: Request,
  ) {
    // Grape's `requires :name` (the inherited optional `name` would make a DTO's @IsDefined moot).
    if (p.name === undefined) throw new BadParameter('name is missing');
    await this.users.get(userId);
    const id = await this.commands.execute(
      new CreateProject(newProjectSettings(p), undefined, actor, userId, uploadedFile(req, 'avatar')),
    );
    return this.present(id, actor, { adminFields: true });
  }

  /** A multipart `avatar` replaces the project's avatar, a blank one removes it; either counts as a parameter. */
  @Put(':id')
  @Authenticated()
  @UseInterceptors(AcceptsFiles)
  async update(
    @Param('id') id: string,
    @GitlabParams() p: ProjectWriteDto,
    @CurrentActor() actor: Actor,
    @Req() req: Request,
  ) {
    const avatar = avatarParam(req);
    const otherSent = avatar !== undefined || sendsParamsNotKept(req.query, req.body);
    const row = await this.commands.execute(new UpdateProject(id, projectChanges(p, otherSent), avatar, actor));
    return this.present(row.id, actor, { adminFields: true });
  }

  /** GitLab removes projects in the background and answers 202. */
  @Delete(':id')
  @Authenticated()
  @HttpCode(202)
  async remove(@Param('id') id: string, @CurrentActor() actor: Actor) {
    await this.commands.execute(new DeleteProject(id, actor));
    return { message: '202 Accepted' };
  }

  @Post(':id/archive')
  @Authenticated()
  async archive(@Param('id') id: string, @CurrentActor() actor: Actor) {
    const row = await this.commands.execute(new ArchiveProject(id, actor));
    return this.present(row.id, actor, {});
  }

  @Post(':id/unarchive')
  @Authenticated()
  async unarchive(@Param('id') id: string, @CurrentActor() actor: Actor) {
    const row = await this.commands.execute(new UnarchiveProject(id, actor));
    return this.present(row.id, actor, {});
  }

  /** 200 with the moved project (GitLab's Project entity, admin fields included). */
  @Put(':id/transfer')
  @Authenticated()
  async transfer(@Param('id') id: string, @GitlabParams() p: TransferProjectDto, @CurrentActor() actor: Actor) {
    const moved = await this.commands.execute(new TransferProjectToNamespace(id, p.namespace, actor));
    return this.present(moved, actor, { adminFields: true });
  }

  /** Everyone with access to the project, in GitLab's UserBasic shape. */
  @Get(':id/users')
  async projectUsers(@Param('id') id: string, @GitlabParams() q: ProjectUsersDto, @CurrentActor() actor?: Actor) {
    const row = await this.projects.getVisible(id, actor);
    const page = pageParams(q);
    const { rows, total } = await this.projects.users(row.id, q.search, page);
    const urls = { externalUrl: this.config.externalUrl, gravatar: this.config.gravatar };
    return new Page(
      rows.map((u) => serializeUserBasic(u, urls)),
      total,
      page,
    );
  }
}
