import { Injectable, Logger } from '@nestjs/common';
import { DataSource, EntityManager, QueryFailedError } from 'typeorm';
import { RequestContexts } from '../context';
import { oneRow, rows, type Sql } from '../database/sql';
import { inTransactionScope } from '../database/transaction-scope';
import { Conflict } from '../errors';
import { Metrics } from '../metrics/metrics';
import { INVALIDATION_CHANNEL, Invalidations } from '../outbox/invalidations';
import { OUTBOX_CHANNEL } from '../outbox/outbox';
import { OutboxRoutes } from '../outbox/outbox-route';
import { ProjectionRegistry } from '../projections/projector';
import { EventStore, UniqueViolation, UnitOfWork } from './event-store';
import {
  toRecorded,
  type Decider,
  type DomainEvent,
  type EventMetadata,
  type EventRow,
  type Recorded,
} from './recorded';

const STREAM_VERSION_CONSTRAINT = 'events_stream_version_key';
/** How often a command is re-run after another transaction appended to its stream first. */
const VERSION_CLASH_RETRIES = 4;

class VersionClash extends Error {}

class PgUnitOfWork implements UnitOfWork {
  outboxWritten = false;
  /** Whether this transaction appended any event (what `lode_event_store_append_duration_seconds` times). */
  appended = false;
  /** Cache keys the appended events made stale: notified at commit, evicted locally right after. */
  readonly stale = new Set<string>();
  private readonly locked = new Set<string>();
  constructor(
    readonly db: EntityManager,
    /** A re-run after a version clash: `decideNew` folds as `decide` does. */
    private readonly rerun: boolean,
    private readonly metadata: EventMetadata,
    private readonly projections: ProjectionRegistry,
    private readonly routes: OutboxRoutes,
    private readonly invalidations: Invalidations,
  ) {}

  async load<S, E extends DomainEvent>(streamId: string, decider: Decider<S, E>): Promise<S> {
    return (await this.fold(streamId, decider)).state;
  }

  async decide<S, E extends DomainEvent>(
    streamId: string,
    decider: Decider<S, E>,
    decision: (state: S) => E[] | Promise<E[]>,
  ): Promise<Recorded<E>[]> {
    const { state, version } = await this.fold(streamId, decider);
    return this.append(streamId, state, version, decision);
  }

  async decideNew<S, E extends DomainEvent>(
    streamId: string,
    decider: Decider<S, E>,
    decision: (state: S) => E[] | Promise<E[]>,
  ): Promise<Recorded<E>[]> {
    if (this.rerun) return this.decide(streamId, decider, decision);
    return this.append(streamId, decider.initial(), 0, decision);
  }

  /** Appends what `decision` makes of `state` after `version`, projects it and writes its outbox rows. */
  private async append<S, E extends DomainEvent>(
    streamId: string,
    state: S,
    version: number,
    decision: (state: S) => E[] | Promise<E[]>,
  ): Promise<Recorded<E>[]> {
    const events = await decision(state);
    if (!events.length) return [];
    // A stream not folded (`decideNew`) is locked by the insert itself: nothing queues behind it for a
    // new id, but a reader that folds it later in another transaction (a failed creation's clean-up
    // asking whether a commit whose answer was lost made the project after all) waits for the outcome.
    const lock = this.locked.has(streamId)
      ? ''
      : 'with stream_lock as (select pg_advisory_xact_lock(hashtextextended($1, 0))) ';
    this.locked.add(streamId);
    // The decision's events in one statement, numbered on from the folded version (in order: their
    // positions follow the ordinality), then projected one by one as one batch.
    const rows = await this.db
      .query<EventRow[]>(
        `${lock}insert into events (stream_id, stream_version, type, data, metadata)
         select $1, $2::int + n::int, type, data, $5::jsonb
           from ${lock ? 'stream_lock, ' : ''}unnest($3::text[], $4::jsonb[]) with ordinality as x(type, data, n)
          order by n
         returning global_position, stream_id, stream_version, type, data, metadata, recorded_at`,
        [
          streamId,
          version,
          events.map((e) => e.type),
          events.map((e) => JSON.stringify(e.data ?? {})),
          JSON.stringify(this.metadata),
        ],
      )
      .catch((err: unknown) => {
        if (constraintOf(err) === STREAM_VERSION_CONSTRAINT) throw new VersionClash();
        throw err;
      });
    const recorded = rows.map((row) => toRecorded<E>(row)).sort((a, b) => a.streamVersion - b.streamVersion);
    this.appended = true;
    const projections = this.projections.appendBatch();
    for (const r of recorded) {
      await projections.apply(r, this.db).catch(rethrowUnique);
      for (const key of this.invalidations.keysFor(r)) this.stale.add(key);
      for (const job of await this.routes.jobsFor(r, this.db)) {
        await this.db.query(
          `insert into outbox (global_position, queue, name, job_id, data, options) values ($1, $2, $3, $4, $5, $6)
           on conflict (job_id) do nothing`,
          [
            r.globalPosition,
            job.queue,
            job.name,
            job.jobId,
            JSON.stringify(job.data),
            JSON.stringify(job.options ?? {}),
          ],
        );
        this.outboxWritten = true;
      }
    }
    await projections.finish(this.db).catch(rethrowUnique);
    return recorded;
  }

  private async fold<S, E extends DomainEvent>(streamId: string, decider: Decider<S, E>) {
    // Commands on one stream queue up here instead of all reading the same version and all but one
    // failing at append; the expected-version check below stays as the safety net.
    if (!this.locked.has(streamId)) {
      await this.db.query(`select pg_advisory_xact_lock(hashtextextended($1, 0))`, [streamId]);
      this.locked.add(streamId);
    }
    return foldStream(this.db, streamId, decider);
  }
}

