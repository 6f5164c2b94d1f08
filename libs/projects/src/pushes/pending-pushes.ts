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
   * Strikes a push off inside the transaction that records it; false when it was struck off
   * already (the reconciler and the push's own recorder both got to it: only one records).
   */
  async strike(db: EntityManager, id: string): Promise<boolean> {
    // Wrapped in a select: TypeORM answers a bare `delete ... returning` with [rows, count].
    const gone = await rows<{ id: string }>(
      db,
      `with gone as (delete from pending_pushes where id = $1 returning id) select id from gone`,
      [id],
    );
    return gone.length > 0;
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
   * no other process holds: each is then this process's to record.
   */
  async claimStale(olderThanMs: number, limit = 20, goneOwners: readonly string[] = []): Promise<PendingPush[]> {
    const claimed = await rows<PendingPushRow>(
      this.db,
      `with claimed as (
         update pending_pushes set claimed_until = now() + interval '5 minutes'
          where id in (select id from pending_pushes
                        where (created_at < now() - $1 * interval '1 millisecond' or owner = any($3::text[]))
                          and (claimed_until is null or claimed_until < now())
                        order by id limit $2 for update skip locked)
          returning id, project_id, updates, pusher, created_at)
       select * from claimed order by id`,
      [olderThanMs, limit, goneOwners],
    );
    return claimed.map((r) => ({
      id: String(r.id),
      projectId: r.project_id,
      updates: r.updates,
      pusher: r.pusher,
      createdAt: r.created_at,
    }));
  }
}
