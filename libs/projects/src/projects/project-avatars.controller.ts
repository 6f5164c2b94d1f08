import { CurrentActor, RouteIntPipe, type Actor } from '@app/platform';
import { ProjectAvatarStore, sendAvatar } from '@app/users';
import { Controller, Get, Param, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ProjectQueries } from './project.queries';

/**
 * Serves project avatars where `avatar_url` points (`/uploads/-/system/project/avatar/:id/:filename`),
 * with the user avatars' headers; as GitLab's `read_project`, only to those who may see the project (404 otherwise).
 */
@Controller('uploads/-/system/project/avatar')
export class ProjectAvatarsController {
  constructor(
    private readonly avatars: ProjectAvatarStore,
    private readonly projects: ProjectQueries,
  ) {}

  @Get(':id/:filename')
  async serve(
    @Param('id', RouteIntPipe) id: number,
    @Param('filename') filename: string,
    @Res() res: Response,
    @CurrentActor() actor?: Actor,
  ): Promise<void> {
    await this.projects.getVisible(id, actor);
    await sendAvatar(this.avatars, id, filename, res);
  }
}
