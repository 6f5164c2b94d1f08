import { GitRepositories, projectRepo } from '@app/git';
import { AdminOnly, collectAsStreamed, CurrentActor, GitlabParams, NotFound, ToBool, type Actor } from '@app/platform';
import { ProjectAccessPolicy, ProjectQueries } from '@app/projects';
import { Controller, Get, Param, Res } from '@nestjs/common';
import { IsBoolean, IsOptional } from 'class-validator';
import type { Response } from 'express';
import { languageShares } from './languages';

/** Files weighed at most per answer: the statistics of a huge tree stay a bounded piece of work. */
const LANGUAGE_FILES = 100_000;

export class SnapshotDto {
  @IsOptional() @ToBool() @IsBoolean() wiki?: boolean;
}

/** Reads of a project's repository as a whole: its languages (GitLab 10.8) and its snapshot (10.7). */
@Controller('projects/:id')
export class ProjectRepositoryController {
  constructor(
    private readonly projects: ProjectQueries,
    private readonly git: GitRepositories,
  ) {}

  /**
   * Anyone who sees the project (GitLab asks no more); `{}` for an empty repository, and for a caller who
   * may not read the code, so the answer never tells what it holds.
   */
  @Get('languages')
  async languages(@Param('id') id: string, @CurrentActor() actor?: Actor): Promise<Record<string, number>> {
    const project = await this.projects.getVisible(id, actor);
    if (!project.default_branch || !ProjectAccessPolicy.mayDownloadCode(project, actor)) return {};
    const repo = projectRepo(project.id);
    const commit = await this.git.resolveCommit(repo, project.default_branch);
    if (!commit) return {};
    return languageShares(await this.git.sizedFiles(repo, commit.id, LANGUAGE_FILES));
  }

  /**
   * A tar of the bare repository, streamed (GitLab's `SendSnapshot`: no length, "possibly inconsistent").
   * Administrators only, checked before the project is looked up, as GitLab's
   * `authorize_read_git_snapshot!` (10.x-13.x: `authenticated_with_full_private_access!`). Lode keeps
   * no wikis, so `wiki=true` is a 404.
   */
  @Get('snapshot')
  @AdminOnly()
  async snapshot(
    @Param('id') id: string,
    @GitlabParams() q: SnapshotDto,
    @Res() res: Response,
    @CurrentActor() actor: Actor,
  ): Promise<void> {
    const project = await this.projects.getVisible(id, actor);
    if (q.wiki) throw new NotFound('Wiki Repository');
    const stream = await this.git.snapshot(projectRepo(project.id));
    if (!stream) throw new NotFound('Repository');
    res.status(200);
    res.setHeader('Content-Type', 'application/x-tar');
    res.setHeader('Content-Disposition', 'attachment; filename="snapshot.tar"');
    res.setHeader('Content-Transfer-Encoding', 'binary');
    res.on('close', () => {
      if (!res.writableFinished) stream.destroy();
    });
    stream.on('error', () => res.destroy());
    collectAsStreamed(stream);
    stream.pipe(res);
  }
}
