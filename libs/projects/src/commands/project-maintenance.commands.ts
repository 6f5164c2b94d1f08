import { ACCESS } from '@app/groups';
import { Clock, EventStore, LodeConfig, NotFound, type Actor } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import {
  createForkRelation,
  finishHousekeeping,
  projectDecider,
  recordImportStatus,
  recordPush,
  removeForkRelation,
  requestHousekeeping,
  type ImportStatus,
} from '../domain/project';
import {
  changesProject,
  PUSH_ID_SEQUENCE,
  pushDecider,
  pushStream,
  type RepositoryPushedData,
  type RepositoryStatistics,
} from '../domain/repository-push';
import { ProjectQueries } from '../queries/project.queries';
import { PendingPushes } from '../pushes/pending-pushes';

/** Administrators relate an existing project to its source (`forkedFromId`), or undo the relation (undefined; owners too). */
export class ChangeForkRelation extends Command<number> {
  constructor(
    readonly project: string | number,
    readonly forkedFromId: number | undefined,
    readonly actor: Actor,
  ) {
    super();
  }
}

@CommandHandler(ChangeForkRelation)
export class ChangeForkRelationHandler implements ICommandHandler<ChangeForkRelation> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly projects: ProjectQueries,
  ) {}

  async execute({ project, forkedFromId, actor }: ChangeForkRelation): Promise<number> {
    const row = await this.projects.require(
      project,
      actor,
      forkedFromId === undefined ? ACCESS.owner : Number.POSITIVE_INFINITY,
    );
    if (forkedFromId !== undefined) {
      const [source] = await this.projects.existing([forkedFromId]);
      if (!source) throw new NotFound('Source Project');
    }
    const now = this.clock.now();
    await this.store.decide(`project-${row.id}`, projectDecider, (s) =>
      forkedFromId === undefined ? removeForkRelation(s, now) : createForkRelation(s, forkedFromId, now),
    );
    return row.id;
  }
}

/** `POST /projects/:id/housekeeping`: owners and administrators; 409 while one is pending. */
export class RequestHousekeeping extends Command<number> {
  constructor(
    readonly project: string | number,
    readonly actor: Actor,
  ) {
    super();
  }
}

@CommandHandler(RequestHousekeeping)
export class RequestHousekeepingHandler implements ICommandHandler<RequestHousekeeping> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly projects: ProjectQueries,
  ) {}

  async execute({ project, actor }: RequestHousekeeping): Promise<number> {
    const row = await this.projects.require(project, actor, ACCESS.owner);
    await this.store.decide(`project-${row.id}`, projectDecider, (s) => requestHousekeeping(s, this.clock.now()));
    return row.id;
  }
}

/** What the git jobs report back, as events like every other change. */
export class RecordGitJobOutcome extends Command<void> {
  constructor(
    readonly projectId: number,
    readonly outcome:
      | { kind: 'import'; status: ImportStatus; error?: string; statistics?: RepositoryStatistics }
      | { kind: 'housekeeping-finished'; statistics?: RepositoryStatistics },
  ) {
    super();
  }
}

@CommandHandler(RecordGitJobOutcome)
export class RecordGitJobOutcomeHandler implements ICommandHandler<RecordGitJobOutcome> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async execute({ projectId, outcome }: RecordGitJobOutcome): Promise<void> {
    const now = this.clock.now();
    await this.store.decide(
      `project-${projectId}`,
      projectDecider,
      (s) =>
        outcome.kind === 'import'
          ? recordImportStatus(s, outcome.status, outcome.error ?? null, now, outcome.statistics)
          : finishHousekeeping(s, now, outcome.statistics),
      { origin: 'worker' },
    );
  }
}

/**
 * What a push did, reported by the git transport after receive-pack accepted it: a
 * `RepositoryPushed` event on the push's own stream (on the project's when it names the default
 * branch; hooks, `last_activity_at`, the default branch,
 * statistics follow from it), and in the same append the default branch's protection when the push
 * created it (LODE_DEFAULT_BRANCH_PROTECTION). `pendingPushId` names the push as written down at its
 * pre-receive (`PendingPushes`): it is struck off in the same transaction, and a push struck off
 * already (by the reconciler, or by this very command retried) is not recorded twice. Answers false
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
    const recorded = await this.store.transact(
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
    return recorded;
  }
}
