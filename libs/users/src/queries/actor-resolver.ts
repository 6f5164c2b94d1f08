import { AuthFailureThrottle, Clock, Forbidden, Unauthorized, type Actor } from '@app/platform';
import { Injectable } from '@nestjs/common';
import { TokenResolver } from './token-resolver';

/** A caller whose credentials were accepted, with the last day its activity was recorded (GitLab records one a day). */
export interface Authenticated {
  actor: Actor;
  lastActivityOn: string | null;
}

/** The credentials belong to a blocked user: 403 `{"message":"403 Forbidden - User is blocked"}` on the API. */
export class UserBlocked extends Forbidden {
  constructor() {
    super('User is blocked');
  }
}

/** The caller's address made too many refused authentications: 403 for `retryAfter` seconds (GitLab's Rack::Attack). */
export class AuthThrottled extends Forbidden {
  constructor(readonly retryAfter: number) {
    super();
  }
}

/**
 * Turns credentials into the `Actor` every transport acts as. A token that is unknown, revoked or
 * expired throws `Unauthorized`; a blocked user's throws `UserBlocked`. Each transport answers these
 * in its own way (the API with GitLab's JSON, git with plain text and a Basic challenge), and keeps
 * what is its own: sudo and scopes on the API, the scope git needs over HTTP.
 *
 * Git over SSH will identify its caller by the offered public key's fingerprint (a user's key or a
 * project's deploy key): that lookup belongs here too, beside `byToken`, when the SSH server comes.
 */
@Injectable()
export class ActorResolver {
  constructor(
    private readonly tokens: TokenResolver,
    private readonly clock: Clock,
    private readonly throttle: AuthFailureThrottle,
  ) {}

  /**
   * The owner of a personal or impersonation token's secret. `from`, the caller's address, is
   * refused (`AuthThrottled`) while it is throttled, and each refusal from it is counted.
   */
  async byToken(secret: string, from?: string): Promise<Authenticated> {
    if (from === undefined) return this.resolve(secret);
    const wait = await this.throttle.refusedFor(from);
    if (wait > 0) throw new AuthThrottled(wait);
    try {
      return await this.resolve(secret);
    } catch (err) {
      if (err instanceof Unauthorized || err instanceof UserBlocked) await this.throttle.failed(from);
      throw err;
    }
  }

  private async resolve(secret: string): Promise<Authenticated> {
    const token = await this.tokens.resolve(secret);
    const today = this.clock.now().toISOString().slice(0, 10);
    if (!token || token.revoked || (token.expiresAt !== null && token.expiresAt <= today)) throw new Unauthorized();
    if (token.user.state !== 'active') throw new UserBlocked();
    return {
      actor: {
        id: token.user.id,
        username: token.user.username,
        isAdmin: token.user.isAdmin,
        external: token.user.external,
        tokenId: token.tokenId,
        scopes: token.scopes,
        impersonation: token.impersonation,
        impersonatedBy: token.impersonation && token.createdBy !== null ? token.createdBy : undefined,
      },
      lastActivityOn: token.user.lastActivityOn,
    };
  }

  /**
   * HTTP Basic as git sends it: any user name, a token as the password (as GitLab). Undefined when the
   * `Authorization` header holds no Basic credentials; an empty password is `Unauthorized`.
   */
  async byBasicAuth(authorization: string | undefined, from?: string): Promise<Authenticated | undefined> {
    const m = /^Basic\s+(\S+)\s*$/i.exec(authorization ?? '');
    if (!m) return undefined;
    const decoded = Buffer.from(m[1], 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    const secret = colon < 0 ? '' : decoded.slice(colon + 1);
    if (!secret) {
      if (from !== undefined) await this.throttle.failed(from);
      throw new Unauthorized();
    }
    return this.byToken(secret, from);
  }

  /** Notes a recorded activity day for the token's cached owner, so the next request does not record it again. */
  noteActivity(secret: string, on: string): void {
    this.tokens.noteActivity(secret, on);
  }
}
