import { ACCESS } from '@app/groups';
import type { Actor } from '@app/platform';
import type { ProjectRow } from '../projects/project.queries';
import { serializeProjectSimple, type SerializeCtx } from '../projects/project.serializer';

/**
 * GitLab's ProjectImportStatus entity (`GET /projects/:id/import`, 10.6+), in its newest superset:
 * 10.8's ProjectIdentity fields and `import_status`, 13.x's `correlation_id`, `failed_relations` (always
 * an array) and an `import_error` always present, 14.x's `import_type` and `stats`. A fork's status is
 * its copy job's (scheduled, started, finished, failed), which Terraform and glab poll until finished;
 * every other project is `none`. The error is the job's, shown to those who administer the project as
 * GitLab's `read_import_error` does, null to the others. Lode keeps no correlation id of the job.
 */
export function serializeProjectImportStatus(p: ProjectRow, ctx: SerializeCtx & { actor?: Actor }) {
  const simple = serializeProjectSimple(p, ctx);
  const administers = ctx.actor?.isAdmin === true || p.access >= ACCESS.maintainer;
  return {
    id: simple.id,
    description: simple.description,
    name: simple.name,
    name_with_namespace: simple.name_with_namespace,
    path: simple.path,
    path_with_namespace: simple.path_with_namespace,
    created_at: simple.created_at,
    import_status: p.import_status,
    import_type: null,
    correlation_id: null,
    failed_relations: [],
    import_error: administers ? p.import_error : null,
    stats: null,
  };
}
