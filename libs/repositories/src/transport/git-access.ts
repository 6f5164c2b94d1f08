import { GitRepositories, projectRepo, type ProposedRefUpdate, type RefCommand, type RefUpdateCheck } from '@app/git';
import { Clock, LodeConfig, NotFound, type Actor } from '@app/platform';
import {
  DEPLOY_KEY_REFUSALS,
  deployKeyLink,
  isBranchRef,
  PendingPushes,
  ProjectAccessPolicy,
  ProjectQueries,
  ProtectedBranchPolicy,
  ProtectedBranchQueries,
  RecordRepositoryPush,
  isZeroSha,
  type BranchCaller,
  type DeployKeyGrant,
  type ProjectRow,
} from '@app/projects';
import { RecordUserActivity, UserQueries } from '@app/users';
import { Injectable, Logger } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { setTimeout as sleep } from 'node:timers/promises';
import { PushInspector } from '../push/push-inspector';

/**
 * Attempts to record an accepted push when PostgreSQL stumbles (the refs have moved already): waits
 * of 0.5, 1, 2 and 4 s, about 8 s in all. Past them the push stays written down for the reconciler.
 */
const RECORD_ATTEMPTS = 5;

/** One push as a transport runs it: the gate git asks before any ref moves, and the record after. */
export interface PushSession {
  /** git's pre-receive: writes the push down (PostgreSQL must take it, or the push is refused). */
  check: RefUpdateCheck;
  /**
   * After git exited, whatever its status: records what moved before the client hears the end.
   * `moved: false` from a writer that knows its compare-and-swap lost: nothing of its own moved, even
   * where the ref holds the value it proposed (another writer's identical change), so the written-down
   * push is forgotten rather than recorded twice.
   */
  finish: (moved?: boolean) => Promise<void>;
}

/** GitLab's words (`Gitlab::GitAccess`) for a refused git request, which the git client shows its user. */
export const GIT_REFUSALS = {
  notFound: 'The project you were looking for could not be found.',
  download: 'You are not allowed to download code from this project.',
  push: 'You are not allowed to push code to this project.',
  archived: 'You are not allowed to push code to an archived project.',
  deployKeyReadOnly: DEPLOY_KEY_REFUSALS['read-only'],
} as const;

/** A git request refused for `message` (one of GIT_REFUSALS); each transport words the status its own way. */
export class GitRefused extends Error {
  constructor(readonly reason: keyof typeof GIT_REFUSALS) {
    super(GIT_REFUSALS[reason]);
  }
}

/**
 * What git over HTTP and git over SSH share once they know their caller: finding the project by the
 * path the client named, the one access policy, the activity a clone or push counts as, and the
 * `RepositoryPushed` record of an accepted push. The transports differ only in how they authenticate
 * and how they word a refusal (an HTTP status, or a line on SSH's stderr and an exit status).
 */
@Injectable()
export class GitAccess {
  private readonly logger = new Logger('GitAccess');

