import { firstRow, NotFound, oneRow, rows, type PageParams } from '@app/platform';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { FailureState } from '../domain/auto-disabling';

/** A project hook as the API shows it (never its secret `token`). */
export interface HookRow {
  id: number;
  url: string;
  project_id: number;
  push_events: boolean;
  tag_push_events: boolean;
  issues_events: boolean;
  merge_requests_events: boolean;
  note_events: boolean;
  job_events: boolean;
  pipeline_events: boolean;
  wiki_page_events: boolean;
  enable_ssl_verification: boolean;
  push_events_branch_filter: string | null;
  created_at: Date;
  /** From `hook_failures`: 0 and null for a hook that is not failing. */
  recent_failures: number;
  disabled_until: Date | null;
}

export const failureState = (h: Pick<HookRow, 'recent_failures' | 'disabled_until'>): FailureState => ({
  recentFailures: h.recent_failures,
  disabledUntil: h.disabled_until === null ? null : new Date(h.disabled_until),
});

/** One attempt in a hook's delivery log (`hook_delivery_log`). */
export interface DeliveryRow {
  /** bigint, as text. */
  id: string;
  event_uuid: string;
  event: string;
  url: string;
  attempt: number;
  response_status: number | null;
  error: string | null;
  duration_ms: number;
  skipped: boolean;
  created_at: Date;
  request_headers: Record<string, string>;
  /** Null for the entries written before Lode kept payloads. */
  request_data: unknown;
  response_headers: Record<string, string>;
  response_body: string;
}

/** What delivery needs of a hook: where to send, and which pushes it hears. */
export interface HookTarget {
  id: number;
  url: string;
  enable_ssl_verification: boolean;
  push_events: boolean;
  tag_push_events: boolean;
  /** Branch pushes it hears: those this matches (a name or a wildcard); every one when null or empty. */
  push_events_branch_filter: string | null;
}

const TARGET_COLUMNS = `id, url, enable_ssl_verification, push_events, tag_push_events, push_events_branch_filter`;

const COLUMNS = `id, url, project_id, push_events, tag_push_events, issues_events, merge_requests_events, note_events, job_events,
  pipeline_events, wiki_page_events, enable_ssl_verification, push_events_branch_filter, created_at,
  coalesce(f.recent_failures, 0)::int as recent_failures, f.disabled_until`;
/** A project hook with its failure state, when it has one. */
const HOOKS = `project_hooks left join hook_failures f on f.hook_kind = 'project' and f.hook_id = project_hooks.id`;

/** Reads of project hooks and their delivery log. */
@Injectable()
export class HookQueries {
  constructor(private readonly db: DataSource) {}

  /** The project's hook, 404 when it has no such hook. */
  async hook(projectId: number, hookId: number): Promise<HookRow> {
    const row = await firstRow<HookRow>(this.db, `select ${COLUMNS} from ${HOOKS} where id = $1 and project_id = $2`, [
      hookId,
      projectId,
    ]);
    if (!row) throw new NotFound();
    return row;
  }

  /** A hook by its id alone, whatever its project: for operators (`lode hooks deliveries`). */
  async findForSystem(hookId: number): Promise<HookRow | undefined> {
    return firstRow<HookRow>(this.db, `select ${COLUMNS} from ${HOOKS} where id = $1`, [hookId]);
  }

  /** The project's hooks that hear pushes or tag pushes, for a push's fan-out. */
  async pushTargets(projectId: number): Promise<HookTarget[]> {
    return rows<HookTarget>(
      this.db,
      `select ${TARGET_COLUMNS} from project_hooks where project_id = $1 and (push_events or tag_push_events) order by id`,
      [projectId],
    );
  }

  /** The hook a queued delivery goes to, if it still exists on its project. */
  async deliveryTarget(hookId: number, projectId: number): Promise<HookTarget | undefined> {
    return firstRow<HookTarget>(
      this.db,
      `select ${TARGET_COLUMNS} from project_hooks where id = $1 and project_id = $2`,
      [hookId, projectId],
    );
  }

  async hooks(projectId: number, page: PageParams): Promise<{ rows: HookRow[]; total: number }> {
    const { total } = await oneRow<{ total: number }>(
      this.db,
      `select count(*)::int as total from project_hooks where project_id = $1`,
      [projectId],
    );
    const hooks = await rows<HookRow>(
      this.db,
      `select ${COLUMNS} from ${HOOKS} where project_id = $1 order by id offset $2 limit $3`,
      [projectId, page.offset, page.perPage],
    );
    return { rows: hooks, total };
  }

  /** The hook's delivery log, newest first (ids grow with time). */
  async deliveries(hookId: number, page: PageParams): Promise<{ rows: DeliveryRow[]; total: number }> {
    const { total } = await oneRow<{ total: number }>(
      this.db,
      `select count(*)::int as total from hook_delivery_log where hook_id = $1`,
      [hookId],
    );
    const deliveries = await rows<DeliveryRow>(
      this.db,
      `select id, event_uuid, event, url, attempt, response_status, error, duration_ms, skipped, created_at,
              request_headers, request_data, response_headers, response_body from hook_delivery_log
        where hook_id = $1 order by id desc offset $2 limit $3`,
      [hookId, page.offset, page.perPage],
    );
    return { rows: deliveries, total };
  }
}
