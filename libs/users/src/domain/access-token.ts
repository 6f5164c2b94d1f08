import { BadRequestMessage, FieldErrors, NotFound, Unauthorized } from '@app/platform';

/*
 * A personal or impersonation access token. Stream `token-<id>`. Only the SHA-256 digest of the
 * secret is ever stored: the secret itself appears once, in the create response.
 */

/**
 * The scopes Lode acts on: `api` (everything), `read_user` (the Users API's reads, 8.15), `read_api`
 * (every API read, 12.10), `read_repository` (git clone and fetch over HTTP, 10.7), `write_repository`
 * (git push too, 11.11) and `sudo` (acting as another user, administrators only). Today's clients and
 * Terraform configs ask for the later three; GitLab's other scopes (registry, runners, AI) name
 * things Lode does not have, so they are refused rather than kept without meaning.
 */
export const PERSONAL_SCOPES = ['api', 'read_user', 'read_api', 'read_repository', 'write_repository', 'sudo'] as const;
export const IMPERSONATION_SCOPES = ['api', 'read_user', 'read_api', 'read_repository', 'write_repository'] as const;

/** What a token's scopes allow git over HTTP (GitLab's `Gitlab::Auth#abilities_for_scopes`). */
export function gitScopesAllow(scopes: readonly string[], push: boolean): boolean {
  if (scopes.includes('api') || scopes.includes('write_repository')) return true;
  return !push && scopes.includes('read_repository');
}

export type AccessTokenEvent =
  | {
      type: 'AccessTokenCreated';
      data: {
        tokenId: number;
        userId: number;
        name: string;
        scopes: string[];
        impersonation: boolean;
        expiresAt: string | null;
        digest: string;
        at: string;
        /** The token this one replaced (POST /personal_access_tokens/:id/rotate); absent otherwise. */
        rotatedFrom?: number;
      };
    }
  | { type: 'AccessTokenRevoked'; data: { tokenId: number; userId: number; at: string } };

export type AccessToken =
  | { exists: false }
  | {
      exists: true;
      tokenId: number;
      userId: number;
      name: string;
      scopes: string[];
      impersonation: boolean;
      revoked: boolean;
    };

export const initial = (): AccessToken => ({ exists: false });

export function evolve(s: AccessToken, e: AccessTokenEvent): AccessToken {
  switch (e.type) {
    case 'AccessTokenCreated':
      return {
        exists: true,
        tokenId: e.data.tokenId,
        userId: e.data.userId,
        name: e.data.name,
        scopes: e.data.scopes,
        impersonation: e.data.impersonation,
        revoked: false,
      };
    case 'AccessTokenRevoked':
      return s.exists ? { ...s, revoked: true } : s;
  }
}

export const accessTokenDecider = { initial, evolve };

export function createToken(
  s: AccessToken,
  input: {
    tokenId: number;
    userId: number;
    name: string;
    scopes: string[];
    impersonation: boolean;
    expiresAt: string | null;
    digest: string;
    ownerIsAdmin: boolean;
    rotatedFrom?: number;
  },
  now: Date,
): AccessTokenEvent[] {
  if (s.exists) throw new Error(`token ${input.tokenId} exists already`);
  const errors = new FieldErrors();
  if (!input.name.trim()) errors.add('name', "can't be blank");
  else if (input.name.length > 255) errors.add('name', 'is too long (maximum is 255 characters)');
  const allowed: readonly string[] = input.impersonation ? IMPERSONATION_SCOPES : PERSONAL_SCOPES;
  if (!input.scopes.length) errors.add('scopes', "can't be blank");
  else if (input.scopes.some((x) => !allowed.includes(x))) errors.add('scopes', 'can only contain available scopes');
  // Only an administrator's token may carry sudo: the scope means nothing for anyone else.
  else if (input.scopes.includes('sudo') && !input.ownerIsAdmin)
    errors.add('scopes', 'can only contain available scopes');
  if (input.expiresAt !== null && !isDate(input.expiresAt)) errors.add('expires_at', 'is invalid');
  errors.throwIfAny();
  return [
    {
      type: 'AccessTokenCreated',
      data: {
        tokenId: input.tokenId,
        userId: input.userId,
        name: input.name,
        scopes: [...new Set(input.scopes)],
        impersonation: input.impersonation,
        expiresAt: input.expiresAt,
        digest: input.digest,
        at: now.toISOString(),
        ...(input.rotatedFrom !== undefined ? { rotatedFrom: input.rotatedFrom } : {}),
      },
    },
  ];
}

/** Revoking twice changes nothing; a token of another user, or a personal one, is "not found". */
export function revokeImpersonationToken(s: AccessToken, userId: number, now: Date): AccessTokenEvent[] {
  if (!s.exists || s.userId !== userId || !s.impersonation) throw new NotFound('Impersonation Token');
  return s.revoked ? [] : [{ type: 'AccessTokenRevoked', data: { tokenId: s.tokenId, userId, at: now.toISOString() } }];
}

export function revokeToken(s: AccessToken, now: Date): AccessTokenEvent[] {
  if (!s.exists) throw new NotFound('Token');
  return s.revoked
    ? []
    : [{ type: 'AccessTokenRevoked', data: { tokenId: s.tokenId, userId: s.userId, at: now.toISOString() } }];
}

/** Who acts on a token through /personal_access_tokens. */
export interface TokenActor {
  id: number;
  isAdmin: boolean;
}

/**
 * DELETE /personal_access_tokens/:id and /self: GitLab's RevokeService. An unknown id is 404 (its
 * `find_token`); a token the caller may not revoke (another user's, or an impersonation token of a
 * user who is not an administrator) is a bare 400, not a 403. Revoking twice changes nothing.
 */
export function revokePersonalToken(s: AccessToken, actor: TokenActor, now: Date): AccessTokenEvent[] {
  if (!s.exists) throw new NotFound();
  if (!actor.isAdmin && (s.userId !== actor.id || s.impersonation)) throw new BadRequestMessage('400 Bad request');
  return s.revoked
    ? []
    : [{ type: 'AccessTokenRevoked', data: { tokenId: s.tokenId, userId: s.userId, at: now.toISOString() } }];
}

/**
 * The first half of POST /personal_access_tokens/:id/rotate: the old token is revoked, and the caller
 * makes its successor with the same name, scopes and kind (`createToken`, `rotatedFrom` set). Who may
 * not manage the owner's tokens is told 404 when an administrator (also for an unknown id), else 401,
 * so only administrators learn whether an id exists (GitLab's personal_access_tokens.rb).
 */
export function rotateAwayToken(s: AccessToken, actor: TokenActor, now: Date): AccessTokenEvent[] {
  if (!s.exists || (!actor.isAdmin && s.userId !== actor.id)) throw actor.isAdmin ? new NotFound() : new Unauthorized();
  if (s.revoked) throw new BadRequestMessage('400 Bad request - Token already revoked');
  // RotateService makes the successor through CreateService, which lets only administrators make impersonation tokens.
  if (s.impersonation && !actor.isAdmin) throw new BadRequestMessage('400 Bad request - Not permitted to create');
  return [{ type: 'AccessTokenRevoked', data: { tokenId: s.tokenId, userId: s.userId, at: now.toISOString() } }];
}

/** GitLab's default expiry of a rotated token: one week from today (`YYYY-MM-DD`). */
export function rotatedTokenExpiry(now: Date): string {
  return new Date(now.getTime() + 7 * 86_400_000).toISOString().slice(0, 10);
}

/** `YYYY-MM-DD` naming a real calendar day. */
export function isDate(value: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const d = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === value;
}
