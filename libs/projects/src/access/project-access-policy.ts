import { ACCESS, type Visibility } from '@app/groups';
import { Forbidden, type Actor } from '@app/platform';

/** What the policy reads of a project: a `ProjectRow` is one, `access` being the caller's effective level (0 for none). */
export interface ProjectAccessFacts {
  visibility: Visibility;
  archived: boolean;
  access: number;
}

/** What the policy reads of the caller; undefined for an anonymous one. */
export type ProjectCaller = Pick<Actor, 'isAdmin' | 'external'> | undefined;

/** Why a push is refused: too low a level, or an archived project (GitLab words the two apart). */
export type PushRefusal = 'access' | 'archived';

/** Signed in and not external: GitLab's `internal_access` on an internal project. */
const internalAccess = (project: ProjectAccessFacts, actor: ProjectCaller) =>
  project.visibility === 'internal' && actor !== undefined && !actor.external;

/** GitLab's `read_project`: the project is visible. The same rule as the SQL of `projectVisibleSql`. */
function mayRead(project: ProjectAccessFacts, actor: ProjectCaller): boolean {
  return (
    actor?.isAdmin === true ||
    project.visibility === 'public' ||
    internalAccess(project, actor) ||
    project.access >= ACCESS.guest
  );
}

/**
 * GitLab's `download_code` (clone, fetch, tree, blobs, archives, compare, contributors, branches):
 * everybody on a public project; on an internal one every signed-in user who is not external
 * (`internal_access`), others need reporter, as on a private one; administrators always. A guest
 * sees a private project but not its code.
 */
function mayDownloadCode(project: ProjectAccessFacts, actor: ProjectCaller): boolean {
  return (
    actor?.isAdmin === true ||
    project.visibility === 'public' ||
    internalAccess(project, actor) ||
    project.access >= ACCESS.reporter
  );
}

/** A deploy key's link to one project (`can_push` is per project since GitLab 10.3.4); undefined when not enabled there. */
export type DeployKeyLink = { canPush: boolean } | undefined;

/** Why a deploy key may not push: it may not even see the project, it is read-only there, or the project is archived. */
export type DeployKeyPushRefusal = 'not-found' | 'read-only' | 'archived';

/** GitLab's wording (`lib/gitlab/git_access.rb`) for each refusal, which a transport may show as it is. */
export const DEPLOY_KEY_REFUSALS: Record<DeployKeyPushRefusal, string> = {
  'not-found': 'The project you were looking for could not be found.',
  'read-only': 'This deploy key does not have write access to this project.',
  archived: "You can't push code to an archived project.",
};

/**
 * GitLab's git_access for a deploy key: it reads (clones, fetches) the projects it is enabled on,
 * and public ones as a guest would (`Guest.can?(:read_project)`); `download_code` asks nothing more
 * of a deploy key. An internal project is not the key's: a key is no signed-in user.
 */
function deployKeyMayDownloadCode(project: Pick<ProjectAccessFacts, 'visibility'>, link: DeployKeyLink): boolean {
  return link !== undefined || project.visibility === 'public';
}

/**
 * A deploy key pushes only where it is enabled with `can_push` (`deploy_key.can_push_to?(project)`),
 * and never into an archived project. A project it may not read answers as a missing one.
 */
function deployKeyPushRefusal(
  project: Pick<ProjectAccessFacts, 'visibility' | 'archived'>,
  link: DeployKeyLink,
): DeployKeyPushRefusal | undefined {
  if (!deployKeyMayDownloadCode(project, link)) return 'not-found';
  if (!link?.canPush) return 'read-only';
  return project.archived ? 'archived' : undefined;
}

/** GitLab's `push_code`: developer or more (administrators pass), and never into an archived project. */
function pushCodeRefusal(project: ProjectAccessFacts, actor: ProjectCaller): PushRefusal | undefined {
  if (actor?.isAdmin !== true && project.access < ACCESS.developer) return 'access';
  return project.archived ? 'archived' : undefined;
}

/**
 * Who may do what with a project: the one policy every transport asks (the repository API, git over
 * HTTP, forks). Pure functions of the project's row and the caller; each transport words a refusal
 * its own way. Which projects a caller may see at all is also SQL (`access/project-access.ts`),
 * so that lists paginate right; `mayRead` states the same rule for one row.
 */
export const ProjectAccessPolicy = {
  mayRead,
  mayDownloadCode,
  /** A fork copies the code, so it needs `download_code` (GitLab's `fork_project`), and a signed-in caller. */
  mayFork: (project: ProjectAccessFacts, actor: ProjectCaller): boolean =>
    actor !== undefined && mayDownloadCode(project, actor),
  pushCodeRefusal,
  mayPushCode: (project: ProjectAccessFacts, actor: ProjectCaller): boolean =>
    pushCodeRefusal(project, actor) === undefined,
  /** The same questions for a deploy key, which is no user: its link to the project decides. */
  deployKeyMayDownloadCode,
  deployKeyPushRefusal,
  /** `download_code` or 403 `{"message":"403 Forbidden"}`, as the repository API answers. */
  requireDownloadCode(project: ProjectAccessFacts, actor: ProjectCaller): void {
    if (!mayDownloadCode(project, actor)) throw new Forbidden();
  },
} as const;
