import type { Feature, ProjectSettings } from '../domain/project';

/*
 * The one map between a project's settings and their snake_case names, which are at once the
 * `projects` columns and GitLab's parameter names (so the projection, the fork's copy of a row and
 * the request parsing all read it). A new setting is a line here, not one per file.
 */

/** Each feature switch's column (and parameter). */
export const FEATURE_COLUMNS = {
  issuesEnabled: 'issues_enabled',
  mergeRequestsEnabled: 'merge_requests_enabled',
  wikiEnabled: 'wiki_enabled',
  jobsEnabled: 'jobs_enabled',
  snippetsEnabled: 'snippets_enabled',
  containerRegistryEnabled: 'container_registry_enabled',
  sharedRunnersEnabled: 'shared_runners_enabled',
  publicJobs: 'public_jobs',
  lfsEnabled: 'lfs_enabled',
  requestAccessEnabled: 'request_access_enabled',
  onlyAllowMergeIfPipelineSucceeds: 'only_allow_merge_if_pipeline_succeeds',
  onlyAllowMergeIfAllDiscussionsAreResolved: 'only_allow_merge_if_all_discussions_are_resolved',
  resolveOutdatedDiscussions: 'resolve_outdated_diff_discussions',
  printingMergeRequestLinkEnabled: 'printing_merge_request_link_enabled',
} as const satisfies Record<Feature, string>;

/** Each other setting's column (and parameter). */
export const SETTING_COLUMNS = {
  name: 'name',
  path: 'path',
  description: 'description',
  visibility: 'visibility',
  defaultBranch: 'default_branch',
  tagList: 'tag_list',
  ciConfigPath: 'ci_config_path',
  importUrl: 'import_url',
} as const satisfies Record<Exclude<keyof ProjectSettings, 'features'>, string>;

/** The features with their columns, typed for iteration. */
export const featureColumns = () => Object.entries(FEATURE_COLUMNS) as [Feature, (typeof FEATURE_COLUMNS)[Feature]][];
