import {
  AdminOnly,
  Authenticated,
  BadParameter,
  CurrentActor,
  GitlabParams,
  intParam,
  LodeConfig,
  Page,
  PaginationDto,
  pageParams,
  RouteIntPipe,
  type Actor,
} from '@app/platform';
import { Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { AddEmail, RemoveEmail } from '../commands/email.commands';
import { AddGpgKey, RemoveGpgKey } from '../commands/gpg-key.commands';
import { AddSshKey, RemoveSshKey } from '../commands/ssh-key.commands';
import { UserQueries } from '../queries/user.queries';
import { serializeEmail, serializeGpgKey, serializeSshKey } from './credential.serializer';
import { ReadUserScope } from './private-token.guard';
import { parseDateTime } from './request-files';
import { AddEmailDto, AddGpgKeyDto, AddSshKeyDto } from './users.dto';

/**
 * SSH keys, GPG keys and secondary e-mails: `/user/...` for the caller's own, `/users/:id/...`
 * for administrators acting on anyone's. Both routes run the same commands. Lists are paginated,
 * as GitLab's (`present paginate(current_user.keys)`).
 */
@Controller()
@ReadUserScope()
export class CredentialsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly users: UserQueries,
    private readonly config: LodeConfig,
  ) {}

  private async userId(id: number): Promise<number> {
    return (await this.users.get(id)).id; // 404 User Not Found
  }

  // SSH keys

  @Get('user/keys')
  @Authenticated()
  async ownSshKeys(@CurrentActor() actor: Actor, @GitlabParams() q: PaginationDto) {
    const page = pageParams(q);
    const { rows, total } = await this.users.sshKeys(actor.id, page);
    return new Page(rows.map(serializeSshKey), total, page);
  }

  @Get('user/keys/:key_id')
  @Authenticated()
  async ownSshKey(@CurrentActor() actor: Actor, @Param('key_id', intParam('key_id')) keyId: number) {
    return serializeSshKey(await this.users.sshKey(actor.id, keyId));
  }

  @Post('user/keys')
  @Authenticated()
  async addOwnSshKey(@CurrentActor() actor: Actor, @GitlabParams() p: AddSshKeyDto) {
    return this.addSshKey(actor.id, p);
  }

  @Delete('user/keys/:key_id')
  @Authenticated()
  @HttpCode(204)
  async removeOwnSshKey(
    @CurrentActor() actor: Actor,
    @Param('key_id', intParam('key_id')) keyId: number,
  ): Promise<void> {
    await this.commands.execute(new RemoveSshKey(actor.id, keyId));
  }

  @Get('users/:id/keys')
  @AdminOnly()
  async sshKeys(@Param('id', RouteIntPipe) id: number, @GitlabParams() q: PaginationDto) {
    const page = pageParams(q);
    const { rows, total } = await this.users.sshKeys(await this.userId(id), page);
    return new Page(rows.map(serializeSshKey), total, page);
  }

  /**
   * GitLab 14.9: anyone who may see the user reads one of their keys (no administrator needed);
   * another user's key id is 404 Key.
   */
  @Get('users/:id/keys/:key_id')
  async sshKeyOf(@Param('id', RouteIntPipe) id: number, @Param('key_id', intParam('key_id')) keyId: number) {
    return serializeSshKey(await this.users.sshKey(await this.userId(id), keyId));
  }

  @Post('users/:id/keys')
  @AdminOnly()
  async addSshKeyFor(@Param('id', RouteIntPipe) id: number, @GitlabParams() p: AddSshKeyDto) {
    return this.addSshKey(await this.userId(id), p);
  }

  @Delete('users/:id/keys/:key_id')
  @AdminOnly()
  @HttpCode(204)
  async removeSshKeyOf(
    @Param('id', RouteIntPipe) id: number,
    @Param('key_id', intParam('key_id')) keyId: number,
  ): Promise<void> {
    await this.commands.execute(new RemoveSshKey(await this.userId(id), keyId));
  }

  private async addSshKey(userId: number, p: AddSshKeyDto) {
    const keyId = await this.commands.execute(new AddSshKey(userId, p.title, p.key, expiry(p.expires_at)));
    return serializeSshKey(await this.users.sshKey(userId, keyId));
  }

  // GPG keys. GitLab's API documentation answers a created key inside an array; GitLab's code (10.0 on)
  // sends the bare object, which python-gitlab, Terraform's provider and glab decode. Lode answers the
  // array unless LODE_GPG_KEY_CREATE_ANSWER=object.

  @Get('user/gpg_keys')
  @Authenticated()
  async ownGpgKeys(@CurrentActor() actor: Actor, @GitlabParams() q: PaginationDto) {
    const page = pageParams(q);
    const { rows, total } = await this.users.gpgKeys(actor.id, page);
    return new Page(rows.map(serializeGpgKey), total, page);
  }

  @Get('user/gpg_keys/:key_id')
  @Authenticated()
  async ownGpgKey(@CurrentActor() actor: Actor, @Param('key_id', intParam('key_id')) keyId: number) {
    return serializeGpgKey(await this.users.gpgKey(actor.id, keyId));
  }

  @Post('user/gpg_keys')
  @Authenticated()
  async addOwnGpgKey(@CurrentActor() actor: Actor, @GitlabParams() p: AddGpgKeyDto) {
    return this.addGpgKey(actor.id, p);
  }

  @Delete('user/gpg_keys/:key_id')
  @Authenticated()
  @HttpCode(204)
  async removeOwnGpgKey(
    @CurrentActor() actor: Actor,
    @Param('key_id', intParam('key_id')) keyId: number,
  ): Promise<void> {
    await this.commands.execute(new RemoveGpgKey(actor.id, keyId));
  }

  @Get('users/:id/gpg_keys')
  @AdminOnly()
  async gpgKeys(@Param('id', RouteIntPipe) id: number, @GitlabParams() q: PaginationDto) {
    const page = pageParams(q);
    const { rows, total } = await this.users.gpgKeys(await this.userId(id), page);
    return new Page(rows.map(serializeGpgKey), total, page);
  }

  @Get('users/:id/gpg_keys/:key_id')
  @AdminOnly()
  async gpgKey(@Param('id', RouteIntPipe) id: number, @Param('key_id', intParam('key_id')) keyId: number) {
    return serializeGpgKey(await this.users.gpgKey(await this.userId(id), keyId));
  }

  @Post('users/:id/gpg_keys')
  @AdminOnly()
  async addGpgKeyFor(@Param('id', RouteIntPipe) id: number, @GitlabParams() p: AddGpgKeyDto) {
    return this.addGpgKey(await this.userId(id), p);
  }

  @Delete('users/:id/gpg_keys/:key_id')
  @AdminOnly()
  @HttpCode(204)
  async removeGpgKeyOf(
    @Param('id', RouteIntPipe) id: number,
    @Param('key_id', intParam('key_id')) keyId: number,
  ): Promise<void> {
    await this.commands.execute(new RemoveGpgKey(await this.userId(id), keyId));
  }

  private async addGpgKey(userId: number, p: AddGpgKeyDto) {
    const keyId = await this.commands.execute(new AddGpgKey(userId, p.key));
    const key = serializeGpgKey(await this.users.gpgKey(userId, keyId));
    return this.config.gpgKeyCreateAnswer === 'object' ? key : [key];
  }

  // E-mails

  @Get('user/emails')
  @Authenticated()
  async ownEmails(@CurrentActor() actor: Actor, @GitlabParams() q: PaginationDto) {
    const page = pageParams(q);
    const { rows, total } = await this.users.emails(actor.id, page);
    return new Page(rows.map(serializeEmail), total, page);
  }

  @Get('user/emails/:email_id')
  @Authenticated()
  async ownEmail(@CurrentActor() actor: Actor, @Param('email_id', intParam('email_id')) emailId: number) {
    return serializeEmail(await this.users.email(actor.id, emailId));
  }

  @Post('user/emails')
  @Authenticated()
  async addOwnEmail(@CurrentActor() actor: Actor, @GitlabParams() p: AddEmailDto) {
    return this.addEmail(actor.id, p);
  }

  @Delete('user/emails/:email_id')
  @Authenticated()
  @HttpCode(204)
  async removeOwnEmail(
    @CurrentActor() actor: Actor,
    @Param('email_id', intParam('email_id')) emailId: number,
  ): Promise<void> {
    await this.commands.execute(new RemoveEmail(actor.id, emailId));
  }

  @Get('users/:id/emails')
  @AdminOnly()
  async emails(@Param('id', RouteIntPipe) id: number, @GitlabParams() q: PaginationDto) {
    const page = pageParams(q);
    const { rows, total } = await this.users.emails(await this.userId(id), page);
    return new Page(rows.map(serializeEmail), total, page);
  }

  @Post('users/:id/emails')
  @AdminOnly()
  async addEmailFor(@Param('id', RouteIntPipe) id: number, @GitlabParams() p: AddEmailDto) {
    return this.addEmail(await this.userId(id), p);
  }

  @Delete('users/:id/emails/:email_id')
  @AdminOnly()
  @HttpCode(204)
  async removeEmailOf(
    @Param('id', RouteIntPipe) id: number,
    @Param('email_id', intParam('email_id')) emailId: number,
  ): Promise<void> {
    await this.commands.execute(new RemoveEmail(await this.userId(id), emailId));
  }

  private async addEmail(userId: number, p: AddEmailDto) {
    const emailId = await this.commands.execute(new AddEmail(userId, p.email.trim()));
    return serializeEmail(await this.users.email(userId, emailId));
  }
}

/** `expires_at` as ISO 8601; blank or null: never. Grape's coercion error when it is no date. */
function expiry(value: string | null | undefined): string | null {
  if (value === undefined || value === null || value.trim() === '') return null;
  const d = parseDateTime(value);
  if (!d) throw new BadParameter('expires_at is invalid');
  return d.toISOString();
}
