import {
  ACCESS_KEY,
  Actor,
  Clock,
  credentialsMayFollowInBody,
  deferAuthentication,
  Forbidden,
  InsufficientScope,
  markAuthenticated,
  NotFound,
  REFUSED_CREDENTIALS_KEY,
  RequestContexts,
  RequestRateLimits,
  type RequestContext,
  Unauthorized,
  type RouteAccess,
} from '@app/platform';
import { CanActivate, ExecutionContext, Injectable, Logger, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { CommandBus } from '@nestjs/cqrs';
import type { Request, Response } from 'express';
import { RecordUserActivity } from '../commands/record-user-activity.command';
import { UserQueries } from '../queries/user.queries';
import { ActorResolver, AuthThrottled, UserBlocked } from '../queries/actor-resolver';

export const READ_USER_KEY = 'lode:read_user';
/** GET routes of the Users API, which a token with only the `read_user` scope may call. */
export const ReadUserScope = () => SetMetadata(READ_USER_KEY, true);

export const ANY_SCOPE_KEY = 'lode:any_scope';
/**
 * Routes about the calling token itself (GET and DELETE /personal_access_tokens/self), which GitLab
 * lets a token of any scope call (`allow_access_with_scope(all_available_scopes)`).
 */
export const AnyTokenScope = () => SetMetadata(ANY_SCOPE_KEY, true);

export type ActorRequest = Request & { actor?: Actor };

/**
 * Authenticates every API request, in GitLab's order: find the token (PRIVATE-TOKEN header,
 * `private_token` parameter, or `Authorization: Bearer`), let `ActorResolver` refuse unknown, revoked
 * or expired ones (401) and blocked users (403), apply `sudo` (refused for a blocked
 * user, 403 as their own token), then check the token's scopes (unless sudo changed
 * the user), then the route's own requirement (signed in, administrator).
 */
/** GitLab's health_check_request?: the paths never rate limited. */
const PROBE_PATH = /^\/-\/(health|liveness|readiness|metrics)(\/|$)/;

@Injectable()
export class PrivateTokenGuard implements CanActivate {
  private readonly logger = new Logger('Auth');

  constructor(
    private readonly actors: ActorResolver,
    private readonly users: UserQueries,
    private readonly reflector: Reflector,
    private readonly commands: CommandBus,
    private readonly clock: Clock,
    private readonly rateLimits: RequestRateLimits,
  ) {}

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    if (ctx.getType() !== 'http') return true;
    const req = ctx.switchToHttp().getRequest<ActorRequest>();
    // A file route's multipart body is read after the guard, and `private_token` or `sudo` may be
    // fields of it: what follows then runs once the fields before the first file part are read.
    if (tokenFrom(req) === undefined && credentialsMayFollowInBody(ctx, this.reflector)) {
      const context = RequestContexts.current();
      // Run later from the body parser's events: inside this request's context again.
      deferAuthentication(req, () =>
        context
          ? RequestContexts.run(context, () => this.authenticate(ctx, req, context))
          : this.authenticate(ctx, req, context),
      );
      return true;
    }
    await this.authenticate(ctx, req, RequestContexts.current());
    return true;
  }

  private async authenticate(ctx: ExecutionContext, req: ActorRequest, context: RequestContext | undefined) {
    const targets = [ctx.getHandler(), ctx.getClass()];
    if (!this.reflector.getAllAndOverride<boolean>(REFUSED_CREDENTIALS_KEY, targets))
      return this.identify(ctx, req, context, targets);
    try {
      await this.identify(ctx, req, context, targets);
    } catch (err) {
      if (!(err instanceof Unauthorized || err instanceof Forbidden || err instanceof InsufficientScope)) throw err;
      // The route answers anonymous callers itself (RefusedCredentialsAreAnonymous).
      req.actor = undefined;
      if (context) context.actor = undefined;
      ctx.switchToHttp().getResponse<Response>().removeHeader('Retry-After');
    }
  }

  private async identify(
    ctx: ExecutionContext,
    req: ActorRequest,
    context: RequestContext | undefined,
    targets: Parameters<Reflector['getAllAndOverride']>[1],
  ) {
    const access = this.reflector.getAllAndOverride<RouteAccess | undefined>(ACCESS_KEY, targets);
    const secret = tokenFrom(req);
    const caller = secret === undefined ? undefined : await this.byToken(secret, req, ctx);
    if (caller) markAuthenticated(ctx.switchToHttp().getResponse<Response>());
    let actor = caller?.actor;
    const sudo = sudoFrom(req);
    if (sudo !== undefined) actor = await this.sudo(caller?.actor, sudo);
    // GitLab checks the route's scopes only when sudo did not change the user: then the `sudo`
    // scope (checked above) is what the token needs.
    if (
      caller &&
      actor?.id === caller.actor.id &&
      !caller.actor.scopes.includes('api') &&
      !this.reflector.getAllAndOverride<boolean>(ANY_SCOPE_KEY, targets)
    ) {
      const readOnly = req.method === 'GET' || req.method === 'HEAD';
      // `read_api` (12.10) reads every route; `read_user` only the Users API's.
      const scopes = caller.actor.scopes;
      const mayRead =
        scopes.includes('read_api') ||
        (scopes.includes('read_user') && this.reflector.getAllAndOverride<boolean>(READ_USER_KEY, targets));
      if (!(readOnly && mayRead)) throw new InsufficientScope(['api']);
    }
    // LODE_RATE_LIMIT_*: the token's owner (whoever sudo acts as), else the address. Probes and
    // the metrics scrape are not counted (GitLab's Rack::Attack skips `health_check_request?`):
    // a monitor must not be locked out of seeing why the service is busy.
    if (!PROBE_PATH.test(req.path))
      await this.rateLimits.count(
        caller ? { userId: caller.actor.id } : { address: req.ip ?? 'unknown' },
        ctx.switchToHttp().getResponse<Response>(),
      );
    const today = this.clock.now().toISOString().slice(0, 10);
    if (secret !== undefined && caller && (caller.lastActivityOn === null || caller.lastActivityOn < today))
      await this.recordActivity(secret, caller.actor.id);
    req.actor = actor;
    if (context) context.actor = actor;
    if (access && !actor) throw new Unauthorized();
    if (access === 'admin' && !actor?.isAdmin) throw new Forbidden();
  }

  /** A throttled address is told when to come back. */
  private async byToken(secret: string, req: ActorRequest, ctx: ExecutionContext) {
    try {
      return await this.actors.byToken(secret, req.ip);
    } catch (err) {
      if (err instanceof AuthThrottled)
        ctx.switchToHttp().getResponse<Response>().setHeader('Retry-After', String(err.retryAfter));
      throw err;
    }
  }

  private async sudo(actor: Actor | undefined, target: string): Promise<Actor> {
    if (!actor) throw new Unauthorized();
    if (!actor.isAdmin) throw new Forbidden('Must be admin to use sudo');
    if (!actor.scopes.includes('sudo')) throw new InsufficientScope(['sudo']);
    const user = await this.users.findByIdOrUsername(target);
    if (!user) throw new NotFound(`User with ID or username '${target}'`);
    // A blocked user may not act through the API, whoever's token asks: the same 403 as their own token gets.
    if (user.state !== 'active') throw new UserBlocked();
    return {
      id: user.id,
      username: user.username,
      isAdmin: user.isAdmin,
      external: user.external,
      tokenId: actor.tokenId,
      scopes: actor.scopes,
      impersonation: false,
      sudoBy: actor.id,
    };
  }

  /** At most once a day per user; a failure here must not fail the request it rides on. */
  private async recordActivity(secret: string, userId: number): Promise<void> {
    try {
      const on = await this.commands.execute(new RecordUserActivity(userId));
      this.actors.noteActivity(secret, on);
    } catch (err) {
      this.logger.warn(`could not record activity of user ${userId}: ${String(err)}`);
    }
  }
}

function param(req: Request, name: string): unknown {
  const body = req.body && typeof req.body === 'object' ? (req.body as Record<string, unknown>)[name] : undefined;
  return body ?? (req.query as Record<string, unknown>)[name];
}

function tokenFrom(req: Request): string | undefined {
  const header = req.headers['private-token'];
  if (typeof header === 'string' && header) return header;
  const p = param(req, 'private_token');
  if (typeof p === 'string' && p) return p;
  const auth = req.headers.authorization;
  const m = typeof auth === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(auth) : null;
  return m ? m[1] : undefined;
}

function sudoFrom(req: Request): string | undefined {
  const header = req.headers['sudo'];
  const v = typeof header === 'string' && header ? header : param(req, 'sudo');
  if (typeof v === 'number') return String(v);
  return typeof v === 'string' && v.trim() ? v.trim() : undefined;
}
