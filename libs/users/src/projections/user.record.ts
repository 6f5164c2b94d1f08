import type { UserSettings } from '../domain/user-settings';

/*
 * The rows the users context's queries read from `users` and `user_identities` (tables of
 * migrations/1763780000100-users.ts), camelCase through column aliases (queries/user.queries.ts).
 * Plain types: TypeORM holds only the connection and the migrations.
 */

/**
 * A user as the serializers show it: the settings (domain/user-settings.ts) and the rest. `password_digest`
 * is not here: no answer may carry it, and Lode checks no password (git's basic auth takes a token), so
 * nothing selects it.
 */
export interface UserRecord extends UserSettings {
  id: number;
  username: string;
  email: string;
  state: string;
  /** The avatar's stored file name, null without one. */
  avatar: string | null;
  themeId: number;
  colorSchemeId: number;
  confirmedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
  /** `YYYY-MM-DD`, null before the first activity. */
  lastActivityOn: string | null;
}

/** A user's identity at an external provider (`extern_uid` at `provider`). */
export interface UserIdentityRecord {
  userId: number;
  provider: string;
  externUid: string;
}