  constructor(
    private readonly projects: ProjectQueries,
    private readonly git: GitRepositories,
    private readonly clock: Clock,
    private readonly commands: CommandBus,
    private readonly users: UserQueries,
    private readonly pending: PendingPushes,
    private readonly protectedBranches: ProtectedBranchQueries,
    private readonly config: LodeConfig,
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

  /** GitLab counts a clone, fetch or push as the user's activity of the day: at most once a day, never in the way. */
  recordActivity(userId: number, lastActivityOn: string | null): void {
    const today = this.clock.now().toISOString().slice(0, 10);
    if (lastActivityOn !== null && lastActivityOn >= today) return;
    this.commands.execute(new RecordUserActivity(userId)).catch((err: unknown) => {
      this.logger.warn(`could not record activity of user ${userId}: ${String(err)}`);
    });
  }

  /**
   * The gate and the record of one push by `pusher` (a user, or the user behind a deploy key), who
   * meets the protected-branch rules as `branchCaller`. At git's pre-receive, before any ref moves:
   * every branch update is held to the project's protected branches (the first refusal refuses the
   * whole push, in GitLab's words); then the push is written down in PostgreSQL (record first), so a
   * push whose process dies before its `RepositoryPushed` is still recorded, by the reconciler, as
   * its pusher. If PostgreSQL cannot answer either, git refuses the push and nothing moves.
   */
  pushSession(
    project: ProjectRow,
    pusher: Actor,
    branchCaller: BranchCaller,
    /** `viaApi`: the repository API's writes (GitLab's `protocol: 'web'`), recorded with `origin: 'api'`. */
    options: { viaApi?: boolean } = {},
  ): PushSession {
    let pendingId: string | undefined;
    let proposed: RefCommand[] = [];
    const origin = options.viaApi ? 'api' : 'git';
    return {
      check: async (updates) => {
        const refusal = await this.branchRefusal(project, updates, branchCaller, options.viaApi === true);
        if (refusal) return refusal;
        proposed = updates.map(({ ref, before, after }) => ({ ref, before, after }));
        pendingId = await this.pending.begin(project.id, proposed, pusher);
        return undefined;
      },
      finish: async (moved?: boolean) => {
        if (pendingId === undefined) return;
        if (moved === false) return this.pending.forget(pendingId);
        if (this.config.faultPauseBeforePushRecordMs > 0) await sleep(this.config.faultPauseBeforePushRecordMs);
        await this.recordPush(project, pusher, proposed, pendingId, origin);
      },
    };
  }

  /** The first protected-branch refusal among the branch updates, or undefined (tags have no rules in 10.x). */
  private async branchRefusal(
    project: ProjectRow,
    updates: ProposedRefUpdate[],
    caller: BranchCaller,
    viaApi: boolean,
  ): Promise<string | undefined> {
    const branches = updates.filter((u) => isBranchRef(u.ref));
    if (!branches.length) return undefined;
    const [rules, refs] = await Promise.all([
      this.protectedBranches.forProject(project.id),
      this.git.refs(projectRepo(project.id)),
    ]);
    const repository = {
      defaultBranch: project.default_branch,
      empty: ![...refs.keys()].some(isBranchRef),
      defaultBranchProtection: this.config.defaultBranchProtection,
    };
    for (const u of branches) {
      const change = {
        branch: u.ref.slice('refs/heads/'.length),
        creation: isZeroSha(u.before),
        deletion: isZeroSha(u.after),
        forced: u.forced,
        viaApi,
      };
      const refusal = ProtectedBranchPolicy.refusal(rules, change, caller, repository);
      if (refusal) return refusal;
    }
    return undefined;
  }

  /**
   * Records what a push changed as a `RepositoryPushed` event (the updates git accepted: those whose
   * ref now holds the proposed value), striking the written-down push off in the same transaction.
   * If PostgreSQL stays away through every attempt, the push stays written down and the reconciler
   * records it once PostgreSQL is back.
   */
  async recordPush(
    project: Pick<ProjectRow, 'id' | 'default_branch'>,
    pusher: Pick<Actor, 'id' | 'username' | 'tokenId' | 'impersonatedBy'>,
    commands: RefCommand[],
    pendingPushId: string,
    origin = 'git',
  ): Promise<void> {
    const repo = projectRepo(project.id);
    for (let attempt = 1; ; attempt++) {
      try {
        const push = await new PushInspector(this.git, repo).inspect(commands, project.default_branch);
        await this.commands.execute(
          new RecordRepositoryPush(project.id, { userId: pusher.id, ...push }, pusher, pendingPushId, origin),
        );
        return;
      } catch (err) {
        if (attempt >= RECORD_ATTEMPTS) {
          this.logger.error(
            `push to project ${project.id} by ${pusher.username} could not be recorded yet (${String(err)}); the reconciler will record it`,
          );
          return;
        }
        await sleep(250 * 2 ** attempt);
      }
    }
  }
}
