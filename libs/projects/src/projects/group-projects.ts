import { GroupProjects, type EmbeddedProjectJson } from '@app/groups';
import { Page, pageParams, validateParams, type Actor } from '@app/platform';
import { Injectable } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { TransferProject } from './transfer-project.command';
import { ProjectQueries } from './project.queries';
import { ProjectPresenter } from './project-presenter';
import { listFilters } from './projects.controller';
import { ListProjectsDto } from './projects.dto';

/** The groups context's port: the projects its answers show, serialized here. */
@Injectable()
export class ProjectGroupProjects extends GroupProjects {
  constructor(
    private readonly commands: CommandBus,
    private readonly projects: ProjectQueries,
    private readonly presenter: ProjectPresenter,
  ) {
    super();
  }

  async embedded(groupId: number, actor: Actor | undefined, withShared: boolean) {
    const all = await this.projects.list(
      actor,
      { namespaceId: groupId, orderBy: 'id', sort: 'asc' },
      { page: 1, perPage: 100_000, offset: 0 },
      { count: false, lean: true },
    );
    const shared = withShared ? await this.projects.sharedWithGroup(groupId, actor) : [];
    const embedded = await this.presenter.plain([...all.rows, ...shared], actor);
    return { projects: embedded.slice(0, all.rows.length), sharedProjects: embedded.slice(all.rows.length) };
  }

  async listing(params: Record<string, unknown>) {
    const q = await validateParams(ListProjectsDto, params);
    return async (groupId: number, actor: Actor | undefined): Promise<Page<EmbeddedProjectJson>> => {
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
      // GitLab serializes this list with the plain Project entity, without `permissions`: the lean columns
      // spare each row the caller's levels (six correlated subqueries), and `plain` looks the shares up.
      const { rows, total } = await this.projects.list(
        actor,
        { ...f, archived: q.archived === true ? undefined : false, namespaceId: groupId },
        page,
        { lean: true },
      );
      if (q.simple)
        return new Page(
          rows.map((p) => this.presenter.simple(p)),
          total,
          page,
        );
      return new Page(await this.presenter.plain(rows, actor), total, page);
    };
  }

  async repositorySizes(groupIds: number[]): Promise<Map<number, number>> {
    return this.projects.repositorySizes(groupIds);
  }

  async transfer(project: string, groupId: number, actor: Actor): Promise<void> {
    await this.commands.execute(new TransferProject(project, groupId, actor));
  }
}
