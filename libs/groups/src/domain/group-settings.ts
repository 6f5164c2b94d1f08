import { namespacePathErrors } from '@app/users';
import { VISIBILITIES, type Visibility } from './access-level';

/*
 * A group's stored settings, one entry each. The entry is read by the DTOs' validation
 * (http/groups.dto.ts), the POST's defaults and the PUT's changes (http/group-settings.ts), the
 * decider's checks, state and change detection (domain/group.ts), the projection's columns
 * (projections/namespace.projection.ts), the typed `namespaces` row and its select list (queries/namespace-access.ts)
 * and the serializer's appended fields (http/group.serializer.ts).
 * How to add one: docs/architecture.md, "How to add a group setting".
 *
 * The table is in the order the DTOs declare GitLab's parameters, which is the order class-validator
 * reports several refused parameters in, and the order of the model's 400 (`{"message":{"name":[…],"path":[…]}}`): keep it.
 * Who may change them: the group's owners (and administrators), all alike (commands/group.commands.ts);
 * a group has no fork, so nothing is copied.
 */

/** How a setting travels: the DTOs' decorators and the row's TypeScript type follow from it. */
export type GroupSettingType = 'string' | 'boolean' | 'enum' | 'int';

export interface GroupSettingDescriptor<K extends string = string, W extends string = string, V = unknown> {
  /** GitLab's parameter name, which is also the `namespaces` column. */
  readonly wire: W;
  /** The key in GroupSettings, in stored events' data and in NamespaceRecord: never renamed (events keep it). */
  readonly key: K;
  readonly type: GroupSettingType;
  /** An enum's values, or an int's allowed ones (the DTOs' `@IsIn`). */
  readonly values?: readonly V[];
  /** POST needs it (`@IsDefined()`); it then has no default. */
  readonly required?: true;
  /** A JSON `null` in a PUT sets it back to its default (the update DTO's `@Nullable()`); otherwise a null counts as not sent. */
  readonly clearable?: true;
  /** A new group's value when the POST does not send it; also what an event older than the setting holds. */
  readonly default?: V;
  /** The model's checks of a value sent: its messages under `wire` in a 400 (none: valid). */
  readonly check?: (value: V, where: { topLevel: boolean }) => readonly string[];
  /**
   * Where the group's JSON shows it: `listed`, at the place GitLab's Group entity gives it, written in
   * http/group.serializer.ts; `appended`: after `parent_id`, in this table's order, by the serializer's
   * loop (GitLab's place for the settings added after 10.x's); `no`: never shown.
   */
  readonly shown: 'listed' | 'appended' | 'no';
}

/** Who may create projects in the group (GitLab 12.x-13.x's strings). */
export const PROJECT_CREATION_LEVELS = ['noone', 'maintainer', 'developer'] as const;
export type ProjectCreationLevel = (typeof PROJECT_CREATION_LEVELS)[number];
/** Who may create subgroups in the group. */
export const SUBGROUP_CREATION_LEVELS = ['owner', 'maintainer'] as const;
export type SubgroupCreationLevel = (typeof SUBGROUP_CREATION_LEVELS)[number];

/**
 * The level a group's `project_creation_level` asks of a caller who creates a project in it (GitLab's
 * `create_projects`): `noone` leaves it to administrators (undefined: no level suffices).
 */
export function projectCreationAccess(level: ProjectCreationLevel): number | undefined {
  return level === 'developer' ? 30 : level === 'maintainer' ? 40 : undefined;
}

/** The level a group's `subgroup_creation_level` asks of a caller who creates a subgroup in it (GitLab's `create_subgroup`). */
export function subgroupCreationAccess(level: SubgroupCreationLevel): number {
  return level === 'maintainer' ? 40 : 50;
}

const tooLong = 'is too long (maximum is 255 characters)';
const NAME = /^[\p{L}\p{N}_.][\p{L}\p{N}\p{Pd}_. ]*$/u;
const one = (message: string | false): readonly string[] => (message ? [message] : []);

const entry = <K extends string, W extends string, V>(
  key: K,
  wire: W,
  type: GroupSettingType,
  d: Omit<GroupSettingDescriptor<K, W, V>, 'key' | 'wire' | 'type'>,
): GroupSettingDescriptor<K, W, V> => ({ key, wire, type, ...d });

