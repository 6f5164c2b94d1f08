import { USER_SETTING_LIST, type UserSettings } from '../domain/user-settings';
import type { CreateUserDto, UpdateUserDto } from './users.dto';

/* The parameters are GitLab's names: each setting's `param` (domain/user-settings.ts). */

const paramsOf = (p: CreateUserDto | UpdateUserDto) => p as unknown as Readonly<Record<string, unknown>>;

/** POST: each setting sent, or its default for one absent or null (the DTO requires those without one). */
export function newUserSettings(p: CreateUserDto): UserSettings {
  const given = paramsOf(p);
  const out: Record<string, unknown> = {};
  for (const s of USER_SETTING_LIST) out[s.key] = given[s.param] ?? s.default;
  return out as UserSettings;
}

/**
 * PUT: only the settings sent, a `null` of a clearable one as its default. GitLab's `at_least_one_of`
 * also counts the identity fields and the avatar, so the controller checks it (`UPDATABLE_USER_FIELDS`).
 */
export function userSettingChanges(p: UpdateUserDto): Partial<UserSettings> {
  const given = paramsOf(p);
  const out: Record<string, unknown> = {};
  for (const s of USER_SETTING_LIST) {
    const v = given[s.param];
    if (v !== undefined) out[s.key] = v === null && s.clearable ? s.default : v;
  }
  return out as Partial<UserSettings>;
}
