import { AdminOnly, CurrentActor, GitlabParams, type Actor } from '@app/platform';
import { Controller, Delete, Get, HttpCode, Param, Put } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ProjectQueries } from './project.queries';
import { CustomAttributeDto } from './projects.dto';
import { RemoveProjectCustomAttribute } from './remove-project-custom-attribute.command';
import { SetProjectCustomAttribute } from './set-project-custom-attribute.command';

/** GitLab's admin-only custom attributes of projects, which `GET /projects?custom_attributes[k]=v` filters on. */
@Controller('projects/:id/custom_attributes')
@AdminOnly()
export class ProjectCustomAttributesController {
  constructor(
    private readonly commands: CommandBus,
    private readonly projects: ProjectQueries,
  ) {}

  @Get()
  async list(@Param('id') id: string, @CurrentActor() actor: Actor) {
    return this.projects.customAttributes((await this.projects.getVisible(id, actor)).id);
  }

  @Get(':key')
  async get(@Param('id') id: string, @Param('key') key: string, @CurrentActor() actor: Actor) {
    return this.projects.customAttribute((await this.projects.getVisible(id, actor)).id, key);
  }

  @Put(':key')
  async set(
    @Param('id') id: string,
    @Param('key') key: string,
    @GitlabParams() p: CustomAttributeDto,
    @CurrentActor() actor: Actor,
  ) {
    const project = await this.commands.execute(new SetProjectCustomAttribute(id, key, p.value, actor));
    return this.projects.customAttribute(project.id, key);
  }

  @Delete(':key')
  @HttpCode(204)
  async remove(@Param('id') id: string, @Param('key') key: string, @CurrentActor() actor: Actor): Promise<void> {
    await this.commands.execute(new RemoveProjectCustomAttribute(id, key, actor));
  }
}
