/*
 * A user's stored settings, one entry each: the profile values an administrator sets through POST and
 * PUT /users that need nothing but a check and a column. The entry is read by the DTOs' validation
 * (http/users.dto.ts), the POST's defaults and the PUT's changes (http/user-settings.ts), the decider's
 * checks and change detection (domain/user.ts), the projection's columns (projections/user.projection.ts),
 * the row read back (queries/user.queries.ts, projections/user.record.ts) and the serializer's profile
 * fields (http/user.serializer.ts).
 * How to add one: docs/architecture.md, "How to add a user setting".
 *
 * Not settings, because each needs more than a column: `username` (a namespace path, unique, renames the
 * personal namespace), `email` (unique across every user's addresses, swapped with a secondary one),
 * `password` (stored only as a digest, never shown), `avatar` (a file), `extern_uid` and `provider`
 * (a row of `user_identities`). `theme_id` and `color_scheme_id` are shown but no API sets them (GitLab
 * 10.x's users API takes neither), so they are plain columns at 1.
 *
 * The table is in the order of the model's checks, which is the order of the keys of a 400
 * (`{"message":{"name":[…],"projects_limit":[…]}}`), and the order the User entity shows the `profile`
 * ones in: keep it. The DTOs declare GitLab's parameters in GitLab's own order (http/users.dto.ts).
 * Who may change them: administrators, all alike (POST and PUT /users are `@AdminOnly`).
 */

/** How a setting travels: the DTOs' decorators and the row's TypeScript type follow from it. */
export type UserSettingType = 'string' | 'nullable string' | 'int' | 'boolean';

export interface UserSettingDescriptor<K extends string = string, P extends string = string, V = unknown> {
  /** GitLab's parameter name in POST and PUT /users; also the key of the 400's messages. */
  readonly param: P;
  /** The `users` column, which is also the key the user's JSON shows it under. */
  readonly column: string;
  /** The key in UserProfile, in stored events' data and in UserRecord: never renamed (events keep it). */
  readonly key: K;
  readonly type: UserSettingType;
  /** POST needs it (`@IsDefined()`); it then has no default. */
  readonly required?: true;
  /** A JSON `null` sets it to its default (`@Nullable()`): Grape keeps a key sent as null, and GitLab writes it. */
  readonly clearable?: true;
  /** A new user's value when the POST does not send it; also what an event older than the setting holds. */
  readonly default?: V;
  /** The model's checks of a value sent: its messages under `param` in a 400 (none: valid). */
  readonly check?: (value: V) => readonly string[];
  /**
   * Where the user's JSON shows it: `listed`, at the place GitLab's entities give it, written in
   * http/user.serializer.ts; `profile`: in the User entity's profile fields after `created_at`, in this
   * table's order, by the serializer's loop (GitLab's place for the profile fields added after 10.x's,
   * such as `job_title`); `no`: never shown.
   */
  readonly shown: 'listed' | 'profile' | 'no';
}

const MAX_TEXT = 255;
const MAX_INT = 2147483647;
const tooLong = `is too long (maximum is ${MAX_TEXT} characters)`;
const one = (message: string | false): readonly string[] => (message ? [message] : []);
const textCheck = (v: string | null) => one(v !== null && v.length > MAX_TEXT && tooLong);

const entry = <K extends string, P extends string, V>(
  key: K,
  param: P,
  type: UserSettingType,
  d: Omit<UserSettingDescriptor<K, P, V>, 'key' | 'param' | 'type' | 'column'> & { column?: string },
): UserSettingDescriptor<K, P, V> => ({ key, param, type, column: param, ...d });

/** Free text up to 255 characters, cleared by a null: to empty text, or to null where the column allows it. */
const text = <K extends string, P extends string>(key: K, param: P) =>
  entry<K, P, string>(key, param, 'string', { clearable: true, default: '', check: textCheck, shown: 'profile' });
const nullableText = <K extends string, P extends string>(key: K, param: P) =>
  entry<K, P, string | null>(key, param, 'nullable string', {
    clearable: true,
    default: null,
    check: textCheck,
    shown: 'profile',
  });

/* The table. Defaults are GitLab 10.x's for a new user; the messages its model's. */
export const USER_SETTINGS = [
  entry<'name', 'name', string>('name', 'name', 'string', {
    required: true,
    check: (v) => one(!v.trim() ? "can't be blank" : v.length > MAX_TEXT && tooLong),
    shown: 'listed',
  }),
  entry<'projectsLimit', 'projects_limit', number>('projectsLimit', 'projects_limit', 'int', {
    default: 100000,
    check: (v) =>
      one(v < 0 ? 'must be greater than or equal to 0' : v > MAX_INT && `must be less than or equal to ${MAX_INT}`),
    shown: 'listed',
  }),
  nullableText('bio', 'bio'),
  nullableText('location', 'location'),
  text('messenger', 'messenger'),
  text('careerProfile', 'career_profile'),
  text('socialAccount', 'social_account'),
  text('websiteUrl', 'website_url'),
  nullableText('organization', 'organization'),
  entry<'canCreateGroup', 'can_create_group', boolean>('canCreateGroup', 'can_create_group', 'boolean', {
    default: true,
    shown: 'listed',
  }),
  // GitLab's parameter is `admin`; the column and the administrators' view say `is_admin`.
  entry<'isAdmin', 'admin', boolean>('isAdmin', 'admin', 'boolean', {
    column: 'is_admin',
    default: false,
    shown: 'listed',
  }),
  entry<'external', 'external', boolean>('external', 'external', 'boolean', { default: false, shown: 'listed' }),
  // GitLab 12.x's administrators' note on the account (Terraform's gitlab_user keeps it): shown to them alone.
  entry<'note', 'note', string | null>('note', 'note', 'nullable string', {
    clearable: true,
    default: null,
    shown: 'listed',
  }),
] as const;

type Entry = (typeof USER_SETTINGS)[number];
type ValueOf<E> = E extends UserSettingDescriptor<string, string, infer V> ? V : never;

/** The settings as the events, UserProfile and UserRecord hold them. */
export type UserSettings = { [E in Entry as E['key']]: ValueOf<E> };
/** A setting's parameter name in POST and PUT /users. */
export type UserSettingParam = Entry['param'];

/** Any entry, for loops that read only the common fields. */
export type AnyUserSetting = UserSettingDescriptor<keyof UserSettings, UserSettingParam, unknown>;
export const USER_SETTING_LIST: readonly AnyUserSetting[] = USER_SETTINGS as readonly AnyUserSetting[];

/** The entry of a parameter. */
export const userSetting = (param: UserSettingParam): AnyUserSetting =>
  USER_SETTING_LIST.find((s) => s.param === param)!;

/**
 * Settings from an event's data (or any object keyed as UserSettings), each missing or null key at its
 * default: an event older than its setting, or a new user's profile with only some given. A required
 * setting has no default and is taken as given.
 */
export function userSettingsFrom(data: { [K in keyof UserSettings]?: UserSettings[K] | null }): UserSettings {
  const out: Record<string, unknown> = {};
  for (const s of USER_SETTING_LIST) out[s.key] = data[s.key] ?? s.default;
  return out as UserSettings;
}
