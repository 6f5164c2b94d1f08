import { ACCESS } from '@app/groups';
import type { Actor } from '@app/platform';
import { avatarPath } from '@app/users';
import { SETTINGS } from './project-settings';
import type { SharedGroup } from '../sharing/project-sharing.queries';
import type { ProjectRow } from './project.queries';

export interface SerializeCtx {
  externalUrl: string;
  /** `LodeConfig.sshCloneBase`: what `ssh_url_to_repo` puts before the full path. */
  sshCloneBase: string;
  actor?: Actor;
  /** The project's shares, where its row was read without them (lean columns). */
  sharedWith?: SharedGroup[];
  statistics?: boolean;
  /** GitLab's plain Project entity (embedded in groups, and the answer of writes) has no `permissions`. */
  withoutPermissions?: boolean;
  /**
   * false: never `runners_token` nor `import_error`. GitLab shows them only where the endpoint passes
   * `user_can_admin_project` (single project, create, update, fork), never in lists, archive or star answers.
   */
  adminFields?: boolean;
  /** The project this one is a fork of, when the caller may see it (GitLab's `forked_from_project`). */
  forkedFrom?: ProjectRow;
}

/**
 * The settings shown after `printing_merge_requests_link_enabled` (`shown: 'appended'`), in the table's
 * order; the others (`basic`, `full`) are written below at the place GitLab's entity gives them.
 */
const APPENDED = SETTINGS.filter((s) => s.shown === 'appended');

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);
const fullPath = (p: ProjectRow) => `${p.ns_full_path}/${p.path}`;
/** GitLab's notification level "global" (3), the default of a membership. */
const access = (level: number | null) => (level ? { access_level: Number(level), notification_level: 3 } : null);

/** GitLab 10.x: the absolute URL of the avatar (`/uploads/-/system/project/avatar/<id>/<file>`), null without one. */
export function projectAvatarUrl(p: Pick<ProjectRow, 'id' | 'avatar'>, externalUrl: string): string | null {
  return p.avatar ? externalUrl + avatarPath('project', p.id, p.avatar) : null;
}

/** `simple=true` and anonymous lists: GitLab's BasicProjectDetails. */
export function serializeProjectSimple(p: ProjectRow, ctx: SerializeCtx) {
  const web = `${ctx.externalUrl}/${fullPath(p)}`;
  return {
    id: p.id,
    description: p.description,
    name: p.name,
    name_with_namespace: `${p.ns_kind === 'user' ? (p.owner_name ?? p.ns_name) : p.ns_full_name} / ${p.name}`,
    path: p.path,
    path_with_namespace: fullPath(p),
    created_at: iso(p.created_at),
    default_branch: p.default_branch,
    tag_list: p.tag_list,
    // GitLab 14.0+: the same list under its new name.
    topics: p.tag_list,
    ssh_url_to_repo: `${ctx.sshCloneBase}${fullPath(p)}.git`,
    http_url_to_repo: `${web}.git`,
    web_url: web,
    avatar_url: projectAvatarUrl(p, ctx.externalUrl),
    star_count: p.star_count,
    forks_count: p.forks_count,
    last_activity_at: iso(p.last_activity_at),
  };
}

/** Whether the caller administers the project: GitLab shows `runners_token` and `import_error` only to them. */
const administers = (p: ProjectRow, ctx: SerializeCtx) =>
  ctx.adminFields !== false && (ctx.actor?.isAdmin === true || p.access >= ACCESS.maintainer);

/** GitLab's Project entity with `permissions` (ProjectWithAccess). */
export function serializeProject(p: ProjectRow, ctx: SerializeCtx) {
  const simple = serializeProjectSimple(p, ctx);
  const api = `${ctx.externalUrl}/api/v4/projects/${p.id}`;
  const links: Record<string, string> = { self: api };
  if (p.issues_enabled) links.issues = `${api}/issues`;
  if (p.merge_requests_enabled) links.merge_requests = `${api}/merge_requests`;
  Object.assign(links, {
    repo_branches: `${api}/repository/branches`,
    labels: `${api}/labels`,
    events: `${api}/events`,
    members: `${api}/members`,
  });
  // Object.assign, not `{ ...simple, more }`: see serializeUser (V8's slow path for a spread
  // followed by many properties cost 30 µs a project, 3 ms a 100-project page).
  const out: Record<string, unknown> = Object.assign(simple, {
    _links: links,
    archived: p.archived,
    visibility: p.visibility,
    resolve_outdated_diff_discussions: p.resolve_outdated_diff_discussions,
    container_registry_enabled: p.container_registry_enabled,
    issues_enabled: p.issues_enabled,
    merge_requests_enabled: p.merge_requests_enabled,
    wiki_enabled: p.wiki_enabled,
    jobs_enabled: p.jobs_enabled,
    snippets_enabled: p.snippets_enabled,
    shared_runners_enabled: p.shared_runners_enabled,
    lfs_enabled: p.lfs_enabled,
    creator_id: p.creator_id,
    namespace: {
      id: p.namespace_id,
      name: p.ns_name,
      path: p.ns_path,
      kind: p.ns_kind,
      full_path: p.ns_full_path,
      parent_id: p.ns_parent_id,
    },
    import_status: p.import_status,
  });
  // GitLab 10.x showed the source to anyone who saw the fork; Lode only when the caller may see the source too.
  if (ctx.forkedFrom) out.forked_from_project = serializeProjectSimple(ctx.forkedFrom, ctx);
  if (administers(p, ctx)) out.import_error = p.import_error;
  if (p.issues_enabled) out.open_issues_count = 0; // no issues in Lode yet
  Object.assign(out, {
    public_jobs: p.public_jobs,
    ci_config_path: p.ci_config_path,
    shared_with_groups: (ctx.sharedWith ?? p.shared_with ?? []).map((g) => ({
      group_id: g.group_id,
      group_name: g.group_name,
      group_access_level: g.group_access_level,
    })),
    only_allow_merge_if_pipeline_succeeds: p.only_allow_merge_if_pipeline_succeeds,
    request_access_enabled: p.request_access_enabled,
    only_allow_merge_if_all_discussions_are_resolved: p.only_allow_merge_if_all_discussions_are_resolved,
    // GitLab's API documentation: the response name has `requests`; the request field is
    // `printing_merge_request_link_enabled`.
    printing_merge_requests_link_enabled: p.printing_merge_request_link_enabled,
  });
  for (const s of APPENDED) out[s.shownAs ?? s.wire] = p[s.wire];
  if (p.ns_kind === 'user' && p.owner_id !== null)
    out.owner = { id: p.owner_id, name: p.owner_name, created_at: iso(p.owner_created_at) };
  if (administers(p, ctx)) out.runners_token = p.runners_token;
  if (ctx.statistics)
    out.statistics = {
      commit_count: p.commit_count,
      storage_size: Number(p.repository_size),
      repository_size: Number(p.repository_size),
      lfs_objects_size: 0,
      job_artifacts_size: 0,
    };
  if (!ctx.withoutPermissions)
    out.permissions = { project_access: access(p.project_access), group_access: access(p.group_access) };
  return out;
}

export type ProjectJson = ReturnType<typeof serializeProject>;
