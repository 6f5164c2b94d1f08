import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { DomainEvent, Recorded } from '../event-store/recorded';

/**
 * A projector keeps read-model tables in step with the events, inside the appending transaction.
 * It must be rebuildable: `tables` are emptied and every event replayed in order, so `apply`
 * may read only the event and the tables, never the clock or another service.
 */
export interface Projector<E extends DomainEvent = DomainEvent> {
  readonly name: string;
  readonly tables: readonly string[];
  /**
   * The event types it handles, named from its event union (a misspelt type fails to compile). The
   * registry hands `apply` only these: derive them from the projector's handlers with `handledTypes`.
   */
  readonly eventTypes: readonly E['type'][];
  apply(event: Recorded<E>, db: EntityManager): Promise<void>;
  /**
   * Optional: how this projector replays a rebuild, when it can do better than `apply` one event at a
   * time (the audit log keeps its memory of names and values in the process instead of reading it
   * back from its table for every event). Its tables are empty when the replay starts and no one
   * else writes them until the rebuild commits; `finish` writes what the replay still holds.
   */
  replay?(): ProjectorReplay<E>;
  /**
   * Optional: how this projector takes the events of one append (one command's decision on one
   * stream, applied in order inside its transaction), when it can do better than `apply` one event at
   * a time: keep what an event wrote in mind for the next, and write once at `finish`, which runs
   * before anything else in the transaction reads its tables.
   */
  appendBatch?(): ProjectorReplay<E>;
}

/** A projector's part of one rebuild: every event in order, then `finish` before the commit. */
export interface ProjectorReplay<E extends DomainEvent = DomainEvent> {
  apply(event: Recorded<E>, db: EntityManager): Promise<void>;
  finish(db: EntityManager): Promise<void>;
}

/**
 * A projector's handlers: one per event type of `E`, each given its own event. Typed over the exact
 * union a projector handles, so a type left without a handler (or a misspelt one) fails to compile.
 */
export type EventHandlers<E extends DomainEvent> = {
  readonly [T in E['type']]: (event: Recorded<Extract<E, { type: T }>>, db: EntityManager) => Promise<void>;
};

/** The event types a projector's handlers name: its `eventTypes`, so the map is the one list. */
export function handledTypes<E extends DomainEvent>(on: EventHandlers<E>): readonly E['type'][] {
  return Object.keys(on) as E['type'][];
}

/** Hands `event` to the handler of its type; the registry sends a projector only the types it names. */
export async function dispatch<E extends DomainEvent>(
  on: EventHandlers<E>,
  event: Recorded<E>,
  db: EntityManager,
): Promise<void> {
  const type: E['type'] = event.type;
  if (!Object.hasOwn(on, type)) throw new Error(`no handler for event ${type} at ${event.globalPosition}`);
  const handler = on[type] as (event: Recorded<E>, db: EntityManager) => Promise<void>;
  return handler(event, db);
}

/**
 * The `eventTypes` entry of a projector that is handed every event, whatever its type: the audit
 * log's (libs/audit), which records every write of every context.
 */
export const EVERY_EVENT = '*';

/** Every context registers its projectors here when its module starts. */
@Injectable()
export class ProjectionRegistry {
  private readonly projectors: Projector[] = [];
  private readonly byType = new Map<string, Projector[]>();

  register(...projectors: Projector[]): void {
    for (const p of projectors) {
      if (this.projectors.some((q) => q.name === p.name)) continue;
      this.projectors.push(p);
      for (const t of p.eventTypes) this.byType.set(t, [...(this.byType.get(t) ?? []), p]);
    }
  }

  all(): readonly Projector[] {
    return this.projectors;
  }

  async apply(event: Recorded<DomainEvent>, db: EntityManager): Promise<void> {
    for (const p of this.byType.get(event.type) ?? []) await p.apply(event, db);
    for (const p of this.byType.get(EVERY_EVENT) ?? []) await p.apply(event, db);
  }

  /**
   * The projectors' part of one append: each event in order, then `finish` (each projector's own
   * `appendBatch()` where it has one, begun at the first event it is handed; `apply` otherwise).
   */
  appendBatch(): ProjectorReplay {
    const batches = new Map<Projector, ProjectorReplay>();
    const applyTo = (p: Projector, event: Recorded<DomainEvent>, db: EntityManager) => {
      if (!p.appendBatch) return p.apply(event, db);
      let batch = batches.get(p);
      if (!batch) batches.set(p, (batch = p.appendBatch()));
      return batch.apply(event, db);
    };
    return {
      apply: async (event, db) => {
        for (const p of this.byType.get(event.type) ?? []) await applyTo(p, event, db);
        for (const p of this.byType.get(EVERY_EVENT) ?? []) await applyTo(p, event, db);
      },
      finish: async (db) => {
        for (const batch of batches.values()) await batch.finish(db);
      },
    };
  }

  /**
   * One rebuild's replay: each projector's own `replay()` where it has one, its `apply` otherwise,
   * in the registry's order; `finish` lets every replay write what it holds.
   */
  replay(): ProjectorReplay {
    const replays = new Map<Projector, ProjectorReplay>(
      this.projectors.map((p) => [p, p.replay?.() ?? { apply: (e, db) => p.apply(e, db), finish: async () => {} }]),
    );
    const appliers = (type: string) => (this.byType.get(type) ?? []).map((p) => replays.get(p)!);
    const ofType = new Map<string, ProjectorReplay[]>();
    const forType = (type: string) => {
      let found = ofType.get(type);
      if (!found) ofType.set(type, (found = [...appliers(type), ...appliers(EVERY_EVENT)]));
      return found;
    };
    return {
      apply: async (event, db) => {
        for (const r of forType(event.type)) await r.apply(event, db);
      },
      finish: async (db) => {
        for (const r of replays.values()) await r.finish(db);
      },
    };
  }
}
