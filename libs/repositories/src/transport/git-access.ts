import { Clock, NotFound, type Actor } from '@app/platform';
import {
  DEPLOY_KEY_REFUSALS,
  deployKeyLink,
  ProjectAccessPolicy,
  ProjectChangeNotices,
  ProjectQueries,
  type DeployKeyGrant,
  type ProjectRow,
} from '@app/projects';
import { RecordUserActivity, UserQueries } from '@app/users';
import { Injectable, Logger } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { NO_REPOSITORY, repositoryReady } from '../writes/repository-ready';

/** GitLab's words (`Gitlab::GitAccess`) for a refused git request, which the git client shows its user. */
export const GIT_REFUSALS = {
  notFound: 'The project you were looking for could not be found.',
  download: 'You are not allowed to download code from this project.',
  push: 'You are not allowed to push code to this project.',
  // 10.x has no archived check of its own: an archived project takes `push_code` away (ProjectPolicy),
  // so a user's push meets `ChangeAccess#push_checks`' words (later GitLab: "You can't push code to an archived project.").
  archived: 'You are not allowed to push code to this project.',
  deployKeyReadOnly: DEPLOY_KEY_REFUSALS['read-only'],
  // `check_repository_existence!`, after the access checks: a fork whose copy has not landed.
  noRepository: NO_REPOSITORY,
} as const;

/** A git request refused for `message` (one of GIT_REFUSALS); each transport words the status its own way. */
export class GitRefused extends Error {
  constructor(readonly reason: keyof typeof GIT_REFUSALS) {
    super(GIT_REFUSALS[reason]);
  }
}

/**
 * What git over HTTP and git over SSH share once they know their caller: finding the project by the
 * path the client named, the one access policy, and the activity a clone or push counts as. A push
 * itself goes the push's one path (`PushRecorder.session`, projects). The transports differ only in
 * how they authenticate and how they word a refusal (an HTTP status, or a line on SSH's stderr and an
 * exit status).
 */
@Injectable()
export class GitAccess {
  private readonly logger = new Logger('GitAccess');

  constructor(
    private readonly projects: ProjectQueries,
    private readonly clock: Clock,
    private readonly commands: CommandBus,
    private readonly users: UserQueries,
    private readonly notices: ProjectChangeNotices,
  ) {}

  /**
   * The project at `fullPath` (the path a client names, with or without `.git`, current after a
   * rename or transfer) as `actor` sees it; `GitRefused('notFound')` when it sees none.
   */
  async project(fullPath: string, actor: Actor | undefined): Promise<ProjectRow> {
    return this.projects.getVisible(fullPath, actor).catch((err: unknown) => {
      if (err instanceof NotFound) throw new GitRefused('notFound');
      throw err;
    });
  }

  /** GitLab's download_code and push_code as `ProjectAccessPolicy` decides them; `GitRefused` when refused. */
  authorize(project: ProjectRow, actor: Actor | undefined, push: boolean): void {
    if (!push) {
      if (!ProjectAccessPolicy.mayDownloadCode(project, actor)) throw new GitRefused('download');
      return;
    }
    const refusal = ProjectAccessPolicy.pushCodeRefusal(project, actor);
    if (refusal === 'access') throw new GitRefused('push');
    if (refusal === 'archived') throw new GitRefused('archived');
  }

  /**
   * The project at `fullPath` for a deploy key: one it is enabled on, or a public one (GitLab's
   * git_access for deploy keys); `GitRefused('notFound')` for any other, as for an invisible project.
   */
  async projectForDeployKey(fullPath: string, key: DeployKeyGrant): Promise<ProjectRow> {
    const project = await this.projects.findByPathForSystem(fullPath);
    if (!project || !ProjectAccessPolicy.deployKeyMayDownloadCode(project, deployKeyLink(key, project.id)))
      throw new GitRefused('notFound');
    return project;
  }

  /**
   * A deploy key pushes only where it is enabled with `can_push`, never into an archived project,
   * and as the user who added it (GitLab records the push as theirs): the actor its pushes are
   * recorded under. A key whose user was deleted for good clones but no longer pushes.
   */
  async authorizeDeployKey(project: ProjectRow, key: DeployKeyGrant, push: boolean): Promise<Actor | undefined> {
    if (!push) return undefined;
    const refusal = ProjectAccessPolicy.deployKeyPushRefusal(project, deployKeyLink(key, project.id));
    if (refusal === 'not-found') throw new GitRefused('notFound');
    if (refusal === 'read-only') throw new GitRefused('deployKeyReadOnly');
    if (refusal === 'archived') throw new GitRefused('archived');
    const owner = key.userId === null ? null : await this.users.find(key.userId);
    if (!owner) throw new GitRefused('deployKeyReadOnly');
    return {
      id: owner.id,
      username: owner.username,
      isAdmin: false,
      external: owner.external,
      scopes: [],
      impersonation: false,
    };
  }

  /**
   * GitLab's `check_repository_existence!`, the last check before git runs: a fork's repository still
   * being copied is waited for a moment, then refused (`GitRefused('noRepository')`).
   */
  async requireRepository(project: ProjectRow): Promise<void> {
    if (!(await repositoryReady(this.projects, this.notices, project))) throw new GitRefused('noRepository');
  }

  /** GitLab counts a clone, fetch or push as the user's activity of the day: at most once a day, never in the way. */
  recordActivity(userId: number, lastActivityOn: string | null): void {
    const today = this.clock.now().toISOString().slice(0, 10);
    if (lastActivityOn !== null && lastActivityOn >= today) return;
    this.commands.execute(new RecordUserActivity(userId)).catch((err: unknown) => {
      this.logger.warn(`could not record activity of user ${userId}: ${String(err)}`);
    });
  }
}
