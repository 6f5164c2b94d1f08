import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { DomainEvent, Recorded } from '../event-store/recorded';

/**
 * A projector keeps read-model tables in step with the events, inside the appending transaction.
 * It must be rebuildable: `tables` are emptied and every event replayed in order, so `apply`
 * may read only the event and the tables, never the clock or another service.
 */
export interface Projector {
  readonly name: string;
  readonly tables: readonly string[];
  readonly eventTypes: readonly string[];
  apply(event: Recorded<DomainEvent>, db: EntityManager): Promise<void>;
}

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
