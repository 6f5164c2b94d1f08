import type { AccessTokenRecord, EmailRecord, GpgKeyRecord, SshKeyRecord } from '../projections/credential.record';

export const serializeSshKey = (k: SshKeyRecord) => ({
  id: k.id,
  title: k.title,
  key: k.key,
  created_at: k.createdAt.toISOString(),
  // GitLab 12.9's key expiry: ISO 8601 with milliseconds, or null.
  expires_at: k.expiresAt?.toISOString() ?? null,
});

export const serializeGpgKey = (k: GpgKeyRecord) => ({ id: k.id, key: k.key, created_at: k.createdAt.toISOString() });

export const serializeEmail = (e: EmailRecord) => ({ id: e.id, email: e.email });

/**
 * Lode keeps only a digest of a token, so `token` is in the create answer alone (GitLab 10.x
 * showed it on every read).
 */
export function serializeImpersonationToken(t: AccessTokenRecord, today: string, secret?: string) {
  const expired = t.expiresAt !== null && t.expiresAt <= today;
  return {
    id: t.id,
    name: t.name,
    revoked: t.revoked,
    created_at: t.createdAt.toISOString(),
    scopes: t.scopes,
    user_id: t.userId,
    active: !t.revoked && !expired,
    expires_at: t.expiresAt,
    impersonation: t.impersonation,
    ...(secret !== undefined ? { token: secret } : {}),
  };
}

/**
 * GitLab's PersonalAccessToken entity (16.x: no `description`, no `last_used_ips`); `token` only in
 * the answers that made the token (create, rotate). Lode does not record a token's use, so
 * `last_used_at` is always null. `expires_at` is a date, never a time (clients decode it as one).
 */
export function serializePersonalAccessToken(t: AccessTokenRecord, today: string, secret?: string) {
  const expired = t.expiresAt !== null && t.expiresAt <= today;
  return {
    id: t.id,
    name: t.name,
    revoked: t.revoked,
    created_at: t.createdAt.toISOString(),
    scopes: t.scopes,
    user_id: t.userId,
    last_used_at: null,
    active: !t.revoked && !expired,
    expires_at: t.expiresAt,
    ...(secret !== undefined ? { token: secret } : {}),
  };
}
