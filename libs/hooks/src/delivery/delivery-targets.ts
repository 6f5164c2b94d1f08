import { GroupCommit, rows } from '@app/platform';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { NEVER_FAILED, type FailureState, type HookKind } from '../domain/auto-disabling';
import type { HookTarget } from '../queries/hook.queries';
import { HookSecrets, type HookSecret } from '../secrets/hook-secrets';

/** What one delivery needs to know before it sends: where, with which secrets, and whether the hook is failing. */
export interface DeliveryTarget {
  hook: Pick<HookTarget, 'id' | 'url' | 'enable_ssl_verification'>;
  secret: HookSecret | undefined;
  failures: FailureState;
}

interface TargetRow {
  id: number;
  project_id?: number;
  url: string;
  enable_ssl_verification: boolean;
  sealed: string | null;
  recent_failures: number | null;
  disabled_until: Date | null;
}

/**
 * The hook, its sealed secrets and its failure state, read in ONE statement per group of deliveries
 * starting together (`GroupCommit`), where a delivery used to make three round trips before sending:
 * at hundreds of deliveries a second those reads were most of the workers' database work.
 */
@Injectable()
export class DeliveryTargets {
  private readonly projectHooks = new GroupCommit<{ hookId: number; projectId: number }, DeliveryTarget | undefined>(
    async (asked) => {
      const found = await rows<TargetRow>(
        this.db,
        `select h.id, h.project_id, h.url, h.enable_ssl_verification, s.sealed, f.recent_failures, f.disabled_until
           from project_hooks h
           left join project_hook_secrets s on s.hook_id = h.id
           left join hook_failures f on f.hook_kind = 'project' and f.hook_id = h.id
          where h.id = any($1::int[])`,
        [[...new Set(asked.map((a) => a.hookId))]],
      );
      const byId = new Map(found.map((r) => [r.id, r]));
      return asked.map((a) => {
        const row = byId.get(a.hookId);
        return row && row.project_id === a.projectId ? this.target(row) : undefined;
      });
    },
  );

  private readonly systemHooks = new GroupCommit<number, DeliveryTarget | undefined>(async (ids) => {
    const found = await rows<TargetRow>(
      this.db,
      `select h.id, h.url, h.enable_ssl_verification, s.sealed, null::int as recent_failures, null::timestamptz as disabled_until
         from system_hooks h left join system_hook_secrets s on s.hook_id = h.id
        where h.id = any($1::int[])`,
      [[...new Set(ids)]],
    );
    const byId = new Map(found.map((r) => [r.id, r]));
    return ids.map((id) => {
      const row = byId.get(id);
      return row && this.target(row);
    });
  });

  constructor(
    private readonly db: DataSource,
    private readonly secrets: HookSecrets,
  ) {}

  /** The hook a queued delivery goes to, if it was not removed since (a project hook: still on its project). */
  of(kind: HookKind, hookId: number, projectId: number): Promise<DeliveryTarget | undefined> {
    // Ids past int4 are no hook's; asking for one would fail the whole group's statement.
    if (!Number.isInteger(hookId) || hookId < 1 || hookId > 2_147_483_647) return Promise.resolve(undefined);
    return kind === 'system' ? this.systemHooks.run(hookId) : this.projectHooks.run({ hookId, projectId });
  }

  private target(row: TargetRow): DeliveryTarget {
    return {
      hook: { id: row.id, url: row.url, enable_ssl_verification: row.enable_ssl_verification },
      secret: row.sealed === null ? undefined : this.secrets.open(row.id, { sealed: row.sealed }),
      failures:
        row.recent_failures === null
          ? NEVER_FAILED
          : { recentFailures: row.recent_failures, disabledUntil: row.disabled_until && new Date(row.disabled_until) },
    };
  }
}
