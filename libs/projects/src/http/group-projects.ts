import { GroupProjects, type EmbeddedProjectJson } from '@app/groups';
import { LodeConfig, Page, pageParams, validateParams, type Actor } from '@app/platform';
import { Injectable } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ChangeProject } from '../commands/change-project.command';
import { ProjectQueries, type ProjectRow } from '../queries/project.queries';
import { serializeProject, serializeProjectSimple } from './project.serializer';
import { listFilters } from './projects.controller';
import { ListProjectsDto } from './projects.dto';

/** The groups context's port: the projects its answers show, serialized here. */
@Injectable()
export class ProjectGroupProjects extends GroupProjects {
  constructor(
    private readonly commands: CommandBus,
    private readonly projects: ProjectQueries,
    private readonly config: LodeConfig,
  ) {
    super();
  }

  private get urls() {
    return {
      externalUrl: this.config.externalUrl,
      sshCloneBase: this.config.sshCloneBase,
      gravatar: this.config.gravatar,
    };
  }

  async embedded(groupId: number, actor: Actor | undefined, withShared: boolean) {
    const all = await this.projects.list(
      actor,
      { namespaceId: groupId, orderBy: 'id', sort: 'asc' },
      { page: 1, perPage: 100_000, offset: 0 },
      { count: false, lean: true },
    );
    const shared = withShared ? await this.projects.sharedWithGroup(groupId, actor) : [];
    const embedded = await this.serialize([...all.rows, ...shared], actor);
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
      const { rows, total } = await this.projects.list(
        actor,
        { ...f, archived: q.archived === true ? undefined : false, namespaceId: groupId },
        page,
      );
      if (q.simple)
        return new Page(
          rows.map((p) => serializeProjectSimple(p, this.urls)),
          total,
          page,
        );
      return new Page(await this.serialize(rows, actor), total, page);
    };
  }

  async repositorySizes(groupIds: number[]): Promise<Map<number, number>> {
    return this.projects.repositorySizes(groupIds);
  }

  async transfer(project: string, groupId: number, actor: Actor): Promise<void> {
    await this.commands.execute(new ChangeProject(project, { kind: 'transfer', namespaceId: groupId }, actor));
  }

  /**
   * GitLab's plain Project entity, which group answers embed and group project lists use for every
   * caller: no `permissions`, and never `runners_token` nor `import_error` (those need the
   * `user_can_admin_project` option, which only the single-project endpoints set).
   */
  private async serialize(rows: ProjectRow[], actor: Actor | undefined) {
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
        sshCloneBase: this.urls.sshCloneBase,
        actor,
        sharedWith: links.get(p.id),
        withoutPermissions: true,
        adminFields: false,
        forkedFrom: p.forked_from_id === null ? undefined : sources.get(p.forked_from_id),
      }),
    );
  }
}
