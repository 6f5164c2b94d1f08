import { ACCESS } from '@app/groups';
import {
  AdminOnly,
  AtLeastOneOf,
  Authenticated,
  CurrentActor,
  GitlabParams,
  intParam,
  Page,
  PaginationDto,
  pageParams,
  ToBool,
  validateParams,
  type Actor,
} from '@app/platform';
import { Controller, Delete, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBody } from '@nestjs/swagger';
import { IsBoolean, IsDefined, IsOptional, IsString } from 'class-validator';
import { AddDeployKey } from './add-deploy-key.command';
import { EnableDeployKey } from './enable-deploy-key.command';
import { RemoveDeployKey } from './remove-deploy-key.command';
import { UpdateDeployKey } from './update-deploy-key.command';
import { DeployKeyQueries } from './deploy-key.queries';
import { ProjectQueries } from '../projects/project.queries';
import { serializeDeployKey, serializeProjectDeployKey } from './deploy-key.serializer';

export class AddDeployKeyDto {
  @IsDefined() @IsString() key: string;
  @IsDefined() @IsString() title: string;
  @IsOptional() @ToBool() @IsBoolean() can_push?: boolean;
}

export class UpdateDeployKeyDto {
  @IsOptional() @IsString() title?: string;
  @IsOptional() @ToBool() @IsBoolean() can_push?: boolean;
  @AtLeastOneOf(['title', 'can_push']) readonly _title_or_can_push?: never;
}

/**
 * Deploy keys (GitLab API v4, 10.x after its 10.3.4 and 10.6.6 security releases): every project
 * route is for the project's maintainers and owners and administrators (`authorize_admin_project`):
 * 401 anonymous, 404 `Project Not Found` to whoever cannot see the project, 403 to the other members
 * and users. Grape runs that check before it validates the parameters, so the bodies are validated
 * after it here too.
 */
@Controller()
@Authenticated()
export class DeployKeysController {
  constructor(
    private readonly commands: CommandBus,
    private readonly projects: ProjectQueries,
    private readonly keys: DeployKeyQueries,
  ) {}

  /** Every key of the instance: administrators only. */
  @Get('deploy_keys')
  @AdminOnly()
  async all(@GitlabParams() q: PaginationDto) {
    const page = pageParams(q);
    const { rows, total } = await this.keys.all(page);
    return new Page(rows.map(serializeDeployKey), total, page);
  }

  @Get('projects/:id/deploy_keys')
  async list(@Param('id') id: string, @GitlabParams() q: PaginationDto, @CurrentActor() actor: Actor) {
    const project = await this.projects.require(id, actor, ACCESS.maintainer);
    const page = pageParams(q);
    const { rows, total } = await this.keys.forProject(project.id, page);
    return new Page(rows.map(serializeProjectDeployKey), total, page);
  }

  /** A key not enabled on the project: GitLab's `find_by!` miss, `404 Not found`. */
  @Get('projects/:id/deploy_keys/:key_id')
  async get(@Param('id') id: string, @Param('key_id', intParam('key_id')) keyId: number, @CurrentActor() actor: Actor) {
    const project = await this.projects.require(id, actor, ACCESS.maintainer);
    return serializeProjectDeployKey(await this.keys.inProject(project.id, keyId));
  }

  /** 201 with the key and this project's `can_push`, also when the key was already there (unchanged). */
  @Post('projects/:id/deploy_keys')
  @ApiBody({ type: AddDeployKeyDto })
  async add(@Param('id') id: string, @GitlabParams() params: Record<string, unknown>, @CurrentActor() actor: Actor) {
    const project = await this.projects.require(id, actor, ACCESS.maintainer);
    const p = await validateParams(AddDeployKeyDto, params);
    const keyId = await this.commands.execute(new AddDeployKey(project, p.title, p.key, p.can_push ?? false, actor));
    return serializeProjectDeployKey(await this.keys.inProject(project.id, keyId));
  }

  @Put('projects/:id/deploy_keys/:key_id')
  @ApiBody({ type: UpdateDeployKeyDto })
  async update(
    @Param('id') id: string,
    @Param('key_id', intParam('key_id')) keyId: number,
    @GitlabParams() params: Record<string, unknown>,
    @CurrentActor() actor: Actor,
  ) {
    const project = await this.projects.require(id, actor, ACCESS.maintainer);
    const p = await validateParams(UpdateDeployKeyDto, params);
    await this.commands.execute(new UpdateDeployKey(project, keyId, { title: p.title, canPush: p.can_push }));
    return serializeProjectDeployKey(await this.keys.inProject(project.id, keyId));
  }

  /** 201 with GitLab's SSHKey entity (no `can_push`); `404 Deploy Key Not Found` for a key out of reach. */
  @Post('projects/:id/deploy_keys/:key_id/enable')
  async enable(
    @Param('id') id: string,
    @Param('key_id', intParam('key_id')) keyId: number,
    @CurrentActor() actor: Actor,
  ) {
    await this.commands.execute(new EnableDeployKey(id, keyId, actor));
    return serializeDeployKey(await this.keys.get(keyId));
  }

  /** 204; `404 Deploy Key Not Found` for a key not on the project. */
  @Delete('projects/:id/deploy_keys/:key_id')
  @HttpCode(204)
  async remove(
    @Param('id') id: string,
    @Param('key_id', intParam('key_id')) keyId: number,
    @CurrentActor() actor: Actor,
  ): Promise<void> {
    await this.commands.execute(new RemoveDeployKey(id, keyId, actor));
  }
}
