import { projectRepo, type RepoRef } from '@app/git';
import type { Actor } from '@app/platform';
import { ProjectAccessPolicy, type ProjectQueries, type ProjectRow } from '@app/projects';

/**
 * GitLab's `authorize! :download_code` in front of every repository read: a project the caller cannot
 * see is 404 (`404 Project Not Found`), a visible one whose code the caller may not read (a guest of a
 * private project) is 403.
 */
export async function readableRepository(
  projects: ProjectQueries,
  id: string,
  actor: Actor | undefined,
): Promise<{ project: ProjectRow; repo: RepoRef }> {
  const project = await projects.getVisible(id, actor);
  ProjectAccessPolicy.requireDownloadCode(project, actor);
  return { project, repo: projectRepo(project.id) };
}
