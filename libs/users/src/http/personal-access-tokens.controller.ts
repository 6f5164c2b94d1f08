import {
  AdminOnly,
  Authenticated,
  BadParameter,
  BadRequestMessage,
  Clock,
  CurrentActor,
  GitlabParams,
  intParam,
  NotFound,
  Page,
  pageParams,
  RouteIntPipe,
  Unauthorized,
  type Actor,
} from '@app/platform';
import { Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { CreateAccessToken } from '../commands/access-token.commands';
import { RevokePersonalAccessToken } from '../commands/revoke-personal-access-token.command';
import { RotatePersonalAccessToken } from '../commands/rotate-personal-access-token.command';
import { isDate, PERSONAL_SCOPES, type TokenActor } from '../domain/access-token';
import { UserQueries } from '../queries/user.queries';
import { serializePersonalAccessToken } from './credential.serializer';
import { AnyTokenScope } from './private-token.guard';
import { parseDateTime } from './request-files';
import { CreatePersonalAccessTokenDto, ListPersonalAccessTokensDto, RotatePersonalAccessTokenDto } from './users.dto';

/**
 * GitLab's Personal Access Tokens API (16.x) over the tokens Lode already has (`access_tokens`, the
 * `token-<id>` streams): the same digests, scopes, expiry and revocation as impersonation tokens and
 * the tokens the command line makes. A secret is shown once, in the answer that made it.
 */
@Controller()
@Authenticated()
export class PersonalAccessTokensController {
  constructor(
    private readonly commands: CommandBus,
    private readonly users: UserQueries,
    private readonly clock: Clock,
  ) {}

  private today(): string {
    return this.clock.now().toISOString().slice(0, 10);
  }

  /** GitLab 13.6, administrators only (`authenticated_as_admin!` runs before the parameters are checked). */
  @Post('users/:user_id/personal_access_tokens')
  @AdminOnly()
  async create(@Param('user_id', RouteIntPipe) userId: number, @GitlabParams() p: CreatePersonalAccessTokenDto) {
    // Grape's `values:` over the scopes Lode has: any other name is refused before the model sees it.
    if (p.scopes.some((s) => !(PERSONAL_SCOPES as readonly string[]).includes(s)))
      throw new BadParameter('scopes does not have a valid value');
    const expiresAt = dateOrNull(p.expires_at);
    await this.users.get(userId);
    const { tokenId, secret } = await this.commands.execute(
      new CreateAccessToken({ userId, name: p.name, scopes: p.scopes, impersonation: false, expiresAt }),
    );
    return this.answer(tokenId, secret);
  }

  @Get('personal_access_tokens')
  async list(@CurrentActor() actor: Actor, @GitlabParams() q: ListPersonalAccessTokensDto) {
    const page = pageParams(q);
    const { rows, total } = await this.users.personalAccessTokens(
      {
        ...(await this.owner(actor, q.user_id)),
        revoked: q.revoked,
        state: q.state,
        createdBefore: dateTimeParam(q.created_before, 'created_before'),
        createdAfter: dateTimeParam(q.created_after, 'created_after'),
        lastUsedFilter:
          dateTimeParam(q.last_used_before, 'last_used_before') !== undefined ||
          dateTimeParam(q.last_used_after, 'last_used_after') !== undefined,
        search: q.search,
        today: this.today(),
      },
      page,
    );
    return new Page(
      rows.map((t) => serializePersonalAccessToken(t, this.today())),
      total,
      page,
    );
  }

  /**
   * Whose tokens a list shows. An administrator: everyone's, or `user_id`'s (404 for a blank or
   * unknown one). Anyone else: their own personal tokens, and a `user_id` naming another user is 401
   * (GitLab's `restrict_non_admins!`).
   */
  private async owner(actor: Actor, userIdParam: string | undefined) {
    const userId = userIdParam === undefined || userIdParam.trim() === '' ? userIdParam : intValue(userIdParam);
    if (actor.isAdmin) {
      if (userId === undefined) return { withImpersonation: true };
      if (typeof userId !== 'number' || !(await this.users.find(userId))) throw new NotFound();
      return { userId, withImpersonation: true };
    }
    if (typeof userId === 'number' && userId !== actor.id) throw new Unauthorized();
    return { userId: actor.id, withImpersonation: false };
  }

  /** GitLab 15.5: the calling token, whatever its scopes. */
  @Get('personal_access_tokens/self')
  @AnyTokenScope()
  async self(@CurrentActor() actor: Actor) {
    const token = await this.users.accessToken(callingToken(actor));
    if (!token) throw new NotFound();
    return serializePersonalAccessToken(token, this.today());
  }

  /** GitLab 15.1: the owner's or, for an administrator, anyone's; only administrators learn that an id is unknown. */
  @Get('personal_access_tokens/:id')
  async get(@CurrentActor() actor: Actor, @Param('id', intParam('id')) tokenId: number) {
    const token = await this.users.accessToken(tokenId);
    if (!token || (!actor.isAdmin && token.userId !== actor.id))
      throw actor.isAdmin ? new NotFound() : new Unauthorized();
    return serializePersonalAccessToken(token, this.today());
  }

  /** GitLab 15.0 (any scope since 15.4). */
  @Delete('personal_access_tokens/self')
  @AnyTokenScope()
  @HttpCode(204)
  async revokeSelf(@CurrentActor() actor: Actor): Promise<void> {
    await this.commands.execute(new RevokePersonalAccessToken(callingToken(actor), tokenActor(actor)));
  }

  @Delete('personal_access_tokens/:id')
  @HttpCode(204)
  async revoke(@CurrentActor() actor: Actor, @Param('id', intParam('id')) tokenId: number): Promise<void> {
    await this.commands.execute(new RevokePersonalAccessToken(tokenId, tokenActor(actor)));
  }

  /** GitLab 16.10: the calling token rotates itself; it needs the `api` scope (Lode has no `self_rotate`). */
  @Post('personal_access_tokens/self/rotate')
  @HttpCode(200)
  async rotateSelf(@CurrentActor() actor: Actor, @GitlabParams() p: RotatePersonalAccessTokenDto) {
    return this.rotate(callingToken(actor), actor, p);
  }

  /** GitLab 16.0 (`expires_at` from 16.6): 200, not 201, with the new token. */
  @Post('personal_access_tokens/:id/rotate')
  @HttpCode(200)
  async rotateById(
    @CurrentActor() actor: Actor,
    @Param('id', intParam('id')) tokenId: number,
    @GitlabParams() p: RotatePersonalAccessTokenDto,
  ) {
    return this.rotate(tokenId, actor, p);
  }

  private async rotate(tokenId: number, actor: Actor, p: RotatePersonalAccessTokenDto) {
    const expiresAt = dateOrNull(p.expires_at) ?? undefined;
    const rotated = await this.commands.execute(new RotatePersonalAccessToken(tokenId, tokenActor(actor), expiresAt));
    return this.answer(rotated.tokenId, rotated.secret);
  }

  private async answer(tokenId: number, secret: string) {
    const token = await this.users.accessToken(tokenId);
    if (!token) throw new NotFound();
    return serializePersonalAccessToken(token, this.today(), secret);
  }
}

const tokenActor = (actor: Actor): TokenActor => ({ id: actor.id, isAdmin: actor.isAdmin });

/** The token the request came with (GitLab answers 400 to credentials that are not a personal access token). */
function callingToken(actor: Actor): number {
  if (actor.tokenId === undefined)
    throw new BadRequestMessage('400 Bad request - This endpoint requires token type to be a personal access token');
  return actor.tokenId;
}

/** Grape's `type: Date`: `YYYY-MM-DD`, blank as absent. */
function dateOrNull(value: string | null | undefined): string | null {
  if (value === undefined || value === null || value === '') return null;
  if (!isDate(value)) throw new BadParameter('expires_at is invalid');
  return value;
}

function dateTimeParam(value: string | undefined, name: string): Date | undefined {
  if (value === undefined) return undefined;
  const d = parseDateTime(value);
  if (!d) throw new BadParameter(`${name} is invalid`);
  return d;
}

function intValue(value: string): number {
  if (!/^\s*-?\d+\s*$/.test(value)) throw new BadParameter('user_id is invalid');
  return Number(value);
}
