import { validRefName } from '@app/git';
import { VISIBILITIES, type Visibility } from '@app/groups';

/*
 * A project's stored settings, one entry each. The entry is read by the DTO's validation
 * (projects.dto.ts), the POST's defaults and the PUT's changes (project-setting-params.ts), the
 * decider's checks and change detection (project.ts), the projection's columns
 * (project-rows.ts, project.projection.ts), the typed row (project.queries.ts), the serializer's
 * appended fields (project.serializer.ts) and the fork's copy (forks/fork-project.command.ts).
 * How to add one: docs/architecture.md, "How to add a project setting".
 *
 * The table is in the order the DTO declares GitLab's parameters, which is the order class-validator
 * reports several refused parameters in (`{"error":"a is invalid, b is invalid"}`): keep it.
 */

/** How a setting travels: the DTO's decorators and the row's TypeScript type follow from it. */
export type SettingType = 'string' | 'nullable-string' | 'boolean' | 'string-list' | 'enum';

/** What a POST without the parameter stores: a value, or one computed from the other parameters sent. */
type Default<V> = V | ((given: Readonly<Record<string, unknown>>) => V);

export interface SettingDescriptor<K extends string = string, W extends string = string, V = unknown> {
  /** GitLab's parameter name, which is also the `projects` column. */
  readonly wire: W;
  /** The key in ProjectSettings and in stored events' data: never renamed (events keep it). */
  readonly key: K;
  readonly type: SettingType;
  /** An enum's values (the DTO's `@IsIn`). */
  readonly values?: readonly V[];
  /** A JSON `null` clears it (the DTO's `@Nullable()`); otherwise a null counts as not sent. */
  readonly clearable?: boolean;
  /** A new project's value when the POST does not send it; also what an event older than the setting holds. */
  readonly default: Default<V>;
  /** The model's check of a value sent (never undefined nor null): its message under `wire` in a 400, or undefined. */
  readonly check?: (value: NonNullable<V>) => string | undefined;
  /** What the decider stores of a value sent (create and update), where not the value itself. */
  readonly normalize?: (value: V) => V;
  /** Stored under the events' `features` (the stored shape of the first fourteen switches). */
  readonly feature?: true;
  /** `copy`: a fork takes the source's value; `default`: the fork gets the default. */
  readonly fork: 'copy' | 'default';
  /**
   * Where the project's JSON shows it: `basic` and `full` at the place GitLab's entity gives it, written
   * in project.serializer.ts; `appended`: after `printing_merge_requests_link_enabled`, in this
   * table's order, by the serializer's loop (GitLab's place for the settings added after 10.x's); `no`:
   * never shown.
   */
  readonly shown: 'basic' | 'full' | 'appended' | 'no';
  /** The response's name, where it is not `wire`. */
  readonly shownAs?: string;
  /**
   * A newer GitLab parameter naming the same stored value, which wins when both are sent and is shown
   * beside it (`topics`, GitLab 14.0, for `tag_list`).
   */
  readonly alias?: string;
  /**
   * The `*_enabled` switch (its wire name) that GitLab keeps as this access level: a switch sent sets
   * the level to `enabled` or `disabled`, a level sent sets the switch to whether it is not `disabled`,
   * the level winning when both are sent (project-setting-params.ts).
   */
  readonly switchedBy?: string;
}

const tooLong = 'is too long (maximum is 255 characters)';
const NAME = /^[\p{L}\p{N}\p{Emoji_Presentation}_][\p{L}\p{N}\p{Pd}\p{Emoji_Presentation}_. ]*$/u;
const PATH = /^[a-zA-Z0-9_.][a-zA-Z0-9_.-]*$/;

/**
 * GitLab's default path for a name, Rails' `parameterize`: accents dropped, every run of characters
 * other than ASCII letters, digits, `-` and `_` (dots too) turned into one dash, no dash at either end,
 * lower case. `Foo Project` → `foo-project`, `Café.Bar` → `cafe-bar`. It may come out empty, which
 * the path validation then reports.
 */
export function pathFromName(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .replace(/[^a-zA-Z0-9\-_]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^-|-$/g, '')
    .toLowerCase();
}

