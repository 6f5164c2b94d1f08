import { FieldErrors, NotFound } from '@app/platform';

/*
 * A personal or impersonation access token. Stream `token-<id>`. Only the SHA-256 digest of the
 * secret is ever stored: the secret itself appears once, in the create response.
 */

export const PERSONAL_SCOPES = ['api', 'read_user', 'sudo'] as const;
export const IMPERSONATION_SCOPES = ['api', 'read_user'] as const;

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
      };
    }
  | { type: 'AccessTokenRevoked'; data: { tokenId: number; userId: number; at: string } };

export type AccessToken =
  { exists: false } | { exists: true; tokenId: number; userId: number; impersonation: boolean; revoked: boolean };

export const initial = (): AccessToken => ({ exists: false });

export function evolve(s: AccessToken, e: AccessTokenEvent): AccessToken {
  switch (e.type) {
    case 'AccessTokenCreated':
      return {
        exists: true,
        tokenId: e.data.tokenId,
        userId: e.data.userId,
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

/** `YYYY-MM-DD` naming a real calendar day. */
export function isDate(value: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const d = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === value;
}
