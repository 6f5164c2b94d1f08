/*
 * The rows the users context's queries read from `users` and `user_identities` (tables of
 * migrations/1763780000100-users.ts), camelCase through column aliases (queries/user.queries.ts).
 * Plain types: TypeORM holds only the connection and the migrations.
 */

/**
 * A user as the serializers show it. `password_digest` is not here: no answer may carry it, and Lode checks no password (git's basic auth takes a token), so
 * nothing selects it.
 */
export interface UserRecord {
  id: number;
  username: string;
  email: string;
  name: string;
  state: string;
  isAdmin: boolean;
  bio: string | null;
  location: string | null;
  messenger: string;
  careerProfile: string;
  socialAccount: string;
  websiteUrl: string;
  organization: string | null;
  projectsLimit: number;
  canCreateGroup: boolean;
  external: boolean;
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