const string = <K extends string, W extends string>(
  key: K,
  wire: W,
  d: Omit<SettingDescriptor<K, W, string>, 'key' | 'wire' | 'type'>,
): SettingDescriptor<K, W, string> => ({ key, wire, type: 'string', ...d });
const nullableString = <K extends string, W extends string>(
  key: K,
  wire: W,
  d: Omit<SettingDescriptor<K, W, string | null>, 'key' | 'wire' | 'type'>,
): SettingDescriptor<K, W, string | null> => ({ key, wire, type: 'nullable-string', ...d });
const oneOf = <K extends string, W extends string, V extends string>(
  key: K,
  wire: W,
  values: readonly V[],
  d: Omit<SettingDescriptor<K, W, V>, 'key' | 'wire' | 'type' | 'values'>,
): SettingDescriptor<K, W, V> => ({ key, wire, type: 'enum', values, ...d });
const stringList = <K extends string, W extends string>(
  key: K,
  wire: W,
  d: Omit<SettingDescriptor<K, W, string[]>, 'key' | 'wire' | 'type'>,
): SettingDescriptor<K, W, string[]> => ({ key, wire, type: 'string-list', ...d });
/** A plain boolean (not one of the first switches kept under `features`), copied by a fork, shown appended. */
const flag = <K extends string, W extends string>(
  key: K,
  wire: W,
  dflt: boolean,
): SettingDescriptor<K, W, boolean> => ({
  key,
  wire,
  type: 'boolean',
  default: dflt,
  fork: 'copy',
  shown: 'appended',
});

/** GitLab's ProjectFeature levels (`string_access_level`); `pages` also knows `public`. */
export const ACCESS_LEVELS = ['disabled', 'private', 'enabled'] as const;
export type FeatureAccessLevel = (typeof ACCESS_LEVELS)[number] | 'public';

/**
 * A `*_access_level` (GitLab 12.x+ ProjectFeature), copied by a fork, shown appended. Paired with its
 * switch (`switchedBy`), a new project's level follows the switch sent (`issues_enabled=false`:
 * `disabled`), and an event older than the level reads it from the switch it holds.
 */
const accessLevel = <K extends string, W extends string>(
  key: K,
  wire: W,
  switchedBy?: string,
  values: readonly FeatureAccessLevel[] = ACCESS_LEVELS,
  dflt: FeatureAccessLevel | ((given: Readonly<Record<string, unknown>>) => FeatureAccessLevel) = 'enabled',
): SettingDescriptor<K, W, FeatureAccessLevel> => ({
  key,
  wire,
  type: 'enum',
  values,
  default: switchedBy ? (p) => (p[switchedBy] === false ? 'disabled' : 'enabled') : dflt,
  fork: 'copy',
  shown: 'appended',
  ...(switchedBy ? { switchedBy } : {}),
});

/** One of the switches kept under the events' `features`, copied by a fork and shown where GitLab shows it. */
const feature = <K extends string, W extends string>(
  key: K,
  wire: W,
  dflt: boolean,
  d: Partial<Pick<SettingDescriptor<K, W, boolean>, 'shown' | 'shownAs'>> = {},
): SettingDescriptor<K, W, boolean> & { feature: true } => ({
  key,
  wire,
  type: 'boolean',
  default: dflt,
  feature: true,
  fork: 'copy',
  shown: 'full',
  ...d,
});

