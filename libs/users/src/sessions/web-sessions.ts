import { Clock, firstRow, LodeConfig, Unauthorized, type Actor } from '@app/platform';
import { Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { tokenDigest, verifyPassword } from '../domain/secrets';
import { ActorResolver, AuthThrottled, UserBlocked } from '../queries/actor-resolver';

interface SessionRow {
  user_id: number;
  token_id: number | null;
  username: string;
  is_admin: boolean;
  external: boolean;
  state: string;
  revoked: boolean | null;
  token_expires: string | null;
  scopes: string[] | null;
}

interface PasswordRow {
  id: number;
  username: string;
  is_admin: boolean;
  external: boolean;
  state: string;
  password_digest: string | null;
}

/** Why a sign-in was refused, in words the sign-in page may show (never which half was wrong). */
export type SignInRefusal = 'invalid' | 'blocked' | 'throttled' | 'scope';

/** A sign-in's outcome: the session's secret for the cookie, or why there is none. */
export type SignInResult = { secret: string; actor: Actor; expiresAt: Date } | { refused: SignInRefusal };

/** The scopes that let a token read projects through the API (GitLab 12.10's `read_api` included). */
const readsApi = (actor: Actor): boolean => actor.scopes.includes('api') || actor.scopes.includes('read_api');

/** A password this long is refused before scrypt runs (as GitLab's 128-character maximum). */
const MAX_PASSWORD = 128;

/**
 * Sessions of the web pages. A session is made from a username (or e-mail) and password, or from a
 * personal access token with the `api` scope, and is looked up afresh on every request (one indexed
 * query, no cache) together with its user's state and its token's: a blocked, deactivated or banned
 * user, or a revoked or expired token, ends it at the next request, in every process.
 */
@Injectable()
export class WebSessions {
  constructor(
    private readonly dataSource: DataSource,
    private readonly actors: ActorResolver,
    private readonly clock: Clock,
    private readonly config: LodeConfig,
  ) {}

  /**
   * Checks the credentials (throttled per address as the API's authentication is) and starts a session.
   * `login` is a username or primary e-mail with `password`, or empty with a token as `password`.
   */
  async signIn(login: string, password: string, from: string): Promise<SignInResult> {
    if ((await this.actors.throttledFor(from)) > 0) return { refused: 'throttled' };
    if (!password || password.length > MAX_PASSWORD) {
      await this.actors.refused(from);
      return { refused: 'invalid' };
    }
    if (!login.trim()) return this.signInWithToken(password, from);
    const row = await firstRow<PasswordRow>(
      this.dataSource,
      `select id, username, is_admin, external, state, password_digest from users
        where not ghost and (lower(username) = lower($1) or lower(email) = lower($1))
        order by (lower(username) = lower($1)) desc limit 1`,
      [login.trim()],
    );
    if (!row || !(await verifyPassword(password, row.password_digest))) {
      await this.actors.refused(from);
      return { refused: 'invalid' };
    }
    if (row.state !== 'active') return { refused: 'blocked' };
    const actor: Actor = {
      id: row.id,
      username: row.username,
      isAdmin: row.is_admin,
      external: row.external,
      scopes: ['api'],
      impersonation: false,
    };
    return this.start(actor, null);
  }

  private async signInWithToken(secret: string, from: string): Promise<SignInResult> {
    try {
      const { actor } = await this.actors.byToken(secret, from);
      // The pages show what the API shows to this token: one that may not read the API may not sign in.
      if (!readsApi(actor)) return { refused: 'scope' };
      return this.start(actor, actor.tokenId ?? null);
    } catch (err) {
      if (err instanceof AuthThrottled) return { refused: 'throttled' };
      if (err instanceof UserBlocked) return { refused: 'blocked' };
      return { refused: 'invalid' };
    }
  }

  private async start(actor: Actor, tokenId: number | null): Promise<SignInResult> {
    const secret = randomBytes(32).toString('base64url');
    const now = this.clock.now();
    const expiresAt = new Date(now.getTime() + this.config.webSessionTtl * 1000);
    // Expired sessions go as new ones come, so the table holds at most the sessions of one TTL.
    await this.dataSource.query(`delete from web_sessions where expires_at <= $1`, [now]);
    await this.dataSource.query(
      `insert into web_sessions (digest, user_id, token_id, created_at, expires_at) values ($1, $2, $3, $4, $5)`,
      [tokenDigest(secret), actor.id, tokenId, now, expiresAt],
    );
    return { secret, actor, expiresAt };
  }

  /** The session's actor; undefined for an unknown or expired session, a user no longer active, or a dead token. */
  async resolve(secret: string): Promise<Actor | undefined> {
    if (!secret || secret.length > 100) return undefined;
    const now = this.clock.now();
    const row = await firstRow<SessionRow>(
      this.dataSource,
      `select s.user_id, s.token_id, u.username, u.is_admin, u.external, u.state, t.revoked,
              to_char(t.expires_at, 'YYYY-MM-DD') as token_expires, t.scopes
         from web_sessions s join users u on u.id = s.user_id left join access_tokens t on t.id = s.token_id
        where s.digest = $1 and s.expires_at > $2`,
      [tokenDigest(secret), now],
    );
    if (!row || row.state !== 'active') return undefined;
    if (row.token_id !== null) {
      const today = now.toISOString().slice(0, 10);
      if (row.revoked !== false || (row.token_expires !== null && row.token_expires <= today)) return undefined;
    }
    return {
      id: row.user_id,
      username: row.username,
      isAdmin: row.is_admin,
      external: row.external,
      tokenId: row.token_id ?? undefined,
      scopes: row.scopes ?? ['api'],
      impersonation: false,
    };
  }

  /**
   * A page request that carries a token instead of a session cookie: its owner if the token is valid
   * and may read the API, else undefined (the page is shown as to an anonymous visitor, which shows
   * nothing more). Refused tokens count towards the address's throttle, as on the API.
   */
  async byHeaderToken(secret: string | undefined, from: string): Promise<Actor | undefined> {
    if (!secret) return undefined;
    try {
      const { actor } = await this.actors.byToken(secret, from);
      return readsApi(actor) ? actor : undefined;
    } catch (err) {
      if (err instanceof Unauthorized || err instanceof AuthThrottled || err instanceof UserBlocked) return undefined;
      throw err;
    }
  }

  /** Ends the session (sign-out); a no-op for one that is gone. */
  async end(secret: string): Promise<void> {
    if (secret) await this.dataSource.query(`delete from web_sessions where digest = $1`, [tokenDigest(secret)]);
  }
}
