import {
  assertNever,
  Conflict,
  FieldErrors,
  Invalid,
  NotFound,
  NotModified,
  checkCustomAttribute,
  holdsCustomAttribute,
} from '@app/platform';
import { ACCESS, moreOpenThan, PROJECT_ACCESS_LEVELS, type Visibility } from '@app/groups';
import { evolveRules, type ProtectedBranchEvent, type ProtectedBranchRule } from './protected-branch';
import { evolveReleases, type ReleaseEvent } from './release';
import type { RepositoryPushedData, RepositoryStatistics } from '../pushes/repository-push';
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
 * A project. Stream `project-<id>`. What accrues with use lives on streams of its own, so a project
 * command folds the same few events on a project's first day and after years of use: stars
 * (`star-<project>-<user>`), and pushes (`push-<id>`; only the push that named the default branch is
 * on the project's stream, see repository-push.ts).
 */

export { FEATURE_DEFAULTS, FEATURES, pathFromName, type Feature, type ProjectSettings } from './project-settings';

export type ProjectEvent =
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
  | {
      type: 'ProjectMemberAdded';
      data: { projectId: number; userId: number; accessLevel: number; expiresAt: string | null; at: string };
    }
  | {
      type: 'ProjectMemberUpdated';
      data: { projectId: number; userId: number; accessLevel: number; expiresAt: string | null; at: string };
    }
  | { type: 'ProjectMemberRemoved'; data: { projectId: number; userId: number; at: string } }
  | {
      type: 'ProjectSharedWithGroup';
      data: {
        projectId: number;
        linkId: number;
        groupId: number;
        groupAccess: number;
        expiresAt: string | null;
        at: string;
      };
    }
  | { type: 'ProjectUnsharedWithGroup'; data: { projectId: number; groupId: number; at: string } }
  | { type: 'ProjectCustomAttributeSet'; data: { projectId: number; key: string; value: string; at: string } }
  | { type: 'ProjectCustomAttributeRemoved'; data: { projectId: number; key: string; at: string } }
  // A new project made as a fork: created at once, its repository copied by the `fork-repository` job.
  | {
      type: 'ProjectForked';
      data: ProjectSettings & {
        projectId: number;
        namespaceId: number;
        creatorId: number;
        runnersToken: string;
        forkedFromId: number;
        at: string;
      };
    }
  | {
      type: 'ProjectImportStatusChanged';
      data: {
        projectId: number;
        status: ImportStatus;
        error: string | null;
        at: string;
        statistics?: RepositoryStatistics;
      };
    }
  // Administrators relate two existing projects (`POST /projects/:id/fork/:forked_from_id`) or undo it.
  | { type: 'ProjectForkRelationCreated'; data: { projectId: number; forkedFromId: number; at: string } }
  | { type: 'ProjectForkRelationRemoved'; data: { projectId: number; forkedFromId: number; at: string } }
  | { type: 'ProjectHousekeepingRequested'; data: { projectId: number; at: string } }
  | { type: 'ProjectHousekeepingFinished'; data: { projectId: number; at: string; statistics?: RepositoryStatistics } }
  | { type: 'RepositoryPushed'; data: RepositoryPushedData }
  // Protected branches (see domain/protected-branch.ts): a rule per exact name or wildcard.
  | ProtectedBranchEvent
  // Release notes of tags (see domain/release.ts).
  | ReleaseEvent;

/** `none` for ordinary projects; a fork goes scheduled → started → finished (or failed). */
export type ImportStatus = 'none' | 'scheduled' | 'started' | 'finished' | 'failed';

export type Project =
  | { exists: false }
  | {
      exists: true;
      projectId: number;
      namespaceId: number;
      archived: boolean;
      settings: ProjectSettings;
      members: Record<number, number>;
      sharedWith: Record<number, number>;
      customAttributes: Record<string, string>;
      forkedFromId: number | null;
      importStatus: ImportStatus;
      housekeepingPending: boolean;
      /** In creation order, as GitLab lists them. */
      protectedBranches: ProtectedBranchRule[];
      /** The tags that have release notes. */
      releases: string[];
    };

export const initial = (): Project => ({ exists: false });

export function evolve(s: Project, e: ProjectEvent): Project {
  if (e.type === 'ProjectCreated' || e.type === 'ProjectForked') {
    const d = e.data;
    const forkedFromId = e.type === 'ProjectForked' ? e.data.forkedFromId : null;
    const settings = settingsFrom(d);
    return {
      exists: true,
      projectId: d.projectId,
      namespaceId: d.namespaceId,
      archived: false,
      settings,
      members: {},
      sharedWith: {},
      customAttributes: {},
      forkedFromId,
      importStatus: forkedFromId === null ? 'none' : 'scheduled',
      housekeepingPending: false,
      protectedBranches: [],
      releases: [],
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
    case 'ProjectMemberAdded':
    case 'ProjectMemberUpdated':
      return { ...s, members: { ...s.members, [e.data.userId]: e.data.accessLevel } };
    case 'ProjectMemberRemoved': {
      const members = { ...s.members };
      delete members[e.data.userId];
      return { ...s, members };
    }
    case 'ProjectSharedWithGroup':
      return { ...s, sharedWith: { ...s.sharedWith, [e.data.groupId]: e.data.groupAccess } };
    case 'ProjectUnsharedWithGroup': {
      const sharedWith = { ...s.sharedWith };
      delete sharedWith[e.data.groupId];
      return { ...s, sharedWith };
    }
    case 'ProjectCustomAttributeSet':
      return { ...s, customAttributes: { ...s.customAttributes, [e.data.key]: e.data.value } };
    case 'ProjectCustomAttributeRemoved': {
      const customAttributes = { ...s.customAttributes };
      delete customAttributes[e.data.key];
      return { ...s, customAttributes };
    }
    case 'ProjectImportStatusChanged':
      return { ...s, importStatus: e.data.status };
    case 'ProjectForkRelationCreated':
      return { ...s, forkedFromId: e.data.forkedFromId };
    case 'ProjectForkRelationRemoved':
      return { ...s, forkedFromId: null };
    case 'ProjectHousekeepingRequested':
      return { ...s, housekeepingPending: true };
    case 'ProjectHousekeepingFinished':
      return { ...s, housekeepingPending: false };
    case 'RepositoryPushed':
      return e.data.defaultBranch ? { ...s, settings: { ...s.settings, defaultBranch: e.data.defaultBranch } } : s;
    case 'ProtectedBranchCreated':
    case 'ProtectedBranchUpdated':
    case 'ProtectedBranchRemoved':
      return { ...s, protectedBranches: evolveRules(s.protectedBranches, e) };
    case 'ProjectReleaseCreated':
    case 'ProjectReleaseUpdated':
    case 'ProjectReleaseRemoved':
      return { ...s, releases: evolveReleases(s.releases, e) };
    default:
      return assertNever(e);
  }
}

export const projectDecider = { initial, evolve };

type Existing = Extract<Project, { exists: true }>;
const existing = (s: Project): Existing => {
  if (!s.exists) throw new NotFound('Project');
  return s;
};

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
  // GitLab 10.x adds the owner of a personal namespace as a master (40) of the project.
  if (input.personalOwnerId !== undefined)
    events.push({
      type: 'ProjectMemberAdded',
      data: {
        projectId: input.projectId,
        userId: input.personalOwnerId,
        accessLevel: ACCESS.maintainer,
        expiresAt: null,
        at,
      },
    });
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

export function transfer(
  s: Project,
  namespaceId: number,
  namespaceVisibility: Visibility | undefined,
  now: Date,
): ProjectEvent[] {
  const p = existing(s);
  if (p.namespaceId === namespaceId) return [];
  const errors = new FieldErrors();
  if (namespaceVisibility && moreOpenThan(p.settings.visibility, namespaceVisibility))
    errors.add('visibility_level', `${p.settings.visibility} is not allowed in a ${namespaceVisibility} group.`);
  errors.throwIfAny();
  return [
    {
      type: 'ProjectTransferred',
      data: { projectId: p.projectId, fromNamespaceId: p.namespaceId, namespaceId, at: now.toISOString() },
    },
  ];
}

export function remove(s: Project, now: Date): ProjectEvent[] {
  const p = existing(s);
  return [
    { type: 'ProjectDeleted', data: { projectId: p.projectId, namespaceId: p.namespaceId, at: now.toISOString() } },
  ];
}

/** GitLab's ProjectMember validation: guest to maintainer; owner (50) is a group level only. */
const checkMemberLevel = (accessLevel: number) => {
  if (!PROJECT_ACCESS_LEVELS.includes(accessLevel))
    throw new Invalid({ access_level: ['is not included in the list'] });
};

export function addMember(
  s: Project,
  userId: number,
  accessLevel: number,
  expiresAt: string | null,
  now: Date,
): ProjectEvent[] {
  const p = existing(s);
  if (Object.hasOwn(p.members, userId)) throw new Conflict('Member already exists');
  checkMemberLevel(accessLevel);
  return [
    {
      type: 'ProjectMemberAdded',
      data: { projectId: p.projectId, userId, accessLevel, expiresAt, at: now.toISOString() },
    },
  ];
}

export function updateMember(
  s: Project,
  userId: number,
  accessLevel: number,
  expiresAt: string | null,
  now: Date,
): ProjectEvent[] {
  const p = existing(s);
  if (!Object.hasOwn(p.members, userId)) throw new NotFound();
  checkMemberLevel(accessLevel);
  return [
    {
      type: 'ProjectMemberUpdated',
      data: { projectId: p.projectId, userId, accessLevel, expiresAt, at: now.toISOString() },
    },
  ];
}

export function removeMember(s: Project, userId: number, now: Date): ProjectEvent[] {
  const p = existing(s);
  if (!Object.hasOwn(p.members, userId)) throw new NotFound();
  return [{ type: 'ProjectMemberRemoved', data: { projectId: p.projectId, userId, at: now.toISOString() } }];
}

/**
 * GitLab answers model errors of a share with 409 and their first full message: sharing twice, or
 * with the group the project lives in (or one of its ancestors).
 */
export function share(
  s: Project,
  link: { linkId: number; groupId: number; groupAccess: number; expiresAt: string | null },
  namespaceAncestry: number[],
  now: Date,
): ProjectEvent[] {
  const p = existing(s);
  if (Object.hasOwn(p.sharedWith, link.groupId)) throw new Conflict('Group already shared with this group');
  if (namespaceAncestry.includes(link.groupId))
    throw new Conflict('Project cannot be shared with the group it is in or one of its ancestors.');
  return [{ type: 'ProjectSharedWithGroup', data: { projectId: p.projectId, ...link, at: now.toISOString() } }];
}

export function unshare(s: Project, groupId: number, now: Date): ProjectEvent[] {
  const p = existing(s);
  if (!Object.hasOwn(p.sharedWith, groupId)) throw new NotFound('Group Link');
  return [{ type: 'ProjectUnsharedWithGroup', data: { projectId: p.projectId, groupId, at: now.toISOString() } }];
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

/* Stars: one tiny stream per (project, user). */

export type StarEvent =
  | { type: 'ProjectStarred'; data: { projectId: number; userId: number; at: string } }
  | { type: 'ProjectUnstarred'; data: { projectId: number; userId: number; at: string } };

export const starDecider = {
  initial: (): { starred: boolean } => ({ starred: false }),
  evolve: (_: { starred: boolean }, e: StarEvent) => ({ starred: e.type === 'ProjectStarred' }),
};

/** GitLab answers 304 with no body when starring a starred project (or unstarring an unstarred one). */
export function star(s: { starred: boolean }, projectId: number, userId: number, on: boolean, now: Date): StarEvent[] {
  if (s.starred === on) throw new NotModified();
  return [{ type: on ? 'ProjectStarred' : 'ProjectUnstarred', data: { projectId, userId, at: now.toISOString() } }];
}

/* Forks and housekeeping. */

/** The new project of `POST /projects/:id/fork`: it exists at once, with its repository still to copy. */
export function fork(
  s: Project,
  input: {
    projectId: number;
    namespaceId: number;
    settings: ProjectSettings;
    creatorId: number;
    runnersToken: string;
    forkedFromId: number;
    personalOwnerId?: number;
  },
  now: Date,
): ProjectEvent[] {
  if (s.exists) throw new Error(`project ${input.projectId} exists already`);
  const at = now.toISOString();
  const { personalOwnerId, settings, ...ids } = input;
  const events: ProjectEvent[] = [
    { type: 'ProjectForked', data: { ...ids, ...settings, tagList: [...settings.tagList], at } },
  ];
  if (personalOwnerId !== undefined)
    events.push({
      type: 'ProjectMemberAdded',
      data: {
        projectId: input.projectId,
        userId: personalOwnerId,
        accessLevel: ACCESS.maintainer,
        expiresAt: null,
        at,
      },
    });
  return events;
}

const IMPORT_MOVES: Record<ImportStatus, ImportStatus[]> = {
  none: [],
  scheduled: ['started', 'failed'],
  started: ['finished', 'failed', 'started'],
  finished: [],
  failed: ['started'],
};

/**
 * The fork job reports its progress. A repeated report (a job run twice) changes nothing; a move the
 * state machine does not allow is ignored too, so a late report never reopens a finished import.
 */
export function recordImportStatus(
  s: Project,
  status: ImportStatus,
  error: string | null,
  now: Date,
  statistics?: RepositoryStatistics,
): ProjectEvent[] {
  if (!s.exists) return []; // deleted while its job ran
  if (s.importStatus === status || !IMPORT_MOVES[s.importStatus].includes(status)) return [];
  return [
    {
      type: 'ProjectImportStatusChanged',
      data: {
        projectId: s.projectId,
        status,
        error: status === 'failed' ? error : null,
        at: now.toISOString(),
        ...(statistics ? { statistics } : {}),
      },
    },
  ];
}

/** GitLab: relating an already forked project is 409 `Project already forked`. */
export function createForkRelation(s: Project, forkedFromId: number, now: Date): ProjectEvent[] {
  const p = existing(s);
  if (p.forkedFromId !== null) throw new Conflict('Project already forked');
  if (forkedFromId === p.projectId) throw new Conflict('Project cannot be forked from itself');
  return [
    { type: 'ProjectForkRelationCreated', data: { projectId: p.projectId, forkedFromId, at: now.toISOString() } },
  ];
}

/** GitLab answers 304 when the project is not a fork. */
export function removeForkRelation(s: Project, now: Date): ProjectEvent[] {
  const p = existing(s);
  if (p.forkedFromId === null) throw new NotModified();
  return [
    {
      type: 'ProjectForkRelationRemoved',
      data: { projectId: p.projectId, forkedFromId: p.forkedFromId, at: now.toISOString() },
    },
  ];
}

/** One housekeeping at a time per project: a second request while one is pending is 409. */
export function requestHousekeeping(s: Project, now: Date): ProjectEvent[] {
  const p = existing(s);
  if (p.housekeepingPending) throw new Conflict('Housekeeping is already pending for this project');
  return [{ type: 'ProjectHousekeepingRequested', data: { projectId: p.projectId, at: now.toISOString() } }];
}

export function finishHousekeeping(s: Project, now: Date, statistics?: RepositoryStatistics): ProjectEvent[] {
  if (!s.exists || !s.housekeepingPending) return [];
  return [
    {
      type: 'ProjectHousekeepingFinished',
      data: { projectId: s.projectId, at: now.toISOString(), ...(statistics ? { statistics } : {}) },
    },
  ];
}
