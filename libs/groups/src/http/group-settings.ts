import { BadParameter } from '@app/platform';
import { GROUP_SETTING_LIST, GROUP_UPDATE_AT_LEAST_ONE_OF, type GroupSettings } from '../domain/group-settings';
import type { CreateGroupDto, UpdateGroupDto } from './groups.dto';

/*
 * The parameters are named as the columns (GitLab's names): each setting's `wire` (domain/group-settings.ts).
 */

const paramsOf = (p: CreateGroupDto | UpdateGroupDto) => p as unknown as Readonly<Record<string, unknown>>;

/** POST: each setting sent, or its default (the DTO requires those without one). */
export function newGroupSettings(p: CreateGroupDto): GroupSettings {
  const given = paramsOf(p);
  const out: Record<string, unknown> = {};
  for (const s of GROUP_SETTING_LIST) out[s.key] = given[s.wire] ?? s.default;
  return out as GroupSettings;
}

/** PUT: only what was sent, a `null` of a clearable setting as its default; at least one (GitLab's `at_least_one_of`). */
export function groupChanges(p: UpdateGroupDto): Partial<GroupSettings> {
  const given = paramsOf(p);
  const out: Record<string, unknown> = {};
  for (const s of GROUP_SETTING_LIST) {
    const v = given[s.wire];
    if (v !== undefined) out[s.key] = v === null && s.clearable ? s.default : v;
  }
  if (!Object.keys(out).length)
    throw new BadParameter(
      `${GROUP_UPDATE_AT_LEAST_ONE_OF.join(', ')} are missing, at least one parameter must be provided`,
    );
  return out as Partial<GroupSettings>;
}