/* The table. Defaults are GitLab 10.x's for a new project; the messages its model's. */
export const PROJECT_SETTINGS = [
  // POST needs `name` or `path` (project-setting-params.ts); each defaults from the other.
  string('name', 'name', {
    default: (p) => (p.name ?? p.path) as string,
    check: (v) =>
      !v.trim()
        ? "can't be blank"
        : v.length > 255
          ? tooLong
          : !NAME.test(v)
            ? "can contain only letters, digits, emojis, '_', '.', dash, space. It must start with letter, digit, emoji or '_'."
            : undefined,
    fork: 'copy',
    shown: 'basic',
  }),
  string('path', 'path', {
    default: (p) => pathFromName((p.name ?? p.path) as string),
    // Unlike a namespace path, a project path may end in a dot (GitLab's PROJECT_PATH_FORMAT_REGEX).
    check: (v) =>
      !v
        ? "can't be blank"
        : v.length > 255
          ? tooLong
          : !PATH.test(v) || /(\.git|\.atom)$/i.test(v)
            ? "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-', end in '.git' or end in '.atom'"
            : undefined,
    fork: 'copy',
    shown: 'basic',
  }),
  // The first push names it when it is null (projections: RepositoryPushed).
  nullableString('defaultBranch', 'default_branch', {
    default: null,
    // git's own branch name rules (check-ref-format), which the new repository's HEAD is written with.
    check: (v) => (v.length > 255 || !validRefName(v) ? 'is invalid' : undefined),
    fork: 'copy',
    shown: 'basic',
  }),
  nullableString('description', 'description', {
    clearable: true,
    default: null,
    check: (v) => (v.length > 2000 ? 'is too long (maximum is 2000 characters)' : undefined),
    fork: 'copy',
    shown: 'basic',
  }),
  feature('issuesEnabled', 'issues_enabled', true),
  feature('mergeRequestsEnabled', 'merge_requests_enabled', true),
  feature('jobsEnabled', 'jobs_enabled', true),
  feature('wikiEnabled', 'wiki_enabled', true),
  feature('snippetsEnabled', 'snippets_enabled', true),
  feature('containerRegistryEnabled', 'container_registry_enabled', true),
  feature('sharedRunnersEnabled', 'shared_runners_enabled', true),
  feature('publicJobs', 'public_jobs', true),
  feature('onlyAllowMergeIfPipelineSucceeds', 'only_allow_merge_if_pipeline_succeeds', false),
  feature('onlyAllowMergeIfAllDiscussionsAreResolved', 'only_allow_merge_if_all_discussions_are_resolved', false),
  feature('resolveOutdatedDiscussions', 'resolve_outdated_diff_discussions', false),
  feature('lfsEnabled', 'lfs_enabled', true),
  feature('requestAccessEnabled', 'request_access_enabled', false),
  // GitLab's API documentation: the response name has `requests`, the parameter not.
  feature('printingMergeRequestLinkEnabled', 'printing_merge_request_link_enabled', true, {
    shownAs: 'printing_merge_requests_link_enabled',
  }),
  // Bounded by the namespace: project.ts validateSettings and the fork (no more open than the target group).
  oneOf('visibility', 'visibility', VISIBILITIES as readonly Visibility[], {
    default: 'private',
    fork: 'copy',
    shown: 'full',
  }),
  // Stored as sent, never fetched: Lode imports nothing. A fork does not inherit it.
  nullableString('importUrl', 'import_url', {
    default: null,
    check: (v) =>
      !/^(https?|git):\/\/\S+$/.test(v) ? 'is blocked: Only allowed protocols are http, https and git' : undefined,
    fork: 'default',
    shown: 'no',
  }),
  stringList('tagList', 'tag_list', {
    alias: 'topics',
    default: [],
    normalize: (tags) => [...new Set(tags.map((t) => t.trim()).filter(Boolean))].sort((a, b) => a.localeCompare(b)),
    check: (v) => (v.some((t) => t.length > 255) ? 'is invalid' : undefined),
    fork: 'copy',
    shown: 'basic',
  }),
  nullableString('ciConfigPath', 'ci_config_path', {
    clearable: true,
    default: null,
    check: (v) => (v.length > 255 || v.includes('..') ? 'is invalid' : undefined),
    fork: 'copy',
    shown: 'full',
  }),
  // Kept and shown, as clients (Terraform's gitlab_project, python-gitlab) write and read them back;
  // Lode has no merge requests, pipelines, pages or packages, so none of them changes what it does.
  oneOf('mergeMethod', 'merge_method', ['merge', 'rebase_merge', 'ff'] as const, {
    default: 'merge',
    fork: 'copy',
    shown: 'appended',
  }),
  oneOf('squashOption', 'squash_option', ['never', 'always', 'default_on', 'default_off'] as const, {
    default: 'default_off',
    fork: 'copy',
    shown: 'appended',
  }),
  accessLevel('issuesAccessLevel', 'issues_access_level', 'issues_enabled'),
  accessLevel('repositoryAccessLevel', 'repository_access_level'),
  accessLevel('mergeRequestsAccessLevel', 'merge_requests_access_level', 'merge_requests_enabled'),
  accessLevel('forkingAccessLevel', 'forking_access_level'),
  accessLevel('wikiAccessLevel', 'wiki_access_level', 'wiki_enabled'),
  accessLevel('buildsAccessLevel', 'builds_access_level', 'jobs_enabled'),
  accessLevel('snippetsAccessLevel', 'snippets_access_level', 'snippets_enabled'),
  // GitLab's ProjectFeature: pages are `enabled` in a public project, `private` in the others.
  accessLevel('pagesAccessLevel', 'pages_access_level', undefined, [...ACCESS_LEVELS, 'public'], (p) =>
    p.visibility === 'public' ? 'enabled' : 'private',
  ),
  accessLevel('operationsAccessLevel', 'operations_access_level'),
  accessLevel('analyticsAccessLevel', 'analytics_access_level'),
  accessLevel('requirementsAccessLevel', 'requirements_access_level'),
  accessLevel(
    'securityAndComplianceAccessLevel',
    'security_and_compliance_access_level',
    undefined,
    ACCESS_LEVELS,
    'private',
  ),
  accessLevel('containerRegistryAccessLevel', 'container_registry_access_level', 'container_registry_enabled'),
  flag('packagesEnabled', 'packages_enabled', true),
  flag('removeSourceBranchAfterMerge', 'remove_source_branch_after_merge', true),
  flag('allowMergeOnSkippedPipeline', 'allow_merge_on_skipped_pipeline', false),
  flag('autocloseReferencedIssues', 'autoclose_referenced_issues', true),
  flag('ciForwardDeploymentEnabled', 'ci_forward_deployment_enabled', true),
  flag('mergePipelinesEnabled', 'merge_pipelines_enabled', false),
  flag('mergeTrainsEnabled', 'merge_trains_enabled', false),
] as const;

