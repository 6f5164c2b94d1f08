import { firstRow, GroupCommit, NotFound } from '@app/platform';
import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';

/** One attempt to write down in a project hook's delivery log. */
export interface DeliveryLogEntry {
  hookId: number;
  eventUuid: string;
  /** `X-Gitlab-Event`: `Push Hook`, `Tag Push Hook`. */
  event: string;
  /** Without credentials, secrets redacted. */
  url: string;
  /** Which attempt of this delivery (a resend counts on from the last one). */
  attempt: number;
  /** What was sent, `X-Gitlab-Token` already `[REDACTED]`. */
  requestHeaders: Record<string, string>;
  /** The payload as sent: what a resend sends again. */
  requestData: unknown;
  responseHeaders: Record<string, string>;
  responseBody: string;
  responseStatus: number | null;
  error: string | null;
  durationMs: number;
  skipped: boolean;
}

/** What a resend needs of a logged delivery. */
export interface LoggedDelivery {
  id: string;
  hook_id: number;
  event_uuid: string;
  event: string;
  request_data: unknown;
}

/**
 * The delivery log's writes (`hook_delivery_log`, append-only): one INSERT per attempt, no event, so
 * its cost never depends on how many attempts came before; the retention job's DELETE.
 */
@Injectable()
export class DeliveryLog {
  /** The workers' entries, written together when many attempts end at once (one INSERT a group). */
  private readonly entries = new GroupCommit<DeliveryLogEntry, unknown>((all) => this.insertGroup(all));

  constructor(private readonly db: DataSource) {}

  async record(e: DeliveryLogEntry): Promise<void> {
    const failed = await this.entries.run(e);
    if (failed !== undefined) throw failed;
  }

  /**
   * A group's entries in one INSERT; should it fail, one by one, so an entry PostgreSQL refuses fails
   * its own delivery only (a failed record is a retried delivery: the others were sent and logged).
   */
  private async insertGroup(all: DeliveryLogEntry[]): Promise<unknown[]> {
    try {
      await this.insert(all);
      return [];
    } catch (err) {
      if (all.length === 1) return [err];
      return Promise.all(
        all.map((e) =>
          this.insert([e]).then(
            () => undefined,
            (one: unknown) => one,
          ),
        ),
      );
    }
  }

  private async insert(all: DeliveryLogEntry[]): Promise<void> {
    // A hook removed while its delivery was in flight keeps no log (its rows went with it).
    await this.db.query(
      `insert into hook_delivery_log (hook_id, event_uuid, event, url, attempt, request_headers, request_data,
             response_headers, response_body, response_status, error, duration_ms, skipped)
         select e.hook_id, e.event_uuid, e.event, e.url, e.attempt, e.request_headers, e.request_data,
                e.response_headers, e.response_body, e.response_status, e.error, e.duration_ms, e.skipped
           from rows from (jsonb_to_recordset($1::jsonb) as (hook_id int, event_uuid uuid, event text, url text,
                  attempt int, request_headers jsonb, request_data jsonb, response_headers jsonb, response_body text,
                  response_status int, error text, duration_ms int, skipped boolean))
                with ordinality as e(hook_id, event_uuid, event, url, attempt, request_headers, request_data,
                  response_headers, response_body, response_status, error, duration_ms, skipped, n)
          where exists (select 1 from project_hooks h where h.id = e.hook_id)
          order by e.n`,
      [
        JSON.stringify(
          all.map((e) => ({
            hook_id: e.hookId,
            event_uuid: e.eventUuid,
            event: e.event,
            url: e.url,
            attempt: e.attempt,
            request_headers: e.requestHeaders,
            request_data: e.requestData === undefined ? null : e.requestData,
            response_headers: e.responseHeaders,
            response_body: e.responseBody,
            response_status: e.responseStatus,
            error: e.error,
            duration_ms: Math.round(e.durationMs),
            skipped: e.skipped,
          })),
        ),
      ],
    );
  }

  /** A logged delivery of the hook, 404 when it has no such entry. */
  async entry(hookId: number, id: string): Promise<LoggedDelivery> {
    if (!/^\d{1,18}$/.test(id)) throw new NotFound();
    const row = await firstRow<LoggedDelivery>(
      this.db,
      `select id, hook_id, event_uuid, event, request_data from hook_delivery_log where hook_id = $1 and id = $2`,
      [hookId, id],
    );
    if (!row) throw new NotFound();
    return row;
  }

  /** The next attempt number of a delivery (a resend follows its last attempt). */
  async nextAttempt(hookId: number, eventUuid: string): Promise<number> {
    const row = await firstRow<{ n: number }>(
      this.db,
      `select coalesce(max(attempt), 0)::int + 1 as n from hook_delivery_log where hook_id = $1 and event_uuid = $2`,
      [hookId, eventUuid],
    );
    return row?.n ?? 1;
  }

  /** A removed hook's log goes with it (in the removal's transaction). */
  async erase(db: EntityManager, hookId: number): Promise<void> {
    await db.query(`delete from hook_delivery_log where hook_id = $1`, [hookId]);
  }

  /** The logs of hooks that went with their project (the read model's cascade). */
  async eraseGone(): Promise<void> {
    await this.db.query(
      `delete from hook_delivery_log l where not exists (select 1 from project_hooks h where h.id = l.hook_id)`,
    );
  }

  /** Removes the entries older than `days` days; answers how many went. */
  async prune(days: number): Promise<number> {
    const [, count] = (await this.db.query(
      `delete from hook_delivery_log where created_at < now() - make_interval(days => $1)`,
      [days],
    )) as [unknown, number];
    return count;
  }
}
