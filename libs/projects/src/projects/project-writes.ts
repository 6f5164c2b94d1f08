import { EventStore, FieldErrors, Forbidden, Invalid, UniqueViolation, type EventMetadata } from '@app/platform';
import { projectDecider, type Project, type ProjectEvent } from './project';
import { ProjectQueries, type ProjectRow } from './project.queries';

/** GitLab's `admin_*` rights that only administrators hold: no member level reaches it. */
export const ADMINISTRATORS_ONLY = Number.POSITIVE_INFINITY;

/**
 * Decides on the project's stream; the indexes catch a name or path another project of the
 * namespace took meanwhile, answered as GitLab's 400 on that field.
 */
export function decideOnProject(
  store: EventStore,
  projectId: number,
  decision: (s: Project) => ProjectEvent[],
  metadata?: EventMetadata,
) {
  return store.decide(`project-${projectId}`, projectDecider, decision, metadata).catch(rethrowTakenNameOrPath);
}

/** GitLab's ProjectMemberPolicy: the owner of a personal project keeps their membership, whoever asks. */
export function refuseToChangePersonalOwner(row: ProjectRow, userId: number): void {
  if (row.ns_kind === 'user' && row.owner_id === userId) throw new Forbidden();
}

/**
 * GitLab validates uniqueness with the other validations, so a name and a path both taken (or a
 * taken name and a malformed path) are reported together. Adds `has already been taken` for each
 * given field another project of the namespace already uses (case-insensitively, as the indexes).
 */
export async function addTakenNameOrPath(
  projects: ProjectQueries,
  errors: FieldErrors,
  namespaceId: number,
  fields: { name?: string; path?: string },
  exceptProjectId?: number,
): Promise<FieldErrors> {
  if (fields.name === undefined && fields.path === undefined) return errors;
  return addTaken(errors, await projects.takenNameOrPath(namespaceId, fields, exceptProjectId));
}

/** The errors of a name or path another project of the namespace has. */
export function addTaken(errors: FieldErrors, taken: { name: boolean; path: boolean }): FieldErrors {
  if (taken.name) errors.add('name', 'has already been taken');
  if (taken.path) errors.add('path', 'has already been taken');
  return errors;
}

/** GitLab: a taken name or path in the namespace is a 400 on the field(s) concerned (the indexes catch races). */
export function rethrowTakenNameOrPath(err: unknown): never {
  if (err instanceof UniqueViolation && err.constraint === 'projects_path_key')
    throw new Invalid({ path: ['has already been taken'] });
  if (err instanceof UniqueViolation && err.constraint === 'projects_name_key')
    throw new Invalid({ name: ['has already been taken'] });
  throw err;
}
