import { execute, oneRow, ownerGone, ownerTag, parseOwnerTag, rows, type Actor } from '@app/platform';
import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';

/** One ref update a push proposes: `<before> <after> <ref>`, forty zeros for a missing side. */
export interface ProposedUpdate {
  ref: string;
  before: string;
  after: string;
}

/** Who pushed, as the event's metadata and `userId` will name them. */
export type Pusher = Pick<Actor, 'id' | 'username' | 'tokenId' | 'impersonatedBy'>;

/** A push written down before its refs moved, not yet recorded as `RepositoryPushed`. */
export interface PendingPush {
  id: string;
  projectId: number;
  updates: ProposedUpdate[];
  pusher: Pusher;
  createdAt: Date;
}

/** Written-down pushes past the reconciler's wait: how many, and when the oldest was written. */
export interface OverduePushes {
  count: number;
  oldest: Date | null;
}

interface PendingPushRow {
  id: string;
  project_id: number;
  updates: ProposedUpdate[];
  pusher: Pusher;
  created_at: Date;
}

/**
 * Pushes are written down here at git's pre-receive, before a ref moves, and struck off in the
 * transaction that appends their `RepositoryPushed`. A row that outlives its push (the process died,
 * PostgreSQL went away at the end) is what the reconciler records later, with its pusher: no push
 * git acknowledged goes unrecorded. The projects context owns the table.
 */
@Injectable()
export class PendingPushes {
  constructor(private readonly db: DataSource) {}

  /** Writes a push down; throws when PostgreSQL cannot take it (the push is then refused). */
  async begin(projectId: number, updates: ProposedUpdate[], pusher: Actor): Promise<string> {
    const who: Pusher = {
      id: pusher.id,
      username: pusher.username,
      tokenId: pusher.tokenId,
      impersonatedBy: pusher.impersonatedBy,
    };
    const [row] = await rows<{ id: string }>(
      this.db,
      `insert into pending_pushes (project_id, updates, pusher, owner) values ($1, $2, $3, $4) returning id`,
      [projectId, JSON.stringify(updates), JSON.stringify(who), ownerTag()],
    );
    return row.id;
  }

  /**
   * Strikes a push off inside the transaction that records it; answers the updates it still held (a
   * later push's record may have taken some, see `take`), or undefined when it was struck off already
   * (the reconciler and the push's own recorder both got to it: only one records).
   */
  async strike(db: EntityManager, id: string): Promise<ProposedUpdate[] | undefined> {
    // Wrapped in a select: TypeORM answers a bare `delete ... returning` with [rows, count].
    const gone = await rows<{ updates: ProposedUpdate[] }>(
      db,
      `with gone as (delete from pending_pushes where id = $1 returning updates) select updates from gone`,
      [id],
    );
    return gone[0]?.updates;
  }

  /**
   * A written-down push as it stands and the others it meets, in one read: the updates `id` still
   * holds (undefined once it is recorded, struck off), and the other written-down pushes to the
   * project that name one of `refs`, oldest first: where a ref went between the recorded chain's head
   * and an update being recorded. A handful at most.
   */
  async standing(
    projectId: number,
    refs: readonly string[],
    id: string,
  ): Promise<{ own: ProposedUpdate[] | undefined; others: PendingPush[] }> {
    const found = await rows<PendingPushRow>(
      this.db,
      `select id, project_id, updates, pusher, created_at from pending_pushes
        where project_id = $1
          and (id = $3 or exists (select 1 from jsonb_array_elements(updates) u where u->>'ref' = any($2::text[])))
        order by id = $3 desc, id limit 201`,
      [projectId, refs, id],
    );
    const own = found[0]?.id === id ? found.shift() : undefined;
    return { own: own && toPending(own).updates, others: found.slice(0, 200).map(toPending) };
  }

  /**
   * Takes one update out of another written-down push, inside the transaction that records it as a
   * step of the ref's chain for that push's pusher; the push's own record then leaves it out, and a
   * push left with nothing is struck off. False when the update is no longer there (recorded meanwhile).
   */
  async take(db: EntityManager, id: string, update: ProposedUpdate): Promise<boolean> {
    const left = await rows<{ n: number }>(
      db,
      `with taken as (
         update pending_pushes set updates = coalesce((
                  select jsonb_agg(u order by n) from jsonb_array_elements(updates) with ordinality as x(u, n)
                   where not (u->>'ref' = $2 and u->>'before' = $3 and u->>'after' = $4)), '[]'::jsonb)
          where id = $1 and exists (select 1 from jsonb_array_elements(updates) u
                                     where u->>'ref' = $2 and u->>'before' = $3 and u->>'after' = $4)
          returning jsonb_array_length(updates) as n)
       select n from taken`,
      [id, update.ref, update.before, update.after],
    );
    if (!left.length) return false;
    if (left[0].n === 0) await execute(db, `delete from pending_pushes where id = $1`, [id]);
    return true;
  }

  /** Forgets a push that moved no ref (refused, failed, or its project is gone). */
  async forget(id: string): Promise<void> {
    await execute(this.db, `delete from pending_pushes where id = $1`, [id]);
  }

  /**
   * Pushes written down more than `olderThanMs` ago and still not recorded: the reconciler (in every
   * API process, each minute) should have taken them, so any left say it is not running or failing.
   */
  async overdue(olderThanMs: number): Promise<OverduePushes> {
    const row = await oneRow<{ count: number; oldest: Date | null }>(
      this.db,
      `select count(*)::int as count, min(created_at) as oldest from pending_pushes
        where created_at < now() - $1 * interval '1 millisecond'`,
      [olderThanMs],
    );
    return { count: row.count, oldest: row.oldest };
  }

  /**
   * The processes recording written-down pushes that are known to be gone (killed on this machine,
   * see @app/platform's process owners): their pushes need not wait to be taken. A handful at most.
   */
  async goneOwners(): Promise<string[]> {
    const owners = await rows<{ owner: string }>(
      this.db,
      `select distinct owner from pending_pushes where owner is not null`,
    );
    return owners
      .map((o) => o.owner)
      .filter((o) => {
        const who = parseOwnerTag(o);
        return who !== undefined && ownerGone(who);
      });
  }

  /**
   * Claims for a few minutes up to `limit` pushes written down more than `olderThanMs` ago (long
   * past any live push's end), or by one of `goneOwners` (whose process will never record them), that
   * no other process holds: each is then this process's to record, and names it as its owner, so a
   * claim of a process killed while reconciling is taken again at once, not after its five minutes.
   */
  async claimStale(olderThanMs: number, limit = 20, goneOwners: readonly string[] = []): Promise<PendingPush[]> {
    const claimed = await rows<PendingPushRow>(
      this.db,
      `with claimed as (
         update pending_pushes set claimed_until = now() + interval '5 minutes', owner = $4
          where id in (select id from pending_pushes
                        where (created_at < now() - $1 * interval '1 millisecond' or owner = any($3::text[]))
                          and (claimed_until is null or claimed_until < now() or owner = any($3::text[]))
                        order by id limit $2 for update skip locked)
          returning id, project_id, updates, pusher, created_at)
       select * from claimed order by id`,
      [olderThanMs, limit, goneOwners, ownerTag()],
    );
    return claimed.map(toPending);
  }
}

const toPending = (r: PendingPushRow): PendingPush => ({
  id: String(r.id),
  projectId: r.project_id,
  updates: r.updates,
  pusher: r.pusher,
  createdAt: r.created_at,
});