type Entry = (typeof PROJECT_SETTINGS)[number];
type ValueOf<E> = E extends SettingDescriptor<string, string, infer V> ? V : never;
type FeatureEntry = Extract<Entry, { feature: true }>;
type PlainEntry = Exclude<Entry, { feature: true }>;

/** A boolean switch kept under the events' `features`. */
export type Feature = FeatureEntry['key'];
/** The settings as the events and the decider hold them. */
export type ProjectSettings = { [E in PlainEntry as E['key']]: ValueOf<E> } & { features: Record<Feature, boolean> };
/** The settings as the `projects` columns (and GitLab's parameters) name them, for the typed row. */
export type ProjectSettingColumns = { [E in Entry as E['wire']]: ValueOf<E> };
/** A setting's wire name (parameter and column). */
export type SettingWire = Entry['wire'];
/** Every parameter the settings take: their wire names and the newer aliases (`topics`). */
export type SettingParam = SettingWire | 'topics';

/** Any entry, for loops that read only the common fields. */
export type AnySetting = SettingDescriptor<string, SettingWire, unknown>;
export const SETTINGS: readonly AnySetting[] = PROJECT_SETTINGS as readonly AnySetting[];

export const FEATURES = PROJECT_SETTINGS.filter((s): s is FeatureEntry => 'feature' in s).map((s) => s.key);

/** GitLab 10.x's defaults for a new project's switches. */
export const FEATURE_DEFAULTS = Object.fromEntries(
  PROJECT_SETTINGS.filter((s): s is FeatureEntry => 'feature' in s).map((s) => [s.key, s.default]),
) as Record<Feature, boolean>;

/** A setting's value in `settings` (a feature under `features`), or undefined when absent. */
export function settingValue(
  s: AnySetting,
  settings: { features?: Partial<Record<string, unknown>> } & Record<string, unknown>,
): unknown {
  return s.feature ? settings.features?.[s.key] : settings[s.key];
}

/** The default of a setting for a new project, given the parameters sent (GitLab's names). */
export function settingDefault(s: AnySetting, given: Readonly<Record<string, unknown>> = {}): unknown {
  const v = typeof s.default === 'function' ? (s.default as (g: typeof given) => unknown)(given) : s.default;
  return Array.isArray(v) ? [...(v as unknown[])] : v;
}

/** A value sent as the decider stores it (tags trimmed, deduplicated and sorted). */
export function normalized(s: AnySetting, value: unknown): unknown {
  return s.normalize ? s.normalize(value) : value;
}

/** All of a project's settings as the decider stores them. */
export function normalizedSettings(settings: ProjectSettings): ProjectSettings {
  const out: Record<string, unknown> = { ...settings };
  for (const s of SETTINGS) if (s.normalize && !s.feature) out[s.key] = s.normalize(out[s.key]);
  return out as ProjectSettings;
}

/**
 * Settings from an event's data (or any object keyed as ProjectSettings), each missing key (an event
 * older than its setting) at its default: so every reader of ProjectCreated and ProjectForked sees all.
 */
export function settingsFrom(data: Partial<ProjectSettings> & Record<string, unknown>): ProjectSettings {
  const out: Record<string, unknown> = {};
  const features: Record<string, unknown> = {};
  // What the event holds, by GitLab's names: a missing access level follows the switch it holds.
  const held = Object.fromEntries(SETTINGS.map((s) => [s.wire, settingValue(s, data)]));
  for (const s of SETTINGS) {
    const v = held[s.wire];
    (s.feature ? features : out)[s.key] = v === undefined ? settingDefault(s, held) : v;
  }
  out.features = features;
  return out as ProjectSettings;
}

