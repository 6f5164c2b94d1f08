import { isTagRef, serializeProjectSimple, type ProjectRow, type RefUpdate } from '@app/projects';

/** The pusher as the payload shows them. */
export interface Pusher {
  id: number;
  name: string;
  username: string;
  email: string;
}

const VISIBILITY_LEVEL = { private: 0, internal: 10, public: 20 } as const;

/** `X-Gitlab-Event` for a ref: tags have their own hook. */
export const hookEventName = (ref: string) => (isTagRef(ref) ? 'Tag Push Hook' : 'Push Hook');

/**
 * GitLab's push hook payload (`Gitlab::DataBuilder::Push.build`, 10.x) for one ref update:
 * `project` is `Project#hook_attrs(backward: false)`, `repository` the deprecated subset with the
 * backward-compatible names, commits as `Commit#hook_attrs`.
 */
/** `urls`: LODE_EXTERNAL_URL and the SSH clone URL's base (`LodeConfig.sshCloneBase`). */
export function pushPayload(
  update: RefUpdate,
  project: ProjectRow,
  pusher: Pusher,
  urls: { externalUrl: string; sshCloneBase: string },
) {
  const basics = serializeProjectSimple(project, urls);
  const kind = isTagRef(update.ref) ? 'tag_push' : 'push';
  const visibilityLevel = VISIBILITY_LEVEL[project.visibility];
  return {
    object_kind: kind,
    event_name: kind,
    before: update.before,
    after: update.after,
    ref: update.ref,
    checkout_sha: update.checkoutSha,
    message: update.message,
    user_id: pusher.id,
    user_name: pusher.name,
    user_username: pusher.username,
    user_email: pusher.email,
    user_avatar: null,
    project_id: project.id,
    project: {
      id: project.id,
      name: project.name,
      description: project.description,
      web_url: basics.web_url,
      avatar_url: basics.avatar_url,
      git_ssh_url: basics.ssh_url_to_repo,
      git_http_url: basics.http_url_to_repo,
      namespace: project.ns_kind === 'user' ? (project.owner_name ?? project.ns_name) : project.ns_name,
      visibility_level: visibilityLevel,
      path_with_namespace: basics.path_with_namespace,
      default_branch: project.default_branch,
      ci_config_path: project.ci_config_path,
      homepage: basics.web_url,
      url: basics.ssh_url_to_repo,
      ssh_url: basics.ssh_url_to_repo,
      http_url: basics.http_url_to_repo,
    },
    commits: update.commits.map((c) => ({
      id: c.id,
      message: c.message,
      timestamp: c.timestamp,
      url: `${basics.web_url}/commit/${c.id}`,
      author: { name: c.author.name, email: c.author.email },
      added: c.added,
      modified: c.modified,
      removed: c.removed,
    })),
    total_commits_count: update.totalCommitsCount,
    repository: {
      name: project.name,
      url: basics.ssh_url_to_repo,
      description: project.description,
      homepage: basics.web_url,
      git_http_url: basics.http_url_to_repo,
      git_ssh_url: basics.ssh_url_to_repo,
      visibility_level: visibilityLevel,
    },
  };
}

export type PushPayload = ReturnType<typeof pushPayload>;
