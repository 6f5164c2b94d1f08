import { AdminOnly, CurrentActor, Forbidden, GitlabParams, type Actor } from '@app/platform';
import { Controller, Delete, Get, HttpCode, Param, Put } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ChangeGroupCustomAttribute } from '../commands/group-custom-attribute.commands';
import { GroupQueries } from '../queries/group.queries';
import { NamespaceAccess } from '../queries/namespace-access';
import { CustomAttributeValueDto } from './groups.dto';

/**
 * GitLab's admin-only custom attributes of groups, which `GET /groups?custom_attributes[k]=v` filters on.
 * The groups API authenticates writes only, so an anonymous read meets the admin check: 403, not 401.
 */
@Controller('groups/:id/custom_attributes')
export class GroupCustomAttributesController {
  constructor(
    private readonly commands: CommandBus,
    private readonly access: NamespaceAccess,
    private readonly groups: GroupQueries,
  ) {}

  @Get()
  async list(@Param('id') id: string, @CurrentActor() actor?: Actor) {
    if (!actor?.isAdmin) throw new Forbidden();
    return this.groups.customAttributes((await this.access.visibleGroup(id, actor)).id);
  }

  @Get(':key')
  async get(@Param('id') id: string, @Param('key') key: string, @CurrentActor() actor?: Actor) {
    if (!actor?.isAdmin) throw new Forbidden();
    return this.groups.customAttribute((await this.access.visibleGroup(id, actor)).id, key);
  }

  @Put(':key')
  @AdminOnly()
  async set(
    @Param('id') id: string,
    @Param('key') key: string,
    @GitlabParams() p: CustomAttributeValueDto,
    @CurrentActor() actor: Actor,
  ) {
    const group = await this.access.visibleGroup(id, actor);
    await this.commands.execute(new ChangeGroupCustomAttribute(group.id, key, p.value));
    return this.groups.customAttribute(group.id, key);
  }

  @Delete(':key')
  @AdminOnly()
  @HttpCode(204)
  async remove(@Param('id') id: string, @Param('key') key: string, @CurrentActor() actor: Actor): Promise<void> {
    const group = await this.access.visibleGroup(id, actor);
    await this.commands.execute(new ChangeGroupCustomAttribute(group.id, key, undefined));
  }
}
