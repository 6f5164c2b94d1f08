import { BadParameter } from '@app/platform';
import { FEATURE_DEFAULTS, pathFromName, type Feature, type ProjectSettings } from '../domain/project';
import { FEATURE_COLUMNS, featureColumns, SETTING_COLUMNS } from '../projections/project-columns';
import type { ProjectWriteDto } from './projects.dto';

// The parameters are named as the columns (GitLab's names): one map serves both.
const WRITE_PARAMS = [...Object.values(SETTING_COLUMNS), ...Object.values(FEATURE_COLUMNS)];

/** POST: `name` or `path` is required; each defaults from the other (GitLab: `Foo Project` → `foo-project`). */
export function newProjectSettings(p: ProjectWriteDto): ProjectSettings {
  if (p.name === undefined && p.path === undefined)
    throw new BadParameter('name, path are missing, at least one parameter must be provided');
  const name = p.name ?? p.path!;
  const features = { ...FEATURE_DEFAULTS };
  for (const [f, param] of featureColumns()) {
    if (p[param] !== undefined) features[f] = p[param];
  }
  return {
    name,
    path: p.path ?? pathFromName(name),
    description: p.description ?? null,
    visibility: p.visibility ?? 'private',
    defaultBranch: p.default_branch ?? null,
    tagList: p.tag_list ?? [],
    ciConfigPath: p.ci_config_path ?? null,
    importUrl: p.import_url ?? null,
    features,
  };
}

/** GitLab 10.x's `at_least_one_of` list for PUT /projects/:id, in its order (`public_builds` is Lode's `public_jobs`). */
const UPDATE_AT_LEAST_ONE_OF = [
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
];

/** PUT: only what was sent; at least one parameter (GitLab's `at_least_one_of`), a multipart `avatar` counting as one. */
export function projectChanges(p: ProjectWriteDto, withAvatar = false): Partial<ProjectSettings> {
  const given = p as unknown as Record<string, unknown>;
  if (!withAvatar && !WRITE_PARAMS.some((k) => given[k] !== undefined))
    throw new BadParameter(`${UPDATE_AT_LEAST_ONE_OF.join(', ')} are missing, at least one parameter must be provided`);
  const features: Partial<Record<Feature, boolean>> = {};
  for (const [f, param] of featureColumns()) {
    if (p[param] !== undefined) features[f] = p[param];
  }
  const changes: Record<string, unknown> = {};
  for (const [setting, param] of Object.entries(SETTING_COLUMNS))
    if (given[param] !== undefined) changes[setting] = given[param];
  if (Object.keys(features).length) changes.features = features;
  return changes as Partial<ProjectSettings>;
}
