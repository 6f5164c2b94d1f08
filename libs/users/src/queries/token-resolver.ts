import {
  firstRow,
  Invalidations,
  LodeConfig,
  type DomainEvent,
  type InvalidationRoute,
  type Recorded,
} from '@app/platform';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { AccessTokenEvent } from '../domain/access-token';
import { tokenDigest } from '../domain/secrets';
import type { UserEvent } from '../domain/user';

export interface ResolvedToken {
  tokenId: number;
  scopes: string[];
  impersonation: boolean;
  revoked: boolean;
  expiresAt: string | null;
  createdBy: number | null;
  user: {
    id: number;
    username: string;
    isAdmin: boolean;
    external: boolean;
    state: string;
    lastActivityOn: string | null;
  };
}

/** An access token joined to its owner, as `resolve` selects it. */
interface TokenRow {
  id: number;
  scopes: string[];
  impersonation: boolean;
  revoked: boolean;
  expires_at: string | null;
  created_by: number | null;
  user_id: number;
  username: string;
  is_admin: boolean;
  external: boolean;
  state: string;
  last_activity_on: string | null;
}

const MAX_ENTRIES = 10_000;

/** The cache key of everything resolved for one user's tokens. */
export const userCredentialsKey = (userId: number) => `user-credentials:${userId}`;

/**
 * The events that change what a token resolves to: the token revoked, its owner blocked, unblocked,
 * deleted or changed (administrator flag, external, username). Passwords play no part: Basic auth
 * takes a token as its password. `UserActivityRecorded` is kept up to date by `noteActivity`.
 */
export const tokenInvalidationRoute: InvalidationRoute = (event: Recorded<DomainEvent>) => {
  const e = event as Recorded<UserEvent | AccessTokenEvent>;
  switch (e.type) {
    case 'AccessTokenRevoked':
    case 'AccessTokenCreated':
    case 'UserBlocked':
    case 'UserUnblocked':
    case 'UserDeactivated':
    case 'UserActivated':
    case 'UserBanned':
    case 'UserUnbanned':
    case 'UserDeleted':
    case 'UserUpdated':
      return userCredentialsKey(e.data.userId);
    // Named one by one, so a new event of users is weighed here: does it change what a token resolves to?
    case 'UserCreated':
    case 'UserIdentityRemoved':
    case 'EmailAdded':
    case 'EmailRemoved':
    case 'SshKeyAdded':
    case 'SshKeyRemoved':
    case 'GpgKeyAdded':
    case 'GpgKeyRemoved':
    case 'UserCustomAttributeSet':
    case 'UserCustomAttributeRemoved':
      return undefined;
    default:
      return undefined; // another context's event
  }
};

/**
 * Turns a token secret into its owner with ONE indexed query (digest → token ⋈ user), cached for
 * `LODE_TOKEN_CACHE_MS` (1 s by default). An event that changes the answer (`tokenInvalidationRoute`)
 * evicts the owner's entries at once: in the process that wrote it before the command returns, in
 * the others through `Invalidations`' NOTIFY. A hit is served only after `Invalidations.caughtUp()`
 * (every NOTIFY committed before the request heard), so no process serves an entry evicted elsewhere;
 * while the LISTEN connection is down every lookup queries.
 */
@Injectable()
export class TokenResolver {
  private readonly cache = new Map<string, { value: ResolvedToken | null; until: number }>();
  /** Bumped by every eviction: a lookup that overlapped one does not cache what it read. */
  private epoch = 0;

  constructor(
    private readonly dataSource: DataSource,
    private readonly config: LodeConfig,
    private readonly invalidations: Invalidations,
  ) {
    invalidations.register(tokenInvalidationRoute);
    invalidations.subscribe((keys) => this.evict(keys));
  }

  /** Forgets the entries of the users named by `keys` (and unknown-token answers), or everything. */
  evict(keys: readonly string[] | 'all'): void {
    this.epoch += 1;
    if (keys === 'all') {
      this.cache.clear();
      return;
    }
    const users = new Set(keys);
    for (const [digest, entry] of this.cache)
      if (entry.value === null || users.has(userCredentialsKey(entry.value.user.id))) this.cache.delete(digest);
  }

  async resolve(secret: string): Promise<ResolvedToken | null> {
    const digest = tokenDigest(secret);
    const now = Date.now();
    const hit = this.cache.get(digest);
    // Served only once every eviction committed before this request has been heard, and still there:
    // a token revoked through another process is refused here on the very next request.
    if (hit && hit.until > now && (await this.invalidations.caughtUp()) && this.cache.get(digest) === hit)
      return hit.value;
    // An eviction that lands while this lookup runs bumps the epoch: the answer is then not cached.
    const epoch = this.epoch;
    const r = await firstRow<TokenRow>(
      this.dataSource,
      `select t.id, t.scopes, t.impersonation, t.revoked, to_char(t.expires_at, 'YYYY-MM-DD') as expires_at, t.created_by,
              u.id as user_id, u.username, u.is_admin, u.external, u.state, to_char(u.last_activity_on, 'YYYY-MM-DD') as last_activity_on
         from access_tokens t join users u on u.id = t.user_id
        where t.digest = $1`,
      [digest],
    );
    const value: ResolvedToken | null = r
      ? {
          tokenId: r.id,
          scopes: r.scopes,
          impersonation: r.impersonation,
          revoked: r.revoked,
          expiresAt: r.expires_at,
          createdBy: r.created_by,
          user: {
            id: r.user_id,
            username: r.username,
            isAdmin: r.is_admin,
            external: r.external,
            state: r.state,
            lastActivityOn: r.last_activity_on,
          },
        }
      : null;
    if (this.config.tokenCacheMs > 0 && epoch === this.epoch) {
      if (this.cache.size >= MAX_ENTRIES) this.cache.clear();
      this.cache.set(digest, { value, until: now + this.config.tokenCacheMs });
    }
    return value;
  }

  /** Notes a recorded activity day in the cached entry, so the next request does not record it again. */
  noteActivity(secret: string, on: string): void {
    const hit = this.cache.get(tokenDigest(secret));
    if (hit?.value) hit.value.user.lastActivityOn = on;
  }
}