/* The table. Defaults are GitLab 10.x's for a new group; the messages its model's. */
export const GROUP_SETTINGS = [
  entry<'name', 'name', string>('name', 'name', 'string', {
    required: true,
    check: (v) =>
      one(
        !v.trim()
          ? "can't be blank"
          : v.length > 255
            ? tooLong
            : !NAME.test(v) &&
              "can contain only letters, digits, emojis, '_', '.', dash, space. It must start with letter, digit, emoji or '_'.",
      ),
    shown: 'listed',
  }),
  entry<'path', 'path', string>('path', 'path', 'string', {
    required: true,
    check: (v, { topLevel }) => namespacePathErrors(v, topLevel),
    shown: 'listed',
  }),
  // GitLab's namespaces.description is NOT NULL (a null there is a 500 in 10.x): a null clears it to empty text.
  entry<'description', 'description', string>('description', 'description', 'string', {
    clearable: true,
    default: '',
    check: (v) => one(v.length > 255 && tooLong),
    shown: 'listed',
  }),
  // Bounded by the parent and by what the group holds: domain/group.ts validateSettings.
  entry<'visibility', 'visibility', Visibility>('visibility', 'visibility', 'enum', {
    values: VISIBILITIES,
    default: 'private',
    shown: 'listed',
  }),
  entry<'lfsEnabled', 'lfs_enabled', boolean>('lfsEnabled', 'lfs_enabled', 'boolean', {
    default: true,
    shown: 'listed',
  }),
  entry<'requestAccessEnabled', 'request_access_enabled', boolean>(
    'requestAccessEnabled',
    'request_access_enabled',
    'boolean',
    { default: false, shown: 'listed' },
  ),
  /*
   * The settings GitLab added after 10.x that clients write and read back (Terraform's gitlab_group
   * sends them on create and plans a change for every one that does not come back as stored).
   * Which of them change what Lode does is said in the README ("Groups: shares, transfer, inherited members").
   */
  entry<'shareWithGroupLock', 'share_with_group_lock', boolean>(
    'shareWithGroupLock',
    'share_with_group_lock',
    'boolean',
    {
      default: false,
      shown: 'appended',
    },
  ),
  entry<'requireTwoFactorAuthentication', 'require_two_factor_authentication', boolean>(
    'requireTwoFactorAuthentication',
    'require_two_factor_authentication',
    'boolean',
    { default: false, shown: 'appended' },
  ),
  entry<'twoFactorGracePeriod', 'two_factor_grace_period', number>(
    'twoFactorGracePeriod',
    'two_factor_grace_period',
    'int',
    {
      default: 48,
      check: (v) => one(v < 0 && 'must be greater than or equal to 0'),
      shown: 'appended',
    },
  ),
  // GitLab's `project_creation_level_str` (Gitlab::Access::PROJECT_CREATION_STRING_OPTIONS of 12.x-13.x).
  entry<'projectCreationLevel', 'project_creation_level', ProjectCreationLevel>(
    'projectCreationLevel',
    'project_creation_level',
    'enum',
    { values: PROJECT_CREATION_LEVELS, default: 'maintainer', shown: 'appended' },
  ),
  // GitLab shows null for "as the instance says"; Lode has no instance-wide Auto DevOps, so it is a plain flag.
  entry<'autoDevopsEnabled', 'auto_devops_enabled', boolean>('autoDevopsEnabled', 'auto_devops_enabled', 'boolean', {
    default: false,
    shown: 'appended',
  }),
  entry<'subgroupCreationLevel', 'subgroup_creation_level', SubgroupCreationLevel>(
    'subgroupCreationLevel',
    'subgroup_creation_level',
    'enum',
    { values: SUBGROUP_CREATION_LEVELS, default: 'owner', shown: 'appended' },
  ),
  entry<'emailsDisabled', 'emails_disabled', boolean>('emailsDisabled', 'emails_disabled', 'boolean', {
    default: false,
    shown: 'appended',
  }),
  entry<'mentionsDisabled', 'mentions_disabled', boolean>('mentionsDisabled', 'mentions_disabled', 'boolean', {
    default: false,
    shown: 'appended',
  }),
  // Gitlab::Access::PROTECTION_NONE (0) .. PROTECTION_DEV_CAN_MERGE (3), the levels LODE_DEFAULT_BRANCH_PROTECTION takes;
  // a POST without it takes the instance's (http/group-settings.ts), as GitLab does.
  entry<'defaultBranchProtection', 'default_branch_protection', number>(
    'defaultBranchProtection',
    'default_branch_protection',
    'int',
    { values: [0, 1, 2, 3], default: 2, shown: 'appended' },
  ),
  entry<'preventForkingOutsideGroup', 'prevent_forking_outside_group', boolean>(
    'preventForkingOutsideGroup',
    'prevent_forking_outside_group',
    'boolean',
    { default: false, shown: 'appended' },
  ),
] as const;

type Entry = (typeof GROUP_SETTINGS)[number];
type ValueOf<E> = E extends GroupSettingDescriptor<string, string, infer V> ? V : never;

/** The settings as the events, the decider and NamespaceRecord hold them. */
export type GroupSettings = { [E in Entry as E['key']]: ValueOf<E> };
/** A setting's wire name (parameter and column). */
export type GroupSettingWire = Entry['wire'];

/** Any entry, for loops that read only the common fields. */
export type AnyGroupSetting = GroupSettingDescriptor<keyof GroupSettings, GroupSettingWire, unknown>;
export const GROUP_SETTING_LIST: readonly AnyGroupSetting[] = GROUP_SETTINGS as readonly AnyGroupSetting[];

/**
 * Settings from an event's data (or any object keyed as GroupSettings), each missing key (an event
 * older than its setting) at its default: so every reader of GroupCreated sees all.
 */
export function groupSettingsFrom(data: Partial<GroupSettings>): GroupSettings {
  const out: Record<string, unknown> = {};
  for (const s of GROUP_SETTING_LIST) out[s.key] = data[s.key] === undefined ? s.default : data[s.key];
  return out as GroupSettings;
}
