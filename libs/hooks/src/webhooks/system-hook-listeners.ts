import { Invalidations, type DomainEvent, type InvalidationRoute, type Recorded, type Sql } from '@app/platform';
import { Injectable } from '@nestjs/common';
import { SystemHookQueries, type SystemHookTarget } from '../queries/system-hook.queries';

/** The cache key every change of a system hook makes stale (notified on `lode_invalidate`). */
export const SYSTEM_HOOKS_KEY = 'system-hooks';

export const systemHookInvalidationRoute: InvalidationRoute = (event: Recorded<DomainEvent>) =>
  event.type === 'SystemHookAdded' || event.type === 'SystemHookUpdated' || event.type === 'SystemHookRemoved'
    ? SYSTEM_HOOKS_KEY
    : undefined;

/**
 * Whether any system hook hears an event of a type, asked by the outbox route inside the event's
 * transaction, so an instance without system hooks writes no `system-fanout` row per project,
 * member, key and user change (nor relays and runs the job that finds nobody to tell).
 *
 * The hooks are cached in each process and forgotten when one is added, changed or removed (the
 * `system-hooks` key: in the writing process at once, in the others through `Invalidations`'
 * NOTIFY). A cached "nobody" is believed only after `Invalidations.caughtUp()`: every notification
 * committed before the question has then been heard, so an event recorded through one process after
 * a hook's creation through another committed is fanned out (system-hooks-processes.e2e-spec.ts).
 * When that cannot be known (the LISTEN connection down) the row is written, as it always was: the
 * job then reads the hooks from the table. A cached "somebody" needs no fence: writing a row that
 * finds nobody is harmless, missing one is not.
 */
@Injectable()
export class SystemHookListeners {
  private hooks?: SystemHookTarget[];
  /** Bumped by every eviction: a load that overlapped one does not cache what it read. */
  private epoch = 0;

  constructor(
    private readonly queries: SystemHookQueries,
    private readonly invalidations: Invalidations,
  ) {
    invalidations.register(systemHookInvalidationRoute);
    invalidations.subscribe((keys) => {
      if (keys === 'all' || keys.includes(SYSTEM_HOOKS_KEY)) this.evict();
    });
  }

  evict(): void {
    this.epoch += 1;
    this.hooks = undefined;
  }

  /** Whether a system hook hears events of this type (pushes: one with a push, tag push or repository update switch on). */
  async hear(eventType: string, db: Sql): Promise<boolean> {
    if (this.hooks && hears(this.hooks, eventType)) return true;
    if (!(await this.invalidations.caughtUp())) return true;
    return hears(await this.current(db), eventType);
  }

  /** Read through `db`, the asking transaction's connection (see OutboxRoute). */
  private async current(db: Sql): Promise<SystemHookTarget[]> {
    if (this.hooks) return this.hooks;
    const epoch = this.epoch;
    const hooks = await this.queries.targets(db);
    if (epoch === this.epoch) this.hooks = hooks;
    return hooks;
  }
}

function hears(hooks: SystemHookTarget[], eventType: string): boolean {
  if (eventType === 'RepositoryPushed')
    return hooks.some((h) => h.push_events || h.tag_push_events || h.repository_update_events);
  return hooks.length > 0;
}
