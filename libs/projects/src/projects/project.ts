import { assertNever, FieldErrors, NotFound, checkCustomAttribute, holdsCustomAttribute } from '@app/platform';
import { moreOpenThan, type Visibility } from '@app/groups';
import { evolveFork, forkState, type ImportStatus, type ProjectForkEvent } from '../forks/fork';
import {
  evolveMembers,
  personalOwnerAdded,
  type ProjectMemberEvent,
  type ProjectMembers,
} from '../members/project-members';
import { evolveRules, type ProtectedBranchEvent, type ProtectedBranchRule } from '../protected-refs/protected-branch';
import { evolveTagRules, type ProtectedTagEvent, type ProtectedTagRule } from '../protected-refs/protected-tag';
import { housekeepingPending, type HousekeepingEvent } from '../repository-jobs/housekeeping';
import type { RepositoryPushedData } from '../pushes/repository-push';
import { evolveShares, type ProjectShares, type ProjectSharingEvent } from '../sharing/project-sharing';
import { existing } from './existing-project';
import {
  CHECKED_IN_ORDER,
  normalized,
  normalizedSettings,
  SETTINGS,
  settingsFrom,
  settingValue,
  type Feature,
  type ProjectSettings,
} from './project-settings';

/*
 * A project. Stream `project-<id>`. The state is composed of the parts each capability keeps and
 * decides on (members/, sharing/, forks/, protected-refs/, repository-jobs/); this file
 * holds the project's own life (creation, settings, archive, transfer, deletion, custom attributes)
 * and the composition. What accrues with use lives on streams of its own, so a project command folds
 * the same few events on a project's first day and after years of use: stars
 * (`star-<project>-<user>`, forks/star.ts), pushes (`push-<id>`; only the push that named the
 * default branch is on the project's stream, see pushes/repository-push.ts), and releases with their
 * links (`release-<project>-<tag hash>`, releases/release-stream.ts).
 */

export { FEATURE_DEFAULTS, FEATURES, pathFromName, type Feature, type ProjectSettings } from './project-settings';
export type { ImportStatus } from '../forks/fork';

/** The project's own life: creation, settings, avatar, archive, transfer, deletion, custom attributes. */
export type ProjectLifeEvent =
  | {
      type: 'ProjectCreated';
      data: ProjectSettings & {
        projectId: number;
        namespaceId: number;
        creatorId: number;
        runnersToken: string;
        at: string;
      };
    }
  | {
      type: 'ProjectUpdated';
      data: {
        projectId: number;
        changes: Partial<Omit<ProjectSettings, 'features'>> & { features?: Partial<Record<Feature, boolean>> };
        at: string;
      };
    }
  // The avatar's stored file name (under uploads/-/system/project/avatar/<id>/), or null without one.
  | { type: 'ProjectAvatarChanged'; data: { projectId: number; avatar: string | null; at: string } }
  | { type: 'ProjectArchived'; data: { projectId: number; at: string } }
  | { type: 'ProjectUnarchived'; data: { projectId: number; at: string } }
  | {
      type: 'ProjectTransferred';
      data: { projectId: number; fromNamespaceId: number; namespaceId: number; at: string };
    }
  | { type: 'ProjectDeleted'; data: { projectId: number; namespaceId: number; at: string } }
  | { type: 'ProjectCustomAttributeSet'; data: { projectId: number; key: string; value: string; at: string } }
  | { type: 'ProjectCustomAttributeRemoved'; data: { projectId: number; key: string; at: string } };

/** Every event of a project's stream, by the capability that decides it. */
export type ProjectEvent =
  | ProjectLifeEvent
  | ProjectMemberEvent
  | ProjectSharingEvent
  | ProjectForkEvent
  | HousekeepingEvent
  // The push that named the default branch (every other push is on a stream of its own).
  | { type: 'RepositoryPushed'; data: RepositoryPushedData }
  | ProtectedBranchEvent
  | ProtectedTagEvent;

export type Project =
  | { exists: false }
  | {
      exists: true;
      projectId: number;
      namespaceId: number;
      archived: boolean;
      settings: ProjectSettings;
      members: ProjectMembers;
      sharedWith: ProjectShares;
      customAttributes: Record<string, string>;
      forkedFromId: number | null;
      importStatus: ImportStatus;
      housekeepingPending: boolean;
      /** In creation order, as GitLab lists them. */
      protectedBranches: ProtectedBranchRule[];
      /** In creation order, as GitLab lists them. */
      protectedTags: ProtectedTagRule[];
    };

export const initial = (): Project => ({ exists: false });

