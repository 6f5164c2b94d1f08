import {
  assertNever,
  BadRequestMessage,
  Conflict,
  FieldErrors,
  Forbidden,
  NotFound,
  checkCustomAttribute,
  holdsCustomAttribute,
} from '@app/platform';
import { ACCESS, moreOpenThan, type Visibility } from './access-level';
import { GROUP_SETTING_LIST, groupSettingsFrom, type GroupSettings } from './group-settings';

export type { GroupSettings } from './group-settings';

/*
 * A group: a namespace of kind `group`, maybe nested, with its members. Stream `group-<id>`.
 * Its id is a namespace id (GitLab's groups ARE namespaces), from `namespace_id_seq`.
 */

export type GroupEvent =
  | {
      type: 'GroupCreated';
      data: GroupSettings & { groupId: number; parentId: number | null; creatorId: number; at: string };
    }
  | { type: 'GroupUpdated'; data: { groupId: number; changes: Partial<GroupSettings>; at: string } }
  | { type: 'GroupDeleted'; data: { groupId: number; at: string } }
  | {
      type: 'GroupMemberAdded';
      data: { groupId: number; userId: number; accessLevel: number; expiresAt: string | null; at: string };
    }
  | {
      type: 'GroupMemberUpdated';
      data: { groupId: number; userId: number; accessLevel: number; expiresAt: string | null; at: string };
    }
  | { type: 'GroupMemberRemoved'; data: { groupId: number; userId: number; at: string } }
  | { type: 'GroupCustomAttributeSet'; data: { groupId: number; key: string; value: string; at: string } }
  | { type: 'GroupCustomAttributeRemoved'; data: { groupId: number; key: string; at: string } }
  | {
      type: 'GroupSharedWithGroup';
      data: { groupId: number; sharedWithGroupId: number; groupAccess: number; expiresAt: string | null; at: string };
    }
  | { type: 'GroupUnsharedWithGroup'; data: { groupId: number; sharedWithGroupId: number; at: string } }
  /** Moved under another parent, or made top-level (`parentId` null). */
  | { type: 'GroupTransferred'; data: { groupId: number; parentId: number | null; at: string } };

export type Group =
  | { exists: false }
  | {
      exists: true;
      groupId: number;
      parentId: number | null;
      settings: GroupSettings;
      members: Record<number, number>;
      customAttributes: Record<string, string>;
      /** The access granted to each group this one is shared with, by that group's id. */
      sharedWith: Record<number, number>;
    };

export const initial = (): Group => ({ exists: false });

export function evolve(s: Group, e: GroupEvent): Group {
  if (e.type === 'GroupCreated') {
    const d = e.data;
    // An event older than a setting has its default, as the migration adding the column does.
    const settings = groupSettingsFrom(d);
    return {
      exists: true,
      groupId: d.groupId,
      parentId: d.parentId,
      settings,
      members: {},
      customAttributes: {},
      sharedWith: {},
    };
  }
  if (!s.exists) return s;
  switch (e.type) {
    case 'GroupUpdated':
      return { ...s, settings: { ...s.settings, ...e.data.changes } };
    case 'GroupDeleted':
      return { exists: false };
    case 'GroupMemberAdded':
    case 'GroupMemberUpdated':
      return { ...s, members: { ...s.members, [e.data.userId]: e.data.accessLevel } };
    case 'GroupMemberRemoved': {
      const members = { ...s.members };
      delete members[e.data.userId];
      return { ...s, members };
    }
    case 'GroupCustomAttributeSet':
      return { ...s, customAttributes: { ...s.customAttributes, [e.data.key]: e.data.value } };
    case 'GroupCustomAttributeRemoved': {
      const customAttributes = { ...s.customAttributes };
      delete customAttributes[e.data.key];
      return { ...s, customAttributes };
    }
    case 'GroupTransferred':
      return { ...s, parentId: e.data.parentId };
    case 'GroupSharedWithGroup':
      return { ...s, sharedWith: { ...s.sharedWith, [e.data.sharedWithGroupId]: e.data.groupAccess } };
    case 'GroupUnsharedWithGroup': {
      const sharedWith = { ...s.sharedWith };
      delete sharedWith[e.data.sharedWithGroupId];
      return { ...s, sharedWith };
    }
    default:
      return assertNever(e);
  }
}

export const groupDecider = { initial, evolve };

type Existing = Extract<Group, { exists: true }>;
const existing = (s: Group): Existing => {
  if (!s.exists) throw new NotFound('Group');
  return s;
};

/** What the rest of the hierarchy allows, read from the read models by the handler. */
export interface Surroundings {
  parentVisibility?: Visibility;
  /** The most open visibility among the group's direct subgroups. */
  widestSubgroupVisibility?: Visibility;
  /** The most open visibility among the group's projects. */
  widestProjectVisibility?: Visibility;
}

