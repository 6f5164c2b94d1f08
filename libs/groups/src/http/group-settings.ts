import { GROUP_SETTING_LIST, type GroupSettings } from '../domain/group-settings';
import type { CreateGroupDto, UpdateGroupDto } from './groups.dto';

/*
 * The parameters are named as the columns (GitLab's names): each setting's `wire` (domain/group-settings.ts).
 */

const paramsOf = (p: CreateGroupDto | UpdateGroupDto) => p as unknown as Readonly<Record<string, unknown>>;

/**
 * POST: each setting sent, or its default (the DTO requires those without one). `instance` holds the
 * defaults the installation sets instead of the table's (GitLab's `default_branch_protection` is the
 * instance's until a group says otherwise).
 */
export function newGroupSettings(p: CreateGroupDto, instance: Partial<GroupSettings> = {}): GroupSettings {
  const given = paramsOf(p);
  const out: Record<string, unknown> = {};
  for (const s of GROUP_SETTING_LIST) out[s.key] = given[s.wire] ?? instance[s.key] ?? s.default;
  return out as GroupSettings;
}

/**
 * PUT: only what was sent, a `null` of a clearable setting as its default. GitLab's PUT /groups/:id has
 * no `at_least_one_of` (lib/api/groups.rb): a PUT with nothing Lode keeps (Terraform's always-sent
 * `visibility` aside, a field Lode does not model) answers 200 with the group unchanged.
 */
export function groupChanges(p: UpdateGroupDto): Partial<GroupSettings> {
  const given = paramsOf(p);
  const out: Record<string, unknown> = {};
  for (const s of GROUP_SETTING_LIST) {
    const v = given[s.wire];
    if (v !== undefined) out[s.key] = v === null && s.clearable ? s.default : v;
  }
  return out as Partial<GroupSettings>;
}
