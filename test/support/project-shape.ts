import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { shapeDifferences } from '../contract/shape';

/** Which of the Project entity's optional keys an answer must carry (every one is checked both ways). */
export interface ProjectVariant {
  /** A project in a personal namespace: `owner`. */
  owner: boolean;
  /** The caller administers the project and the endpoint shows it: `runners_token` and `import_error`. */
  adminFields: boolean;
  /** Issues enabled: `open_issues_count`. Defaults to true (GitLab's default). */
  issues?: boolean;
  statistics?: boolean;
  forked?: boolean;
}

type Schema = 'project' | 'project-in-group';

const optionalTypes = (schema: Schema): Record<string, string> =>
  (
    JSON.parse(readFileSync(join(process.cwd(), 'test', 'contract', 'schemas', `${schema}.json`), 'utf8')) as {
      optional: Record<string, string>;
    }
  ).optional;

const typeOf = (v: unknown) =>
  v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : typeof v;
const keys = (v: unknown) => Object.keys((v ?? {}) as object).sort();

/**
 * The body is GitLab's Project entity (`project`: ProjectWithAccess, `project-in-group`: without
 * permissions) with exactly the optional keys the variant calls for, and the nested objects
 * (`namespace`, `_links`, `owner`, `permissions`, `statistics`, `shared_with_groups` items) have their keys.
 */
export function projectShapeDifferences(body: unknown, schema: Schema, v: ProjectVariant): string[] {
  if (typeOf(body) !== 'object') return [`expected an object, got ${typeOf(body)}`];
  const obj = body as Record<string, unknown>;
  const optional = optionalTypes(schema);
  const wanted: Record<string, boolean> = {
    owner: v.owner,
    import_error: v.adminFields,
    runners_token: v.adminFields,
    open_issues_count: v.issues ?? true,
    statistics: v.statistics ?? false,
    forked_from_project: v.forked ?? false,
  };
  const out: string[] = [];
  const rest = { ...obj };
  for (const [k, want] of Object.entries(wanted)) {
    if (want && !(k in obj)) out.push(`missing optional ${k}`);
    if (!want && k in obj) out.push(`unexpected optional ${k}`);
    if (want && k in obj && !optional[k].split('|').includes(typeOf(obj[k])))
      out.push(`${k} is ${typeOf(obj[k])}, expected ${optional[k]}`);
    delete rest[k];
  }
  out.push(...shapeDifferences(rest, schema));
  const expectKeys = (name: string, value: unknown, expected: string[]) => {
    if (JSON.stringify(keys(value)) !== JSON.stringify([...expected].sort()))
      out.push(`${name} keys ${keys(value).join(',')}, expected ${[...expected].sort().join(',')}`);
  };
  expectKeys('namespace', obj.namespace, ['id', 'name', 'path', 'kind', 'full_path', 'parent_id']);
  const links = ['self', 'repo_branches', 'labels', 'events', 'members'];
  if (obj.issues_enabled) links.push('issues');
  if (obj.merge_requests_enabled) links.push('merge_requests');
  expectKeys('_links', obj._links, links);
  if (v.owner) expectKeys('owner', obj.owner, ['id', 'name', 'created_at']);
  if (v.statistics)
    expectKeys('statistics', obj.statistics, [
      'commit_count',
      'storage_size',
      'repository_size',
      'lfs_objects_size',
      'job_artifacts_size',
    ]);
  for (const g of (obj.shared_with_groups ?? []) as unknown[])
    expectKeys('shared_with_groups[]', g, ['group_id', 'group_name', 'group_access_level']);
  if (schema === 'project') {
    expectKeys('permissions', obj.permissions, ['project_access', 'group_access']);
    for (const kind of ['project_access', 'group_access']) {
      const level = (obj.permissions as Record<string, unknown> | undefined)?.[kind];
      if (level !== null) expectKeys(`permissions.${kind}`, level, ['access_level', 'notification_level']);
    }
  }
  return out;
}

export function expectProject(body: unknown, schema: Schema, v: ProjectVariant): void {
  const diff = projectShapeDifferences(body, schema, v);
  if (diff.length)
    throw new Error(
      `response does not match ${schema} ${JSON.stringify(v)}: ${diff.join('; ')}\n${JSON.stringify(body, null, 2)}`,
    );
}
