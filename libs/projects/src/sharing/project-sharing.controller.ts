import { PROJECT_ACCESS_LEVELS, expiresAtParam } from '@app/groups';
import { Authenticated, CurrentActor, GitlabParams, intParam, Nullable, ToInt, type Actor } from '@app/platform';
import { Controller, Delete, HttpCode, Param, Post } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { IsDefined, IsIn, IsInt, IsOptional, IsString } from 'class-validator';
import { ProjectSharingQueries } from './project-sharing.queries';
import { ShareProject } from './share-project.command';
import { UnshareProject } from './unshare-project.command';

export class ShareProjectDto {
  @IsDefined() @ToInt() @IsInt() group_id: number;
  // Decorators apply bottom-up: the type is checked first (`is invalid`), then the values.
  @IsDefined() @ToInt() @IsIn(PROJECT_ACCESS_LEVELS) @IsInt() group_access: number;
  @Nullable() @IsOptional() @IsString() expires_at?: string | null;
}

/** Sharing a project with a group (`POST /projects/:id/share`, `DELETE /projects/:id/share/:group_id`). */
@Controller('projects/:id/share')
export class ProjectSharingController {
  constructor(
    private readonly commands: CommandBus,
    private readonly shares: ProjectSharingQueries,
  ) {}

  @Post()
  @Authenticated()
  async share(@Param('id') id: string, @GitlabParams() p: ShareProjectDto, @CurrentActor() actor: Actor) {
    const project = await this.commands.execute(
      new ShareProject(id, p.group_id, p.group_access, expiresAtParam(p.expires_at), actor),
    );
    return this.shares.groupLink(project.id, p.group_id);
  }

  @Delete(':group_id')
  @Authenticated()
  @HttpCode(204)
  async unshare(
    @Param('id') id: string,
    @Param('group_id', intParam('group_id')) groupId: number,
    @CurrentActor() actor: Actor,
  ): Promise<void> {
    await this.commands.execute(new UnshareProject(id, groupId, actor));
  }
}