/** A stream's events folded, and its version (0 for a stream without events). */
async function foldStream<S, E extends DomainEvent>(
  db: Sql,
  streamId: string,
  decider: Decider<S, E>,
): Promise<{ state: S; version: number }> {
  const events = await rows<EventRow>(
    db,
    `select global_position, stream_id, stream_version, type, data, metadata, recorded_at
       from events where stream_id = $1 order by stream_version`,
    [streamId],
  );
  let state = decider.initial();
  for (const row of events) state = decider.evolve(state, toRecorded<E>(row));
  return { state, version: events.length ? events[events.length - 1].stream_version : 0 };
}

@Injectable()
export class PgEventStore extends EventStore {
  private readonly logger = new Logger('EventStore');

  constructor(
    private readonly dataSource: DataSource,
    private readonly projections: ProjectionRegistry,
    private readonly routes: OutboxRoutes,
    private readonly invalidations: Invalidations,
    private readonly metrics: Metrics,
  ) {
    super();
  }

  async transact<T>(work: (uow: UnitOfWork) => Promise<T>, metadata?: EventMetadata): Promise<T> {
    const meta = { ...metadataFromRequest(), ...metadata };
    for (let attempt = 1; ; attempt++) {
      try {
        let stale: string[] = [];
        let appended = false;
        const started = process.hrtime.bigint();
        const result = await this.dataSource.transaction(async (db) => {
          const uow = new PgUnitOfWork(db, attempt > 1, meta, this.projections, this.routes, this.invalidations);
          const result = await inTransactionScope(db, () => work(uow));
          // Delivered at commit: wakes the outbox relay without waiting for its poll.
          if (uow.outboxWritten) await db.query(`select pg_notify($1, '')`, [OUTBOX_CHANNEL]);
          // Delivered at commit to every process's cache (this one's too, which is harmless).
          stale = [...uow.stale];
          appended = uow.appended;
          if (stale.length)
            await db.query(`select pg_notify($1, $2)`, [INVALIDATION_CHANNEL, Invalidations.payload(stale)]);
          return result;
        });
        if (appended) this.metrics.appendDuration.observe(Number(process.hrtime.bigint() - started) / 1e9);
        // Committed: this process forgets the stale entries before the command's caller answers.
        this.invalidations.publish(stale);
        return result;
      } catch (err) {
        if (!(err instanceof VersionClash) && !isTransient(err)) throw err;
        if (attempt > VERSION_CLASH_RETRIES) {
          this.logger.warn(`version clash persisted after ${attempt} attempts (request ${meta.requestId ?? '-'})`);
          throw new Conflict('409 Conflict - the resource was changed concurrently, try again');
        }
      }
    }
  }

  async read<S, E extends DomainEvent>(streamId: string, decider: Decider<S, E>): Promise<S> {
    return (await foldStream(this.dataSource, streamId, decider)).state;
  }

  async nextId(sequence: string): Promise<number> {
    if (!/^[a-z_]+$/.test(sequence)) throw new Error(`bad sequence name ${sequence}`);
    const { id } = await oneRow<{ id: string }>(this.dataSource, `select nextval('${sequence}') as id`);
    return Number(id);
  }

  async readAll(after: string, batch: number): Promise<Recorded[]> {
    const events = await rows<EventRow>(
      this.dataSource,
      `select global_position, stream_id, stream_version, type, data, metadata, recorded_at
         from events where global_position > $1 order by global_position limit $2`,
      [after, batch],
    );
    return events.map((r) => toRecorded(r));
  }

  async streamIdsWith(type: string, field: string, value: number): Promise<string[]> {
    const streams = await rows<{ stream_id: string }>(
      this.dataSource,
      `select distinct stream_id from events where type = $1 and (data->>$2)::int = $3`,
      [type, field, value],
    );
    return streams.map((r) => r.stream_id);
  }

  async dataValues(types: readonly string[], field: string): Promise<number[]> {
    const values = await rows<{ value: number }>(
      this.dataSource,
      `select distinct (data->>$2)::int as value from events where type = any($1::text[])`,
      [types, field],
    );
    return values.map((r) => r.value);
  }
}

/** Deadlocks (two commands locking streams in opposite orders) and serialisation failures are safe to re-run. */
function isTransient(err: unknown): boolean {
  const code =
    err instanceof QueryFailedError ? (err.driverError as { code?: string })?.code : (err as { code?: string })?.code;
  return code === '40P01' || code === '40001';
}

function metadataFromRequest(): EventMetadata {
  const ctx = RequestContexts.current();
  if (!ctx) return {};
  const a = ctx.actor;
  const meta: EventMetadata = { requestId: ctx.requestId };
  if (ctx.ip) meta.ipAddress = ctx.ip;
  if (a) {
    meta.actorId = a.id;
    if (a.tokenId !== undefined) meta.tokenId = a.tokenId;
    if (a.sudoBy !== undefined) meta.sudoBy = a.sudoBy;
    if (a.impersonatedBy !== undefined) meta.impersonatedBy = a.impersonatedBy;
  }
  return meta;
}

/** The unique index a PostgreSQL error violated (code 23505), if that is what it is. */
export function constraintOf(err: unknown): string | undefined {
  if (err instanceof QueryFailedError) {
    const d = err.driverError as { code?: string; constraint?: string };
    if (d?.code === '23505') return d.constraint ?? 'unknown';
  }
  const e = err as { code?: string; constraint?: string };
  if (e?.code === '23505') return e.constraint ?? 'unknown';
  return undefined;
}

function rethrowUnique(err: unknown): never {
  const c = constraintOf(err);
  if (c) throw new UniqueViolation(c, (err as { detail?: string }).detail);
  throw err;
}
