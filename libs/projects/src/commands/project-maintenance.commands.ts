import { ACCESS } from '@app/groups';
import { Clock, EventStore, NotFound, type Actor } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import {
  createForkRelation,
  finishHousekeeping,
  projectDecider,
  recordImportStatus,
  removeForkRelation,
  requestHousekeeping,
  type ImportStatus,
} from '../domain/project';
import type { RepositoryStatistics } from '../pushes/repository-push';
import { ProjectQueries } from '../queries/project.queries';

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
