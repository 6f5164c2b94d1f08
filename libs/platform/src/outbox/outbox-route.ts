import { Injectable } from '@nestjs/common';
import type { Sql } from '../database/sql';
import type { DomainEvent, Recorded } from '../event-store/recorded';

/** A job that must follow an event. `jobId` is stable, so a job is enqueued once however often it is relayed. */
export interface OutboxJob<D = unknown> {
  queue: string;
  name: string;
  jobId: string;
  data: D;
  /** BullMQ options such as attempts and backoff. */
  options?: { attempts?: number; delay?: number; backoff?: { type: 'exponential' | 'fixed'; delay: number } };
}

/**
 * A function from an event to the jobs it causes; runs inside the append transaction. Most are pure
 * and synchronous; one may ask the database, through the transaction's own connection (`db`: a
 * second connection taken from the pool inside a transaction could wait for ever on a full pool).
 */
export type OutboxRoute = (
  event: Recorded<DomainEvent>,
  db: Sql,
) => OutboxJob | OutboxJob[] | undefined | Promise<OutboxJob | OutboxJob[] | undefined>;

@Injectable()
export class OutboxRoutes {
  private readonly routes: OutboxRoute[] = [];

  register(...routes: OutboxRoute[]): void {
    for (const r of routes) if (!this.routes.includes(r)) this.routes.push(r);
  }

  async jobsFor(event: Recorded<DomainEvent>, db: Sql): Promise<OutboxJob[]> {
    const jobs: OutboxJob[] = [];
    for (const r of this.routes) {
      const out = await r(event, db);
      if (out !== undefined) jobs.push(...(Array.isArray(out) ? out : [out]));
    }
    return jobs;
  }
}
