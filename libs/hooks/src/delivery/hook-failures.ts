import { Clock, firstRow, LodeConfig } from '@app/platform';
import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import {
  afterFailure,
  alertStatus,
  NEVER_FAILED,
  type AlertStatus,
  type FailureState,
  type HookKind,
} from '../domain/auto-disabling';

interface FailureRow {
  recent_failures: number;
  disabled_until: Date | null;
}

const state = (row: FailureRow | undefined): FailureState =>
  row ? { recentFailures: row.recent_failures, disabledUntil: row.disabled_until } : NEVER_FAILED;

/**
 * The failure accounting of hooks, keyed by (kind, id), in `hook_failures`: one row per hook that is
 * failing now, changed per attempt (never an event per attempt). The rules are `auto-disabling.ts`'s.
 */
@Injectable()
export class HookFailures {
  constructor(
    private readonly db: DataSource,
    private readonly clock: Clock,
    private readonly config: LodeConfig,
  ) {}

  async state(kind: HookKind, hookId: number, db: EntityManager = this.db.manager): Promise<FailureState> {
    return state(
      await firstRow<FailureRow>(
        db,
        `select recent_failures, disabled_until from hook_failures where hook_kind = $1 and hook_id = $2`,
        [kind, hookId],
      ),
    );
  }

  /** Whether the hook may be sent to now, and what its answer's `alert_status` says. */
  async status(kind: HookKind, hookId: number): Promise<AlertStatus> {
    return alertStatus(await this.state(kind, hookId), this.clock.now());
  }

  /** One more failed request. Answers the state after it. */
  async failed(kind: HookKind, hookId: number): Promise<FailureState> {
    return this.db.transaction(async (db) => {
      // The row is made first so concurrent attempts to the same hook take turns on its lock.
      await db.query(
        `insert into hook_failures (hook_kind, hook_id, recent_failures) values ($1, $2, 0) on conflict do nothing`,
        [kind, hookId],
      );
      const before = state(
        await firstRow<FailureRow>(
          db,
          `select recent_failures, disabled_until from hook_failures where hook_kind = $1 and hook_id = $2 for update`,
          [kind, hookId],
        ),
      );
      const after = afterFailure(before, this.clock.now(), this.config.webhookDisableBaseMs);
      await db.query(
        `update hook_failures set recent_failures = $3, disabled_until = $4 where hook_kind = $1 and hook_id = $2`,
        [kind, hookId, after.recentFailures, after.disabledUntil],
      );
      return after;
    });
  }

  /** A delivered request, an edit or a test: the hook is executable again (GitLab's `enable!`). */
  async reset(kind: HookKind, hookId: number, db: EntityManager = this.db.manager): Promise<void> {
    await db.query(`delete from hook_failures where hook_kind = $1 and hook_id = $2`, [kind, hookId]);
  }

  /** Rows of project hooks that went with their project (the read model's cascade). */
  async eraseGone(): Promise<void> {
    await this.db.query(
      `delete from hook_failures f where f.hook_kind = 'project'
         and not exists (select 1 from project_hooks h where h.id = f.hook_id)`,
    );
  }
}
