import { BadParameter } from '@app/platform';
import type { ProjectSettings } from './project';
import { SETTINGS, settingDefault, UPDATE_AT_LEAST_ONE_OF, type SettingWire } from './project-settings';
import type { ProjectWriteDto } from './projects.dto';

/*
 * The parameters are named as the columns (GitLab's names): each setting's `wire` (project-settings.ts).
 */

const paramsOf = (p: ProjectWriteDto) => p as unknown as Readonly<Record<string, unknown>>;

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

/** PUT: only what was sent; at least one parameter (GitLab's `at_least_one_of`), a multipart `avatar` counting as one. */
export function projectChanges(p: ProjectWriteDto, withAvatar = false): Partial<ProjectSettings> {
  const given = paramsOf(p);
  if (!withAvatar && !SETTINGS.some((s) => given[s.wire] !== undefined))
    throw new BadParameter(`${UPDATE_AT_LEAST_ONE_OF.join(', ')} are missing, at least one parameter must be provided`);
  const { out, features } = settingsOf(given, (wire) => given[wire]);
  if (Object.keys(features).length) out.features = features;
  return out as Partial<ProjectSettings>;
}