export function validateSettings(
  p: Partial<GroupSettings>,
  topLevel: boolean,
  around: Surroundings,
  errors = new FieldErrors(),
): FieldErrors {
  // Each setting's own checks (domain/group-settings.ts), in the table's order; then what the hierarchy bounds.
  for (const setting of GROUP_SETTING_LIST) {
    const v = p[setting.key];
    if (v !== undefined && setting.check) for (const m of setting.check(v, { topLevel })) errors.add(setting.wire, m);
  }
  if (p.visibility !== undefined) {
    if (around.parentVisibility && moreOpenThan(p.visibility, around.parentVisibility))
      errors.add(
        'visibility_level',
        `${p.visibility} is not allowed since the parent group has a ${around.parentVisibility} visibility.`,
      );
    // GitLab's wording, one message per reason (Group#visibility_level_allowed_by_projects / _by_sub_groups).
    if (around.widestProjectVisibility && moreOpenThan(around.widestProjectVisibility, p.visibility))
      errors.add(
        'visibility_level',
        `${p.visibility} is not allowed since this group contains projects with higher visibility.`,
      );
    if (around.widestSubgroupVisibility && moreOpenThan(around.widestSubgroupVisibility, p.visibility))
      errors.add(
        'visibility_level',
        `${p.visibility} is not allowed since there are sub-groups with higher visibility.`,
      );
  }
  return errors;
}

/** The creator becomes the group's owner in the same command. */
export function create(
  s: Group,
  input: { groupId: number; parentId: number | null; settings: GroupSettings; creatorId: number },
  around: Surroundings,
  now: Date,
): GroupEvent[] {
  if (s.exists) throw new Error(`group ${input.groupId} exists already`);
  validateSettings(input.settings, input.parentId === null, around).throwIfAny();
  const at = now.toISOString();
  return [
    {
      type: 'GroupCreated',
      data: { groupId: input.groupId, parentId: input.parentId, ...input.settings, creatorId: input.creatorId, at },
    },
    {
      type: 'GroupMemberAdded',
      data: { groupId: input.groupId, userId: input.creatorId, accessLevel: ACCESS.owner, expiresAt: null, at },
    },
  ];
}

export function update(s: Group, changes: Partial<GroupSettings>, around: Surroundings, now: Date): GroupEvent[] {
  const g = existing(s);
  validateSettings(changes, g.parentId === null, around).throwIfAny();
  // Each setting given that differs from its value now, in the table's order.
  const real: Record<string, unknown> = {};
  for (const setting of GROUP_SETTING_LIST) {
    const v = changes[setting.key];
    if (v !== undefined && g.settings[setting.key] !== v) real[setting.key] = v;
  }
  return Object.keys(real).length
    ? [
        {
          type: 'GroupUpdated',
          data: { groupId: g.groupId, changes: real as Partial<GroupSettings>, at: now.toISOString() },
        },
      ]
    : [];
}

export function remove(s: Group, now: Date): GroupEvent[] {
  const g = existing(s);
  return [{ type: 'GroupDeleted', data: { groupId: g.groupId, at: now.toISOString() } }];
}

const owners = (g: Existing) => Object.values(g.members).filter((l) => l === ACCESS.owner).length;

export function addMember(
  s: Group,
  userId: number,
  accessLevel: number,
  expiresAt: string | null,
  now: Date,
): GroupEvent[] {
  const g = existing(s);
  if (userId in g.members) throw new Conflict('Member already exists');
  return [
    { type: 'GroupMemberAdded', data: { groupId: g.groupId, userId, accessLevel, expiresAt, at: now.toISOString() } },
  ];
}

/** A group must keep an owner: the last one can be neither demoted nor removed (not even by an administrator). */
export function updateMember(
  s: Group,
  userId: number,
  accessLevel: number,
  expiresAt: string | null,
  now: Date,
): GroupEvent[] {
  const g = existing(s);
  // GitLab's `members.find_by!`: ActiveRecord's bare "404 Not found".
  if (!(userId in g.members)) throw new NotFound();
  if (g.members[userId] === ACCESS.owner && accessLevel !== ACCESS.owner && owners(g) === 1)
    throw new Forbidden('The last owner cannot be demoted');
  return [
    { type: 'GroupMemberUpdated', data: { groupId: g.groupId, userId, accessLevel, expiresAt, at: now.toISOString() } },
  ];
}

/**
 * `mayRemove` is whether the caller manages the group's members (or is the member leaving); GitLab
 * finds the member first, so a missing one is a 404 even for a caller who could not remove it.
 */
