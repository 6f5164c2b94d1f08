import { firstRow, NotFound, rows, type PageParams, oneRow, type Sql } from '@app/platform';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

/** A system hook as the API shows it (its URL masked, never its token). */
export interface SystemHookRow {
  id: number;
  url: string;
  push_events: boolean;
  tag_push_events: boolean;
  merge_requests_events: boolean;
  repository_update_events: boolean;
  enable_ssl_verification: boolean;
  created_at: Date;
}

/** What the system fan-out and a delivery need of a hook: its switches and where it sends. */
export type SystemHookTarget = Pick<
  SystemHookRow,
  'id' | 'url' | 'push_events' | 'tag_push_events' | 'repository_update_events' | 'enable_ssl_verification'
>;

const TARGET_COLUMNS = `id, url, push_events, tag_push_events, repository_update_events, enable_ssl_verification`;

const COLUMNS = `id, url, push_events, tag_push_events, merge_requests_events, repository_update_events,
  enable_ssl_verification, created_at`;

/** Reads of system hooks. */
@Injectable()
export class SystemHookQueries {
  constructor(private readonly db: DataSource) {}

  /** The hook, `404 Not found` (GitLab's ActiveRecord miss) when there is none. */
  async hook(hookId: number): Promise<SystemHookRow> {
    const row =
      hookId > 2_147_483_647
        ? undefined
        : await firstRow<SystemHookRow>(this.db, `select ${COLUMNS} from system_hooks where id = $1`, [hookId]);
    if (!row) throw new NotFound();
    return row;
  }

  async hooks(page: PageParams): Promise<{ rows: SystemHookRow[]; total: number }> {
    const { total } = await oneRow<{ total: number }>(this.db, `select count(*)::int as total from system_hooks`);
    const found = await rows<SystemHookRow>(
      this.db,
      `select ${COLUMNS} from system_hooks order by id offset $1 limit $2`,
      [page.offset, page.perPage],
    );
    return { rows: found, total };
  }

  /** Every system hook, for a fan-out (GitLab's `SystemHook.all` and its scopes; a handful per instance). */
  async targets(db: Sql = this.db): Promise<SystemHookTarget[]> {
    return rows<SystemHookTarget>(db, `select ${TARGET_COLUMNS} from system_hooks order by id`);
  }

  /** The hook a queued delivery goes to, if it was not removed since. */
  async deliveryTarget(hookId: number): Promise<SystemHookTarget | undefined> {
    return firstRow<SystemHookTarget>(this.db, `select ${TARGET_COLUMNS} from system_hooks where id = $1`, [hookId]);
  }
}
