import { Conflict, NotModified } from '@app/platform';
import type { RepositoryStatistics } from '../pushes/repository-push';
import { personalOwnerAdded, type ProjectMemberEvent } from '../members/project-members';
import { existing, type ProjectWith } from '../projects/existing-project';
import type { ProjectSettings } from '../projects/project-settings';
import {
  defaultBranchProtected,
  type DefaultBranchProtection,
  type ProtectedBranchEvent,
  type ProtectedBranchRule,
} from '../protected-refs/protected-branch';

/*
 * Forks: a project made as a fork of another (`ProjectForked`, its repository copied by the
 * `fork-repository` job, which reports its import status), and the relation administrators make or
 * undo between existing projects. Events on the fork's stream, `project-<id>`.
 */

/** `none` for ordinary projects; a fork goes scheduled → started → finished (or failed). */
export type ImportStatus = 'none' | 'scheduled' | 'started' | 'finished' | 'failed';

export type ProjectForkEvent =
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
  | { type: 'ProjectForkRelationRemoved'; data: { projectId: number; forkedFromId: number; at: string } };

/** The part of a project's state its fork relation keeps. */
export interface ForkState {
  forkedFromId: number | null;
  importStatus: ImportStatus;
}

type WithFork = ProjectWith<ForkState>;

/** A fork's state on creation (ProjectForked itself makes the project: projects/project.ts). */
export const forkState = (forkedFromId: number | null): ForkState => ({
  forkedFromId,
  importStatus: forkedFromId === null ? 'none' : 'scheduled',
});

export function evolveFork(s: ForkState, e: Exclude<ProjectForkEvent, { type: 'ProjectForked' }>): ForkState {
  switch (e.type) {
    case 'ProjectImportStatusChanged':
      return { ...s, importStatus: e.data.status };
    case 'ProjectForkRelationCreated':
      return { ...s, forkedFromId: e.data.forkedFromId };
    case 'ProjectForkRelationRemoved':
      return { ...s, forkedFromId: null };
  }
}

/** The new project of `POST /projects/:id/fork`: it exists at once, with its repository still to copy. */
export function fork(
  s: { exists: boolean },
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
): (ProjectForkEvent | ProjectMemberEvent)[] {
  if (s.exists) throw new Error(`project ${input.projectId} exists already`);
  const at = now.toISOString();
  const { personalOwnerId, settings, ...ids } = input;
  return [
    { type: 'ProjectForked', data: { ...ids, ...settings, tagList: [...settings.tagList], at } },
    ...(personalOwnerId === undefined ? [] : [personalOwnerAdded(input.projectId, personalOwnerId, at)]),
  ];
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
  s: ProjectWith<
    ForkState & { settings: { defaultBranch: string | null }; protectedBranches: readonly ProtectedBranchRule[] }
  >,
  status: ImportStatus,
  error: string | null,
  now: Date,
  statistics?: RepositoryStatistics,
  defaultBranchProtection: DefaultBranchProtection = 0,
): (ProjectForkEvent | ProtectedBranchEvent)[] {
  if (!s.exists) return []; // deleted while its job ran
  if (s.importStatus === status || !IMPORT_MOVES[s.importStatus].includes(status)) return [];
  const at = now.toISOString();
  return [
    {
      type: 'ProjectImportStatusChanged',
      data: {
        projectId: s.projectId,
        status,
        error: status === 'failed' ? error : null,
        at,
        ...(statistics ? { statistics } : {}),
      },
    },
    // GitLab's `after_import` → `after_create_default_branch`: a fork's default branch is protected as
    // a first push's is, so a developer of the fork cannot write to it where the source forbids it.
    ...(status === 'finished'
      ? defaultBranchProtected(s.projectId, s.protectedBranches, s.settings.defaultBranch, defaultBranchProtection, at)
      : []),
  ];
}

/** GitLab: relating an already forked project is 409 `Project already forked`. */
export function createForkRelation(s: WithFork, forkedFromId: number, now: Date): ProjectForkEvent[] {
  const p = existing(s);
  if (p.forkedFromId !== null) throw new Conflict('Project already forked');
  if (forkedFromId === p.projectId) throw new Conflict('Project cannot be forked from itself');
  return [
    { type: 'ProjectForkRelationCreated', data: { projectId: p.projectId, forkedFromId, at: now.toISOString() } },
  ];
}

/** GitLab answers 304 when the project is not a fork. */
export function removeForkRelation(s: WithFork, now: Date): ProjectForkEvent[] {
  const p = existing(s);
  if (p.forkedFromId === null) throw new NotModified();
  return [
    {
      type: 'ProjectForkRelationRemoved',
      data: { projectId: p.projectId, forkedFromId: p.forkedFromId, at: now.toISOString() },
    },
  ];
}