export function removeMember(s: Group, userId: number, now: Date, mayRemove = true, userDeleted = false): GroupEvent[] {
  const g = existing(s);
  if (!(userId in g.members)) throw new NotFound();
  if (!mayRemove) throw new Forbidden();
  if (!userDeleted && g.members[userId] === ACCESS.owner && owners(g) === 1)
    throw new Forbidden('The last owner cannot be removed');
  return [{ type: 'GroupMemberRemoved', data: { groupId: g.groupId, userId, at: now.toISOString() } }];
}

export function setCustomAttribute(s: Group, key: string, value: string, now: Date): GroupEvent[] {
  const g = existing(s);
  checkCustomAttribute(key, value);
  if (holdsCustomAttribute(g.customAttributes, key, value)) return [];
  return [{ type: 'GroupCustomAttributeSet', data: { groupId: g.groupId, key, value, at: now.toISOString() } }];
}

export function removeCustomAttribute(s: Group, key: string, now: Date): GroupEvent[] {
  const g = existing(s);
  if (!Object.hasOwn(g.customAttributes, key)) throw new NotFound();
  return [{ type: 'GroupCustomAttributeRemoved', data: { groupId: g.groupId, key, at: now.toISOString() } }];
}

/**
 * GitLab's `POST /groups/:id/share`: the members of `sharedWithGroupId` get up to `groupAccess` here.
 * A second share with the same group is the model's uniqueness error, which the API answers with 409
 * and its full message (`GroupGroupLink` validates `shared_group_id` scoped to `shared_with_group_id`).
 */
export function shareWithGroup(
  s: Group,
  link: { sharedWithGroupId: number; groupAccess: number; expiresAt: string | null },
  now: Date,
): GroupEvent[] {
  const g = existing(s);
  if (Object.hasOwn(g.sharedWith, link.sharedWithGroupId))
    throw new Conflict('Shared group The group has already been shared with this group');
  return [{ type: 'GroupSharedWithGroup', data: { groupId: g.groupId, ...link, at: now.toISOString() } }];
}

/** GitLab's `DELETE /groups/:id/share/:group_id`: `not_found!('Group Link')` without the link. */
export function unshareWithGroup(s: Group, sharedWithGroupId: number, now: Date): GroupEvent[] {
  const g = existing(s);
  if (!Object.hasOwn(g.sharedWith, sharedWithGroupId)) throw new NotFound('Group Link');
  return [{ type: 'GroupUnsharedWithGroup', data: { groupId: g.groupId, sharedWithGroupId, at: now.toISOString() } }];
}

/** What a transfer is checked against, read from the read models by the handler. */
export interface TransferFacts {
  /** The new parent's id and its ancestors' (itself included); undefined when the group becomes top-level. */
  newParentAncestry?: number[];
  /** Whether the caller may create a subgroup in the new parent (or a top-level group). */
  mayCreateThere: boolean;
  /** Whether a group or a project at the target level already has the group's path. */
  pathTaken: boolean;
  /** The new parent's visibility, and the most open one in the moved group, its subgroups and their projects. */
  parentVisibility?: Visibility;
  widestVisibilityInside: Visibility;
}

/** GitLab's `Groups::TransferService` refusals: 400 `Transfer failed: <reason>`, in its order. */
const transferFailed = (reason: string) => new BadRequestMessage(`Transfer failed: ${reason}`);

/**
 * GitLab 14.6's `POST /groups/:id/transfer`. GitLab lowers the visibility of the group and of what it
 * holds to the new parent's; Lode refuses such a move instead (its projects' visibility is theirs to
 * change), naming the group model's rule.
 */
export function transfer(s: Group, newParentId: number | null, facts: TransferFacts, now: Date): GroupEvent[] {
  const g = existing(s);
  if (newParentId === null && g.parentId === null) throw transferFailed('Group is already a root group.');
  if (newParentId !== null && newParentId === g.parentId)
    throw transferFailed('Group is already associated to the parent group.');
  if (!facts.mayCreateThere) throw transferFailed("You don't have enough permissions.");
  if (facts.pathTaken) throw transferFailed('The parent group already has a subgroup or a project with the same path.');
  if (facts.newParentAncestry?.includes(g.groupId))
    throw transferFailed('Cannot transfer group to one of its subgroup.');
  if (facts.parentVisibility && moreOpenThan(facts.widestVisibilityInside, facts.parentVisibility))
    throw transferFailed(
      `${facts.widestVisibilityInside} is not allowed since the parent group has a ${facts.parentVisibility} visibility.`,
    );
  return [{ type: 'GroupTransferred', data: { groupId: g.groupId, parentId: newParentId, at: now.toISOString() } }];
}
