import { AdminOnly, BadParameter, Clock, GitlabParams, intParam, Page, pageParams, RouteIntPipe } from '@app/platform';
import { Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { CreateAccessToken, RevokeImpersonationToken } from '../commands/access-token.commands';
import { isDate } from '../domain/access-token';
import { UserQueries } from '../queries/user.queries';
import { serializeImpersonationToken } from './credential.serializer';
import { ReadUserScope } from './private-token.guard';
import { CreateImpersonationTokenDto, ListImpersonationTokensDto } from './users.dto';

/**
 * Administrators' tokens that act as a user. Lode keeps only digests: `token` is in the create answer only.
 * Part of GitLab's Users API, so its GETs take a `read_user` token as well.
 */
@Controller('users/:user_id/impersonation_tokens')
@AdminOnly()
@ReadUserScope()
export class ImpersonationTokensController {
  constructor(
    private readonly commands: CommandBus,
    private readonly users: UserQueries,
    private readonly clock: Clock,
  ) {}

  private today(): string {
    return this.clock.now().toISOString().slice(0, 10);
  }

  @Get()
  async list(@Param('user_id', RouteIntPipe) userId: number, @GitlabParams() q: ListImpersonationTokensDto) {
    await this.users.get(userId);
    const page = pageParams(q);
    const { rows, total } = await this.users.impersonationTokens(userId, q.state ?? 'all', page, this.today());
    return new Page(
      rows.map((t) => serializeImpersonationToken(t, this.today())),
      total,
      page,
    );
  }

  @Get(':impersonation_token_id')
  async get(
    @Param('user_id', RouteIntPipe) userId: number,
    @Param('impersonation_token_id', intParam('impersonation_token_id')) tokenId: number,
  ) {
    await this.users.get(userId);
    return serializeImpersonationToken(await this.users.impersonationToken(userId, tokenId), this.today());
  }

  @Post()
  async create(@Param('user_id', RouteIntPipe) userId: number, @GitlabParams() p: CreateImpersonationTokenDto) {
    const expiresAt = p.expires_at === undefined || p.expires_at === null || p.expires_at === '' ? null : p.expires_at;
    if (expiresAt !== null && !isDate(expiresAt)) throw new BadParameter('expires_at is invalid');
    await this.users.get(userId);
    const { tokenId, secret } = await this.commands.execute(
      new CreateAccessToken({ userId, name: p.name, scopes: p.scopes, impersonation: true, expiresAt }),
    );
    return serializeImpersonationToken(await this.users.impersonationToken(userId, tokenId), this.today(), secret);
  }

  @Delete(':impersonation_token_id')
  @HttpCode(204)
  async revoke(
    @Param('user_id', RouteIntPipe) userId: number,
    @Param('impersonation_token_id', intParam('impersonation_token_id')) tokenId: number,
  ): Promise<void> {
    await this.users.get(userId);
    await this.commands.execute(new RevokeImpersonationToken(userId, tokenId));
  }
}
