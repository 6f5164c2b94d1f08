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
   * registry hands `apply` only these, so `apply` can switch over `E` exhaustively with `assertNever`.
   */
  readonly eventTypes: readonly E['type'][];
  apply(event: Recorded<E>, db: EntityManager): Promise<void>;
}

/**
 * The events of union `E` whose type is listed in `types`: a projector declares its types once, as a
 * `const` tuple, and takes `Handled<E, typeof TYPES>` in `apply`.
 */
export type Handled<E extends DomainEvent, Types extends readonly string[]> = Extract<E, { type: Types[number] }>;

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
  }
}
