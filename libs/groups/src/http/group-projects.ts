import type { Actor, Page } from '@app/platform';

/** A project as a group answer embeds it: GitLab's plain Project entity, serialized by the projects context. */
export type EmbeddedProjectJson = Record<string, unknown>;

/**
 * The projects a group answer shows, which the projects context (to the right) owns: it implements
 * this port, as it does NamespaceContents. The port answers serialized JSON, not project rows, so
 * this context never learns a project's columns nor its serializer: a new project field touches
 * projects only.
 */
export abstract class GroupProjects {
  /** GroupDetail's `projects` and, with `withShared`, `shared_projects`, as far as the caller may see them. */
  abstract embedded(
    groupId: number,
    actor: Actor | undefined,
    withShared: boolean,
  ): Promise<{ projects: EmbeddedProjectJson[]; sharedProjects: EmbeddedProjectJson[] }>;

  /**
   * `GET /groups/:id/projects`: checks the parameters first (400 before the group's 404, as a DTO
   * would), then gives the listing to run for the group.
   */
  abstract listing(
    params: Record<string, unknown>,
  ): Promise<(groupId: number, actor: Actor | undefined) => Promise<Page<EmbeddedProjectJson>>>;

  /** The summed repository size of each group's own projects (groups without projects are absent). */
  abstract repositorySizes(groupIds: number[]): Promise<Map<number, number>>;

  /** Moves a project (id or URL-encoded path) into the group: `POST /groups/:id/projects/:project_id`. */
  abstract transfer(project: string, groupId: number, actor: Actor): Promise<void>;
}
