import type { EntityManager } from 'typeorm';
import type { Decider, DomainEvent, EventMetadata, Recorded } from './recorded';

/** One command's transaction: decide on one or more streams, all committed together or not at all. */
export interface UnitOfWork {
  readonly db: EntityManager;
  /** Loads and folds the stream, appends what `decision` returns, projects it and writes its outbox rows. */
  decide<S, E extends DomainEvent>(
    streamId: string,
    decider: Decider<S, E>,
    decision: (state: S) => E[] | Promise<E[]>,
  ): Promise<Recorded<E>[]>;
  /**
   * `decide` on a stream whose id was just taken from a sequence (`EventStore.nextId`), which no one
   * else can have written: nothing to fold, and the stream's lock taken by the append's own statement,
   * so two statements fewer than `decide`. Should the stream hold events after all (an id reused by
   * hand), the append's version clash re-runs the transaction, and the re-run folds as `decide` does.
   */
  decideNew<S, E extends DomainEvent>(
    streamId: string,
    decider: Decider<S, E>,
    decision: (state: S) => E[] | Promise<E[]>,
  ): Promise<Recorded<E>[]>;
  /** Folds a stream without appending (for a decision that needs a second aggregate's state). */
  load<S, E extends DomainEvent>(streamId: string, decider: Decider<S, E>): Promise<S>;
}

/** The write side's port: PostgreSQL's `events` table behind it (docs/architecture.md, The event store). */
export abstract class EventStore {
  /** Runs `work` in one transaction; a clash on a stream version re-runs it a few times, then 409. */
  abstract transact<T>(work: (uow: UnitOfWork) => Promise<T>, metadata?: EventMetadata): Promise<T>;

  decide<S, E extends DomainEvent>(
    streamId: string,
    decider: Decider<S, E>,
    decision: (state: S) => E[] | Promise<E[]>,
    metadata?: EventMetadata,
  ): Promise<Recorded<E>[]> {
    return this.transact((uow) => uow.decide(streamId, decider, decision), metadata);
  }

  /** `UnitOfWork.decideNew` in a transaction of its own. */
  decideNew<S, E extends DomainEvent>(
    streamId: string,
    decider: Decider<S, E>,
    decision: (state: S) => E[] | Promise<E[]>,
    metadata?: EventMetadata,
  ): Promise<Recorded<E>[]> {
    return this.transact((uow) => uow.decideNew(streamId, decider, decision), metadata);
  }

  /**
   * Folds a stream as committed now, for a reader that decides nothing (a job describing what
   * happened): one statement on any connection, no transaction, no stream lock to wait for.
   */
  abstract read<S, E extends DomainEvent>(streamId: string, decider: Decider<S, E>): Promise<S>;

  /** A new integer id from the aggregate type's sequence, taken before the first event. */
  abstract nextId(sequence: string): Promise<number>;

  /** Reads events in global order (for rebuilds and catch-up), `batch` at a time after `after`. */
  abstract readAll(after: string, batch: number): Promise<Recorded[]>;

  /** Ids of the streams holding an event of `type` whose `data[field]` is the integer `value`. */
  abstract streamIdsWith(type: string, field: string, value: number): Promise<string[]>;

  /** The distinct integers found in `data[field]` of the events of these types. */
  abstract dataValues(types: readonly string[], field: string): Promise<number[]>;
}

/** A unique index of a read model refused the change; handlers translate it into GitLab's answer. */
export class UniqueViolation extends Error {
  constructor(
    readonly constraint: string,
    readonly detail?: string,
  ) {
    super(`unique violation on ${constraint}`);
  }
}
