import { CustomAttributeTable } from '@app/platform';

/*
 * The rows the users context's queries read from its credential tables, camelCase through column
 * aliases (queries/user.queries.ts). Plain types: TypeORM holds only the connection and the migrations.
 */

export interface SshKeyRecord {
  id: number;
  userId: number;
  title: string;
  key: string;
  keyType: string;
  fingerprint: string;
  fingerprintSha256: string;
  /** Null: the key never expires. */
  expiresAt: Date | null;
  createdAt: Date;
}

export interface UserStatusRecord {
  emoji: string;
  message: string | null;
  availability: string;
  clearStatusAt: Date | null;
}

export interface GpgKeyRecord {
  id: number;
  userId: number;
  key: string;
  fingerprint: string;
  primaryKeyId: string;
  createdAt: Date;
}

export interface EmailRecord {
  id: number;
  userId: number;
  email: string;
  createdAt: Date;
}

/** An access token without its `digest`: no answer may carry it, and only TokenResolver looks a token up by it. */
export interface AccessTokenRecord {
  id: number;
  userId: number;
  name: string;
  scopes: string[];
  impersonation: boolean;
  revoked: boolean;
  /** `YYYY-MM-DD`, null for a token that does not expire. */
  expiresAt: string | null;
  createdBy: number | null;
  createdAt: Date;
}

/** `user_custom_attributes`, written by UserProjection and read by UserQueries. */
export const USER_CUSTOM_ATTRIBUTES = new CustomAttributeTable('user_custom_attributes', 'user_id');

export const USER_RECORDS_TABLES = [
  'users',
  'user_identities',
  'user_email_claims',
  'user_custom_attributes',
  'ssh_keys',
  'gpg_keys',
  'emails',
  'access_tokens',
  'user_statuses',
] as const;
