import { firstRow, LodeConfig } from '@app/platform';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { tokenDigest } from '../domain/secrets';

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

/**
 * Turns a token secret into its owner with ONE indexed query (digest → token ⋈ user), cached for
 * `LODE_TOKEN_CACHE_MS` (1 s by default), which bounds how long a revoked token or a blocked user
 * may still be served by this process.
 */
@Injectable()
export class TokenResolver {
  private readonly cache = new Map<string, { value: ResolvedToken | null; until: number }>();

  constructor(
    private readonly dataSource: DataSource,
    private readonly config: LodeConfig,
  ) {}

  async resolve(secret: string): Promise<ResolvedToken | null> {
    const digest = tokenDigest(secret);
    const now = Date.now();
    const hit = this.cache.get(digest);
    if (hit && hit.until > now) return hit.value;
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
    if (this.config.tokenCacheMs > 0) {
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
