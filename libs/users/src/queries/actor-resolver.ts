import { AuthFailureThrottle, Clock, firstRow, Forbidden, Unauthorized, type Actor } from '@app/platform';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { TokenResolver } from './token-resolver';

/** A user's SSH key joined to its owner, as `bySshKey` selects it. */
interface SshKeyOwnerRow {
  key_id: number;
  user_id: number;
  username: string;
  is_admin: boolean;
  external: boolean;
  state: string;
  last_activity_on: string | null;
}

/** A caller identified by one of its SSH keys. */
export interface SshKeyHolder extends Authenticated {
  keyId: number;
}

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
 * Git over SSH identifies its caller by the offered public key's fingerprint (`bySshKey`; a
 * project's deploy key is the projects context's to resolve).
 */
@Injectable()
export class ActorResolver {
  constructor(
    private readonly tokens: TokenResolver,
    private readonly clock: Clock,
    private readonly throttle: AuthFailureThrottle,
    private readonly dataSource: DataSource,
  ) {}

  /**
   * The owner of the SSH key with this SHA256 fingerprint (`SHA256:<base64>`), looked up afresh on
   * every call (one indexed query, no cache), so a deleted key or user stops working for the next
   * connection. Undefined for a key no user has, and for an expired key (GitLab 14's enforced expiry:
   * "Your SSH key has expired."; here the key is refused at authentication, so the client hears
   * `Permission denied (publickey)`); a blocked user's key throws `UserBlocked`. The
   * caller must have verified the client's signature with that key before granting anything.
   */
  async bySshKey(fingerprintSha256: string): Promise<SshKeyHolder | undefined> {
    const row = await firstRow<SshKeyOwnerRow>(
      this.dataSource,
      `select k.id as key_id, u.id as user_id, u.username, u.is_admin, u.external, u.state,
              to_char(u.last_activity_on, 'YYYY-MM-DD') as last_activity_on
         from ssh_keys k join users u on u.id = k.user_id
        where k.fingerprint_sha256 = $1 and (k.expires_at is null or k.expires_at > $2)`,
      [fingerprintSha256, this.clock.now()],
    );
    if (!row) return undefined;
    if (row.state !== 'active') throw new UserBlocked();
    return {
      keyId: row.key_id,
      // No token: the key grants git access only, so the actor carries no API scopes.
      actor: {
        id: row.user_id,
        username: row.username,
        isAdmin: row.is_admin,
        external: row.external,
        scopes: [],
        impersonation: false,
      },
      lastActivityOn: row.last_activity_on,
    };
  }

  /** Seconds the address must still wait after too many refused authentications; 0 when it may try. */
  throttledFor(from: string): Promise<number> {
    return this.throttle.refusedFor(from);
  }

  /** Counts one refused authentication from the address (a transport that authenticates without `byToken`). */
  async refused(from: string): Promise<void> {
    await this.throttle.failed(from);
  }

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
