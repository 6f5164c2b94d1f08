import { ACCESS } from '@app/groups';
import { LodeConfig, type Actor } from '@app/platform';
import { Injectable } from '@nestjs/common';
import { ProjectSharingQueries } from '../sharing/project-sharing.queries';
import { ProjectQueries, type ProjectRow } from './project.queries';
import { serializeProject, serializeProjectSimple } from './project.serializer';

/** Which variant of GitLab's Project entity one project's answer uses. */
export interface Presentation {
  /** ProjectWithAccess (GET /projects/:id) rather than the plain Project entity (answers of writes). */
  permissions?: boolean;
  statistics?: boolean;
  /** `runners_token` and `import_error` for those who administer the project (GitLab's `user_can_admin_project`). */
  adminFields?: boolean;
}

/** GitLab shows `statistics` to administrators and to reporters and above. */
export const readsStatistics = (p: ProjectRow, actor: Actor | undefined) =>
  actor !== undefined && (actor.isAdmin || p.access >= ACCESS.reporter);

/**
 * Every answer that shows projects goes through here: the URL context (LODE_EXTERNAL_URL and the SSH
 * clone base) is taken from configuration once, and the sequence "rows, the fork sources the caller
 * may see, serialize" is written once per variant of GitLab's entity.
 */
@Injectable()
export class ProjectPresenter {
  readonly urls: { externalUrl: string; sshCloneBase: string };

  constructor(
    private readonly projects: ProjectQueries,
    private readonly shares: ProjectSharingQueries,
    config: LodeConfig,
  ) {
    this.urls = { externalUrl: config.externalUrl, sshCloneBase: config.sshCloneBase };
  }

  /** GitLab's BasicProjectDetails: anonymous callers and `simple=true`. */
  simple(row: ProjectRow) {
    return serializeProjectSimple(row, this.urls);
  }

  /** One project, as `how` says. */
  async one(row: ProjectRow, actor: Actor | undefined, how: Presentation) {
    const sources = await this.projects.forkSources([row], actor);
    return serializeProject(row, {
      ...this.urls,
      actor,
      statistics: how.statistics,
      forkedFrom: row.forked_from_id === null ? undefined : sources.get(row.forked_from_id),
      withoutPermissions: !how.permissions,
      adminFields: how.adminFields === true,
    });
  }

  /**
   * A page of projects the way GitLab's lists show it: simple for `simple=true` and for anonymous
   * callers, otherwise with `permissions` and without the administrators' fields.
   */
  async page(rows: ProjectRow[], actor: Actor | undefined, options: { simple?: boolean; statistics?: boolean }) {
    if (options.simple || !actor) return rows.map((p) => this.simple(p));
    const sources = await this.projects.forkSources(rows, actor);
    return rows.map((p) =>
      serializeProject(p, {
        ...this.urls,
        actor,
        statistics: options.statistics && readsStatistics(p, actor),
        adminFields: false,
        forkedFrom: p.forked_from_id === null ? undefined : sources.get(p.forked_from_id),
      }),
    );
  }

  /**
   * GitLab's plain Project entity, which group answers embed and group project lists use for every
   * caller: no `permissions`, and never `runners_token` nor `import_error` (those need the
   * `user_can_admin_project` option, which only the single-project endpoints set).
   */
  async plain(rows: ProjectRow[], actor: Actor | undefined) {
    // Rows read with the full columns carry their shares (the serializer reads them); lean ones (a
    // group's embedded projects) are looked up together.
    const lean = rows.filter((p) => p.shared_with === null).map((p) => p.id);
    const [links, sources] = await Promise.all([this.shares.sharedWith(lean), this.projects.forkSources(rows, actor)]);
    return rows.map((p) =>
      serializeProject(p, {
        ...this.urls,
        actor,
        sharedWith: links.get(p.id),
        withoutPermissions: true,
        adminFields: false,
        forkedFrom: p.forked_from_id === null ? undefined : sources.get(p.forked_from_id),
      }),
    );
  }
}
