import { Clock, EventStore, LodeConfig, NotFound, type Actor } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { projectDecider, type Project, type ProjectEvent } from '../projects/project';
import { defaultBranchProtected, type DefaultBranchProtection } from '../protected-refs/protected-branch';
import { PendingPushes } from './pending-pushes';
import {
  changesProject,
  PUSH_ID_SEQUENCE,
  pushDecider,
  pushStream,
  ZERO_SHA,
  type RepositoryPushedData,
} from './repository-push';

/**
 * Records what a push did. The refs have moved already (git accepted the push), so this never
 * refuses an existing project; it only decides whether the push names the default branch (when
 * the project still has none) and whether it protects it: GitLab's `GitPushService#process_default_branch`
 * protects the default branch when a push creates it (the first push into an empty repository) and no
 * rule covers it yet, with the levels `defaultBranchProtection` (LODE_DEFAULT_BRANCH_PROTECTION) says.
 * Both events are appended together, so a push is never recorded without its protection.
 */
export function recordPush(
  s: Project,
  push: Omit<RepositoryPushedData, 'projectId' | 'at'>,
  now: Date,
  defaultBranchProtection: DefaultBranchProtection,
): ProjectEvent[] {
  if (!s.exists) throw new NotFound('Project');
  if (!push.updates.length) return [];
  const at = now.toISOString();
  const defaultBranch = s.settings.defaultBranch === null ? push.defaultBranch : null;
  const events: ProjectEvent[] = [
    { type: 'RepositoryPushed', data: { ...push, defaultBranch, projectId: s.projectId, at } },
  ];
  const target = s.settings.defaultBranch ?? defaultBranch;
  const createsDefault =
    target !== null &&
    push.updates.some((u) => u.ref === `refs/heads/${target}` && u.before === ZERO_SHA && u.after !== ZERO_SHA);
  if (createsDefault)
    events.push(...defaultBranchProtected(s.projectId, s.protectedBranches, target, defaultBranchProtection, at));
  return events;
}

/**
 * What a push did, reported by the push recorder after git accepted it: a `RepositoryPushed` event on
 * the push's own stream (on the project's when it names the default branch; hooks,
 * `last_activity_at`, the default branch and statistics follow from it), and in the same transaction
 * the default branch's protection when the push created it (LODE_DEFAULT_BRANCH_PROTECTION).
 * `pendingPushId` names the push as written down at its pre-receive (`PendingPushes`): it is struck
 * off in the same transaction, and a push struck off already (by the reconciler, or by this very
 * command retried) is not recorded twice. Answers false when nothing was recorded (no ref moved, or
 * recorded already).
 */
export class RecordRepositoryPush extends Command<boolean> {
  constructor(
    readonly projectId: number,
    readonly push: Omit<RepositoryPushedData, 'projectId' | 'at'>,
    readonly actor: Pick<Actor, 'id' | 'tokenId' | 'impersonatedBy'>,
    readonly pendingPushId?: string,
    /** Set when the reconciler records a push its own process could not: `reconciler`. */
    readonly origin = 'git',
  ) {
    super();
  }
}

@CommandHandler(RecordRepositoryPush)
export class RecordRepositoryPushHandler implements ICommandHandler<RecordRepositoryPush> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly pending: PendingPushes,
    private readonly config: LodeConfig,
  ) {}

  async execute({ projectId, push, actor, pendingPushId, origin }: RecordRepositoryPush): Promise<boolean> {
    const pushId = await this.store.nextId(PUSH_ID_SEQUENCE);
    return this.store.transact(
      async (uow) => {
        if (pendingPushId !== undefined && !(await this.pending.strike(uow.db, pendingPushId))) return false;
        // Folding the project's stream also locks it: two pushes to one project are recorded one after
        // the other, so only one of two first pushes names the default branch.
        const project = await uow.load(`project-${projectId}`, projectDecider);
        const events = recordPush(project, push, this.clock.now(), this.config.defaultBranchProtection);
        const [pushed, ...rest] = events;
        const own = pushed?.type === 'RepositoryPushed' && !changesProject(pushed.data) ? [pushed] : [];
        if (own.length) await uow.decide(pushStream(pushId), pushDecider, () => own);
        const onProject = own.length ? rest : events;
        if (onProject.length) await uow.decide(`project-${projectId}`, projectDecider, () => onProject);
        return events.length > 0;
      },
      { actorId: actor.id, tokenId: actor.tokenId, impersonatedBy: actor.impersonatedBy, origin },
    );
  }
}
