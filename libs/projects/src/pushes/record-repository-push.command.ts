import { Clock, EventStore, LodeConfig, NotFound, type Actor } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { projectDecider, type Project, type ProjectEvent } from '../projects/project';
import { defaultBranchProtected, type DefaultBranchProtection } from '../protected-refs/protected-branch';
import { PendingPushes } from './pending-pushes';
import { RecordedRefs } from './recorded-refs';
import { stillOwn } from './ref-chain';
import {
  changesProject,
  isZeroSha,
  PUSH_ID_SEQUENCE,
  pushDecider,
  pushStream,
  type RefUpdate,
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
  return recordPushes(s, [push], now, defaultBranchProtection);
}

/**
 * `recordPush` for several records made together, in the order the refs moved: the moves of other
 * pushes (or the range no push explains) that an update's `before` shows were never recorded, then
 * the push's own. The default branch is named by the last record that moved something, and protected
 * when any of them created it.
 */
export function recordPushes(
  s: Project,
  pushes: Omit<RepositoryPushedData, 'projectId' | 'at'>[],
  now: Date,
  defaultBranchProtection: DefaultBranchProtection,
): ProjectEvent[] {
  if (!s.exists) throw new NotFound('Project');
  const moved = pushes.filter((p) => p.updates.length);
  if (!moved.length) return [];
  const at = now.toISOString();
  const named =
    s.settings.defaultBranch === null ? (pushes.find((p) => p.defaultBranch !== null)?.defaultBranch ?? null) : null;
  const events: ProjectEvent[] = moved.map((push, i) => ({
    type: 'RepositoryPushed',
    data: { ...push, defaultBranch: i === moved.length - 1 ? named : null, projectId: s.projectId, at },
  }));
  const target = s.settings.defaultBranch ?? named;
  const createsDefault =
    target !== null &&
    moved.some((p) =>
      p.updates.some((u) => u.ref === `refs/heads/${target}` && isZeroSha(u.before) && !isZeroSha(u.after)),
    );
  if (createsDefault)
    events.push(...defaultBranchProtected(s.projectId, s.protectedBranches, target, defaultBranchProtection, at));
  return events;
}

/** The recorded chain moved between the plan of a record and its transaction: plan again. */
export class ChainMoved extends Error {
  constructor() {
    super('the recorded chain of a ref moved meanwhile');
  }
}

/** Moves of a ref recorded ahead of a push's own updates (see `planChain`). */
export interface ChainGapRecord {
  /** Set when the move is another written-down push's: taken out of it in the same transaction. */
  pendingPushId?: string;
  userId: number;
  update: RefUpdate;
}

/**
 * What a push did, reported by the push recorder after git accepted it: a `RepositoryPushed` event on
 * the push's own stream (on the project's when it names the default branch; hooks,
 * `last_activity_at`, the default branch and statistics follow from it), and in the same transaction
 * the default branch's protection when the push created it (LODE_DEFAULT_BRANCH_PROTECTION).
 * `pendingPushId` names the push as written down at its pre-receive (`PendingPushes`): it is struck
 * off in the same transaction, and a push struck off already (by the reconciler, or by this very
 * command retried) is not recorded twice. `chain` carries the moves recorded ahead of the push's own
 * (`planChain`), each its own `RepositoryPushed`, and the chain heads they were planned from: if
 * another record moved a head meanwhile, `ChainMoved` is thrown and nothing is written. Answers false
 * when nothing was recorded (no ref moved, or recorded already).
 */
export class RecordRepositoryPush extends Command<boolean> {
  constructor(
    readonly projectId: number,
    readonly push: Omit<RepositoryPushedData, 'projectId' | 'at'>,
    readonly actor: Pick<Actor, 'id' | 'tokenId' | 'impersonatedBy'>,
    readonly pendingPushId?: string,
    /** Set when the reconciler records a push its own process could not: `reconciler`. */
    readonly origin = 'git',
    readonly chain?: { gaps: ChainGapRecord[]; heads: Map<string, string | undefined> },
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
    private readonly recorded: RecordedRefs,
    private readonly config: LodeConfig,
  ) {}

  async execute({ projectId, push, actor, pendingPushId, origin, chain }: RecordRepositoryPush): Promise<boolean> {
    // Taken before the transaction: the sequence is read on another connection (one session in embedded mode).
    const pushIds: number[] = [];
    for (let i = 0; i <= (chain?.gaps.length ?? 0); i++) pushIds.push(await this.store.nextId(PUSH_ID_SEQUENCE));
    return this.store.transact(
      async (uow) => {
        // Folding the project's stream also locks it, before any written-down push is touched: two pushes
        // to one project are recorded one after the other (only one of two first pushes names the default
        // branch, chain heads hold still), and two records never wait on each other's pending rows.
        const project = await uow.load(`project-${projectId}`, projectDecider);
        let own = push;
        if (pendingPushId !== undefined) {
          const remaining = await this.pending.strike(uow.db, pendingPushId);
          if (remaining === undefined) return false;
          // A later push's record may have taken some of this push's updates as steps of its chain.
          own = { ...push, updates: stillOwn(push.updates, remaining) };
        }
        const gaps = chain?.gaps ?? [];
        if (chain) {
          const heads = await this.recorded.heads(projectId, [...chain.heads.keys()], uow.db);
          for (const [ref, head] of chain.heads) if (heads.get(ref) !== head) throw new ChainMoved();
          for (const g of gaps)
            if (g.pendingPushId !== undefined && !(await this.pending.take(uow.db, g.pendingPushId, g.update)))
              throw new ChainMoved();
        }
        const records = [
          ...gaps.map((g) => ({ ...push, userId: g.userId, updates: [g.update], defaultBranch: null })),
          own,
        ];
        const events = recordPushes(project, records, this.clock.now(), this.config.defaultBranchProtection);
        const onProject: ProjectEvent[] = [];
        let next = 0;
        for (const e of events) {
          // A push's own stream, under an id just taken from its sequence: nothing to fold.
          if (e.type === 'RepositoryPushed' && !changesProject(e.data))
            await uow.decideNew(pushStream(pushIds[next++]), pushDecider, () => [e]);
          else onProject.push(e);
        }
        if (onProject.length) await uow.decide(`project-${projectId}`, projectDecider, () => onProject);
        return events.length > 0;
      },
      { actorId: actor.id, tokenId: actor.tokenId, impersonatedBy: actor.impersonatedBy, origin },
    );
  }
}
