import { AdminOnly, GitlabParams, RouteIntPipe } from '@app/platform';
import { Controller, Delete, Get, HttpCode, Param, Put } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { RemoveUserCustomAttribute, SetUserCustomAttribute } from '../commands/custom-attribute.commands';
import { UserQueries } from '../queries/user.queries';
import { ReadUserScope } from './private-token.guard';
import { CustomAttributeValueDto } from './users.dto';

/** GitLab's admin-only custom attributes of users, which `GET /users?custom_attributes[k]=v` filters on. */
@Controller('users/:id/custom_attributes')
@AdminOnly()
@ReadUserScope()
export class UserCustomAttributesController {
  constructor(
    private readonly commands: CommandBus,
    private readonly users: UserQueries,
  ) {}

  @Get()
  async list(@Param('id', RouteIntPipe) id: number) {
    await this.users.get(id);
    return this.users.customAttributes(id);
  }

  @Get(':key')
  async get(@Param('id', RouteIntPipe) id: number, @Param('key') key: string) {
    await this.users.get(id);
    return this.users.customAttribute(id, key);
  }

  @Put(':key')
  async set(
    @Param('id', RouteIntPipe) id: number,
    @Param('key') key: string,
    @GitlabParams() p: CustomAttributeValueDto,
  ) {
    await this.users.get(id);
    await this.commands.execute(new SetUserCustomAttribute(id, key, p.value));
    return this.users.customAttribute(id, key);
  }

  @Delete(':key')
  @HttpCode(204)
  async remove(@Param('id', RouteIntPipe) id: number, @Param('key') key: string): Promise<void> {
    await this.users.get(id);
    await this.users.customAttribute(id, key); // GitLab's `find_by!(key:).destroy`: a miss answers `404 Not found`
    await this.commands.execute(new RemoveUserCustomAttribute(id, key));
  }
}
