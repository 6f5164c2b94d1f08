import { repositoryPath } from '@app/git';
import { AdminOnly, CurrentActor, LodeConfig, type Actor } from '@app/platform';
import { Controller, Get, Param } from '@nestjs/common';
import { join, relative } from 'node:path';
import { ProjectQueries } from './project.queries';

/**
 * GitLab's `GET /projects/:id/storage` (administrators only): where the project's repository is kept,
 * GitLab's ProjectRepositoryStorage. Lode keeps repositories in GitLab's hashed layout under its data
 * directory's `repositories` (`repositoryPath`), its one storage, `default`; `disk_path` is relative
 * to it and without `.git`, as GitLab's.
 */
@Controller('projects/:id/storage')
@AdminOnly()
export class ProjectStorageController {
  constructor(
    private readonly projects: ProjectQueries,
    private readonly config: LodeConfig,
  ) {}

  @Get()
  async get(@Param('id') id: string, @CurrentActor() actor: Actor) {
    const project = await this.projects.getVisible(id, actor);
    const dataDir = this.config.dataDir;
    const path = relative(join(dataDir, 'repositories'), repositoryPath(dataDir, project.id));
    return {
      project_id: project.id,
      disk_path: path.replace(/\.git$/, ''),
      created_at: new Date(project.created_at).toISOString(),
      repository_storage: 'default',
    };
  }
}
