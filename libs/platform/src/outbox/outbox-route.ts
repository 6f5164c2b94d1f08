import { Injectable } from '@nestjs/common';
import type { DomainEvent, Recorded } from '../event-store/recorded';

/** A job that must follow an event. `jobId` is stable, so a job is enqueued once however often it is relayed. */
export interface OutboxJob<D = unknown> {
  queue: string;
  name: string;
  jobId: string;
  data: D;
  /** BullMQ options such as attempts and backoff. */
  options?: { attempts?: number; backoff?: { type: 'exponential' | 'fixed'; delay: number } };
}

/** A pure function from an event to the jobs it causes; runs inside the append transaction. */
export type OutboxRoute = (event: Recorded<DomainEvent>) => OutboxJob | OutboxJob[] | undefined;

@Injectable()
export class OutboxRoutes {
  private readonly routes: OutboxRoute[] = [];

  register(...routes: OutboxRoute[]): void {
    for (const r of routes) if (!this.routes.includes(r)) this.routes.push(r);
  }

  jobsFor(event: Recorded<DomainEvent>): OutboxJob[] {
    return this.routes.flatMap((r) => {
      const out = r(event);
      return out === undefined ? [] : Array.isArray(out) ? out : [out];
    });
  }
}