export function evolve(s: Project, e: ProjectEvent): Project {
  if (e.type === 'ProjectCreated' || e.type === 'ProjectForked') {
    const d = e.data;
    return {
      exists: true,
      projectId: d.projectId,
      namespaceId: d.namespaceId,
      archived: false,
      settings: settingsFrom(d),
      members: {},
      sharedWith: {},
      customAttributes: {},
      ...forkState(e.type === 'ProjectForked' ? e.data.forkedFromId : null),
      housekeepingPending: false,
      protectedBranches: [],
      protectedTags: [],
    };
  }
  if (!s.exists) return s;
  switch (e.type) {
    case 'ProjectUpdated': {
      const { features, ...rest } = e.data.changes;
      return { ...s, settings: { ...s.settings, ...rest, features: { ...s.settings.features, ...features } } };
    }
    case 'ProjectAvatarChanged':
      return s; // the read model's concern only: no decision depends on the avatar
    case 'ProjectArchived':
      return { ...s, archived: true };
    case 'ProjectUnarchived':
      return { ...s, archived: false };
    case 'ProjectTransferred':
      return { ...s, namespaceId: e.data.namespaceId };
    case 'ProjectDeleted':
      return { exists: false };
    case 'ProjectCustomAttributeSet':
      return { ...s, customAttributes: { ...s.customAttributes, [e.data.key]: e.data.value } };
    case 'ProjectCustomAttributeRemoved': {
      const customAttributes = { ...s.customAttributes };
      delete customAttributes[e.data.key];
      return { ...s, customAttributes };
    }
    case 'ProjectMemberAdded':
    case 'ProjectMemberUpdated':
    case 'ProjectMemberRemoved':
      return { ...s, members: evolveMembers(s.members, e) };
    case 'ProjectSharedWithGroup':
    case 'ProjectUnsharedWithGroup':
      return { ...s, sharedWith: evolveShares(s.sharedWith, e) };
    case 'ProjectImportStatusChanged':
    case 'ProjectForkRelationCreated':
    case 'ProjectForkRelationRemoved':
      return { ...s, ...evolveFork(s, e) };
    case 'ProjectHousekeepingRequested':
    case 'ProjectHousekeepingFinished':
      return { ...s, housekeepingPending: housekeepingPending(e) };
    case 'RepositoryPushed':
      return e.data.defaultBranch ? { ...s, settings: { ...s.settings, defaultBranch: e.data.defaultBranch } } : s;
    case 'ProtectedBranchCreated':
    case 'ProtectedBranchUpdated':
    case 'ProtectedBranchRemoved':
      return { ...s, protectedBranches: evolveRules(s.protectedBranches, e) };
    case 'ProtectedTagCreated':
    case 'ProtectedTagRemoved':
      return { ...s, protectedTags: evolveTagRules(s.protectedTags, e) };
    default:
      return assertNever(e);
  }
}

export const projectDecider = { initial, evolve };

/** The settings with a check, in the order a 400 lists their fields. */
const CHECKED = SETTINGS.filter((s) => s.check).sort(
  (a, b) => rank(a.wire) - rank(b.wire) || SETTINGS.indexOf(a) - SETTINGS.indexOf(b),
);
function rank(wire: string): number {
  const i = (CHECKED_IN_ORDER as readonly string[]).indexOf(wire);
  return i < 0 ? CHECKED_IN_ORDER.length : i;
}

/** GitLab's Project validations, for the fields given. `namespaceVisibility` bounds a group project's visibility. */
export function validateSettings(
  p: Partial<ProjectSettings>,
  namespaceVisibility: Visibility | undefined,
  errors = new FieldErrors(),
): FieldErrors {
  for (const s of CHECKED) {
    const v = settingValue(s, p);
    const message = v === undefined || v === null ? undefined : s.check!(v);
    if (message) errors.add(s.wire, message);
  }
  if (p.visibility !== undefined && namespaceVisibility && moreOpenThan(p.visibility, namespaceVisibility))
    errors.add('visibility_level', `${p.visibility} is not allowed in a ${namespaceVisibility} group.`);
  return errors;
}

export function create(
  s: Project,
  input: {
    projectId: number;
    namespaceId: number;
    settings: ProjectSettings;
    creatorId: number;
    runnersToken: string;
    namespaceVisibility?: Visibility;
    personalOwnerId?: number;
  },
  now: Date,
): ProjectEvent[] {
  if (s.exists) throw new Error(`project ${input.projectId} exists already`);
  validateSettings(input.settings, input.namespaceVisibility).throwIfAny();
  const at = now.toISOString();
  const events: ProjectEvent[] = [
    {
      type: 'ProjectCreated',
      data: {
        projectId: input.projectId,
        namespaceId: input.namespaceId,
        ...normalizedSettings(input.settings),
        creatorId: input.creatorId,
        runnersToken: input.runnersToken,
        at,
      },
    },
  ];
  if (input.personalOwnerId !== undefined) events.push(personalOwnerAdded(input.projectId, input.personalOwnerId, at));
  return events;
}

