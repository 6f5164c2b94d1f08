import { FieldErrors, Invalid, UniqueViolation } from '@app/platform';
import { ProjectQueries } from '../queries/project.queries';

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
  const taken = await projects.takenNameOrPath(namespaceId, fields, exceptProjectId);
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
