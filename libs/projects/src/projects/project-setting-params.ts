import { BadParameter } from '@app/platform';
import type { ProjectSettings } from './project';
import {
  GITLAB_PARAMS_NOT_KEPT,
  SETTINGS,
  settingDefault,
  UPDATE_AT_LEAST_ONE_OF,
  type SettingWire,
} from './project-settings';
import type { ProjectWriteDto } from './projects.dto';

/*
 * The parameters are named as the columns (GitLab's names): each setting's `wire` (project-settings.ts).
 */

/**
 * The parameters sent, by the settings' wire names: an alias sent (`topics`) in place of its setting
 * (`tag_list`), and each access level and its `*_enabled` switch made to agree, the level winning
 * when both are sent (GitLab keeps the switch as the level: `true` is `enabled`, `false` `disabled`).
 */
function paramsOf(p: ProjectWriteDto): Readonly<Record<string, unknown>> {
  const given: Record<string, unknown> = { ...(p as unknown as Record<string, unknown>) };
  for (const s of SETTINGS) {
    if (s.alias && given[s.alias] !== undefined) given[s.wire] = given[s.alias];
    if (!s.switchedBy) continue;
    if (given[s.wire] !== undefined) given[s.switchedBy] = given[s.wire] !== 'disabled';
    else if (given[s.switchedBy] !== undefined) given[s.wire] = given[s.switchedBy] ? 'enabled' : 'disabled';
  }
  return given;
}

/** Settings keyed as the domain keeps them (switches under `features`), from the parameters sent or not. */
function settingsOf(given: Readonly<Record<string, unknown>>, valueOf: (wire: SettingWire) => unknown) {
  const out: Record<string, unknown> = {};
  const features: Record<string, unknown> = {};
  for (const s of SETTINGS) {
    const v = valueOf(s.wire);
    if (v !== undefined) (s.feature ? features : out)[s.key] = v;
  }
  return { out, features };
}

/** POST: `name` or `path` is required; each defaults from the other (GitLab: `Foo Project` → `foo-project`). */
export function newProjectSettings(p: ProjectWriteDto): ProjectSettings {
  if (p.name === undefined && p.path === undefined)
    throw new BadParameter('name, path are missing, at least one parameter must be provided');
  const given = paramsOf(p);
  const byWire = new Map(SETTINGS.map((s) => [s.wire, s]));
  const { out, features } = settingsOf(given, (wire) => given[wire] ?? settingDefault(byWire.get(wire)!, given));
  return { ...out, features } as ProjectSettings;
}

/**
 * PUT: only what was sent; at least one parameter (GitLab's `at_least_one_of`). `otherSent`: a
 * parameter that is no setting was sent (a multipart `avatar`, or one of GITLAB_PARAMS_NOT_KEPT).
 */
export function projectChanges(p: ProjectWriteDto, otherSent = false): Partial<ProjectSettings> {
  const given = paramsOf(p);
  if (!otherSent && !SETTINGS.some((s) => given[s.wire] !== undefined))
    throw new BadParameter(`${UPDATE_AT_LEAST_ONE_OF.join(', ')} are missing, at least one parameter must be provided`);
  const { out, features } = settingsOf(given, (wire) => given[wire]);
  if (Object.keys(features).length) out.features = features;
  return out as Partial<ProjectSettings>;
}

/** Whether the request (its query or body, as GitlabParams merges them) names a GitLab parameter Lode drops. */
export function sendsParamsNotKept(...sources: unknown[]): boolean {
  return sources.some(
    (source) =>
      typeof source === 'object' &&
      source !== null &&
      Object.keys(source).some((k) => GITLAB_PARAMS_NOT_KEPT.includes(k)),
  );
}
