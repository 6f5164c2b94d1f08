/** An event as deciders produce it: a type (past tense, aggregate first) and plain JSON data. */
export interface DomainEvent<T extends string = string, D = unknown> {
  type: T;
  data: D;
}

/** What every stored event carries besides its data: who did it, through which token, in which request. */
export interface EventMetadata {
  requestId?: string;
  actorId?: number;
  /** The administrator behind a sudo. */
  sudoBy?: number;
  /** The administrator who created the impersonation token in use. */
  impersonatedBy?: number;
  tokenId?: number;
  /**
   * The client's address (`req.ip`: X-Forwarded-For only from LODE_TRUSTED_PROXIES). Recorded since the
   * audit events; older events have none.
   */
  ipAddress?: string;
  /** Set for changes made outside a request: `cli`, `startup`, `worker`. */
  origin?: string;
}

/** A stored event. `globalPosition` is a bigint, kept as a string so no precision is lost. */
export type Recorded<E extends DomainEvent = DomainEvent> = E & {
  streamId: string;
  streamVersion: number;
  globalPosition: string;
  metadata: EventMetadata;
  recordedAt: Date;
};

/** A row of `events` as a query selects it (`select *`); `toRecorded` turns it into the event. */
export interface EventRow {
  global_position: string;
  stream_id: string;
  stream_version: number;
  type: string;
  data: unknown;
  metadata: EventMetadata;
  recorded_at: Date;
}

export function toRecorded<E extends DomainEvent>(row: EventRow): Recorded<E> {
  return {
    type: row.type,
    data: row.data,
    streamId: row.stream_id,
    streamVersion: row.stream_version,
    globalPosition: String(row.global_position),
    metadata: row.metadata,
    recordedAt: row.recorded_at,
  } as Recorded<E>;
}

/** An aggregate as a decider: its initial state and how one event changes it. */
export interface Decider<S, E extends DomainEvent> {
  initial: () => S;
  evolve: (state: S, event: E) => S;
}

/**
 * The `default` of a switch over an event union: a union member that no case handles leaves `event`
 * not `never`, so adding an event type without handling it fails to compile.
 */
export function assertNever(event: never): never {
  throw new Error(`unhandled event ${JSON.stringify(event)}`);
}