/** What a fork of the project with these columns takes: each setting's value (`fork: 'copy'`) or its default. */
export function forkedSettings(source: Readonly<ProjectSettingColumns>): ProjectSettings {
  const out: Record<string, unknown> = {};
  const features: Record<string, unknown> = {};
  for (const s of SETTINGS) {
    const v = s.fork === 'copy' ? source[s.wire] : settingDefault(s);
    (s.feature ? features : out)[s.key] =
      s.type === 'boolean' ? Boolean(v) : Array.isArray(v) ? [...(v as unknown[])] : v;
  }
  return { ...out, features } as ProjectSettings;
}

/**
 * GitLab's `at_least_one_of` list for PUT /projects/:id: 10.x's, in its order (`public_builds` is Lode's
 * `public_jobs`), then the parameters later versions added that Lode keeps.
 */
export const UPDATE_AT_LEAST_ONE_OF = [
  'jobs_enabled',
  'resolve_outdated_diff_discussions',
  'ci_config_path',
  'container_registry_enabled',
  'default_branch',
  'description',
  'issues_enabled',
  'lfs_enabled',
  'merge_requests_enabled',
  'name',
  'only_allow_merge_if_all_discussions_are_resolved',
  'only_allow_merge_if_pipeline_succeeds',
  'path',
  'printing_merge_request_link_enabled',
  'public_jobs',
  'request_access_enabled',
  'shared_runners_enabled',
  'snippets_enabled',
  'tag_list',
  'visibility',
  'wiki_enabled',
  // Added by later GitLab versions to the list (`update_params_at_least_one_of`), in their order.
  'merge_method',
  'issues_access_level',
  'repository_access_level',
  'merge_requests_access_level',
  'forking_access_level',
  'wiki_access_level',
  'builds_access_level',
  'snippets_access_level',
  'pages_access_level',
  'operations_access_level',
  'analytics_access_level',
  'requirements_access_level',
  'security_and_compliance_access_level',
  'container_registry_access_level',
  'squash_option',
  'topics',
  'packages_enabled',
  'remove_source_branch_after_merge',
  'allow_merge_on_skipped_pipeline',
  'autoclose_referenced_issues',
  'ci_forward_deployment_enabled',
  'merge_pipelines_enabled',
  'merge_trains_enabled',
] as const satisfies readonly SettingParam[];

/**
 * The order a model's 400 lists refused fields in (`{"message":{"description":[…],"default_branch":[…]}}`),
 * which is not the parameters' order; a setting not named here comes after these, in the table's order.
 */
export const CHECKED_IN_ORDER: readonly SettingWire[] = [
  'name',
  'path',
  'description',
  'default_branch',
  'ci_config_path',
  'import_url',
  'tag_list',
];

/**
 * Parameters of GitLab's PUT /projects/:id (its `update_params_at_least_one_of`, 12.x to today) that
 * Lode neither keeps nor acts on. GitLab accepts a PUT carrying only these (200), so Lode counts them
 * as parameters sent and drops them: an update Terraform or python-gitlab makes of a field Lode does not
 * model answers the unchanged project, where a PUT of names GitLab does not know is still its 400.
 */
export const GITLAB_PARAMS_NOT_KEPT: readonly string[] = [
  'approvals_before_merge',
  'auto_cancel_pending_pipelines',
  'auto_devops_deploy_strategy',
  'auto_devops_enabled',
  'build_coverage_regex',
  'build_git_strategy',
  'build_timeout',
  'ci_allow_fork_pipelines_to_run_in_parent_project',
  'ci_default_git_depth',
  'ci_separated_caches',
  'container_expiration_policy_attributes',
  'emails_disabled',
  'emails_enabled',
  'enforce_auth_checks_on_uploads',
  'environments_access_level',
  'external_authorization_classification_label',
  'feature_flags_access_level',
  'infrastructure_access_level',
  'issue_branch_template',
  'issues_template',
  'keep_latest_artifact',
  'merge_commit_template',
  'merge_requests_template',
  'mirror',
  'mirror_overwrites_diverged_branches',
  'mirror_trigger_builds',
  'mirror_user_id',
  'model_experiments_access_level',
  'model_registry_access_level',
  'monitor_access_level',
  'mr_default_target_self',
  'only_mirror_protected_branches',
  'package_registry_access_level',
  'public_builds',
  'releases_access_level',
  'restrict_user_defined_variables',
  'service_desk_enabled',
  'show_default_award_emojis',
  'squash_commit_template',
  'suggestion_commit_message',
  'warn_about_potentially_unwanted_characters',
];