export function update(
  s: Project,
  changes: Partial<ProjectSettings>,
  namespaceVisibility: Visibility | undefined,
  now: Date,
): ProjectEvent[] {
  const p = existing(s);
  validateSettings(changes, namespaceVisibility).throwIfAny();
  const real: Record<string, unknown> = {};
  const features: Record<string, unknown> = {};
  // Each setting given that differs from its value now; the switches under `features`, as stored.
  for (const setting of SETTINGS) {
    const given = settingValue(setting, changes);
    if (given === undefined) continue;
    const value = normalized(setting, given);
    if (JSON.stringify(settingValue(setting, p.settings)) !== JSON.stringify(value))
      (setting.feature ? features : real)[setting.key] = value;
  }
  if (Object.keys(features).length) real.features = features;
  return Object.keys(real).length
    ? [{ type: 'ProjectUpdated', data: { projectId: p.projectId, changes: real as Changes, at: now.toISOString() } }]
    : [];
}

type Changes = Extract<ProjectEvent, { type: 'ProjectUpdated' }>['data']['changes'];

/** A new avatar (its stored file name) for an existing project: recorded even when the name is the same, the bytes differ. */
export function changeAvatar(s: Project, avatar: string | null, now: Date): ProjectEvent[] {
  const p = existing(s);
  return [{ type: 'ProjectAvatarChanged', data: { projectId: p.projectId, avatar, at: now.toISOString() } }];
}

/** Archiving twice is no error: GitLab answers with the unchanged project. */
export function archive(s: Project, now: Date): ProjectEvent[] {
  const p = existing(s);
  return p.archived ? [] : [{ type: 'ProjectArchived', data: { projectId: p.projectId, at: now.toISOString() } }];
}

export function unarchive(s: Project, now: Date): ProjectEvent[] {
  const p = existing(s);
  return p.archived ? [{ type: 'ProjectUnarchived', data: { projectId: p.projectId, at: now.toISOString() } }] : [];
}

/**
 * Moves the project into another namespace. GitLab 10.x's group route refuses a group less open than
 * the project; `PUT /projects/:id/transfer` (11.x+) lowers the project's visibility to the group's
 * instead (`update_namespace_and_visibility`): `lowerVisibility`. Into a user's namespace, that user
 * becomes the project's member as on create (`personalOwnerId`), unless they are one already.
 */
export function transfer(
  s: Project,
  namespaceId: number,
  namespaceVisibility: Visibility | undefined,
  now: Date,
  options: { lowerVisibility?: boolean; personalOwnerId?: number } = {},
): ProjectEvent[] {
  const p = existing(s);
  if (p.namespaceId === namespaceId) return [];
  const at = now.toISOString();
  const tooOpen = namespaceVisibility !== undefined && moreOpenThan(p.settings.visibility, namespaceVisibility);
  const errors = new FieldErrors();
  if (tooOpen && !options.lowerVisibility)
    errors.add('visibility_level', `${p.settings.visibility} is not allowed in a ${namespaceVisibility} group.`);
  errors.throwIfAny();
  const events: ProjectEvent[] = [
    { type: 'ProjectTransferred', data: { projectId: p.projectId, fromNamespaceId: p.namespaceId, namespaceId, at } },
  ];
  if (tooOpen)
    events.push({
      type: 'ProjectUpdated',
      data: { projectId: p.projectId, changes: { visibility: namespaceVisibility }, at },
    });
  if (options.personalOwnerId !== undefined && !p.members[options.personalOwnerId])
    events.push(personalOwnerAdded(p.projectId, options.personalOwnerId, at));
  return events;
}

export function remove(s: Project, now: Date): ProjectEvent[] {
  const p = existing(s);
  return [
    { type: 'ProjectDeleted', data: { projectId: p.projectId, namespaceId: p.namespaceId, at: now.toISOString() } },
  ];
}

export function setCustomAttribute(s: Project, key: string, value: string, now: Date): ProjectEvent[] {
  const p = existing(s);
  checkCustomAttribute(key, value);
  if (holdsCustomAttribute(p.customAttributes, key, value)) return [];
  return [{ type: 'ProjectCustomAttributeSet', data: { projectId: p.projectId, key, value, at: now.toISOString() } }];
}

export function removeCustomAttribute(s: Project, key: string, now: Date): ProjectEvent[] {
  const p = existing(s);
  if (!Object.hasOwn(p.customAttributes, key)) throw new NotFound();
  return [{ type: 'ProjectCustomAttributeRemoved', data: { projectId: p.projectId, key, at: now.toISOString() } }];
}
