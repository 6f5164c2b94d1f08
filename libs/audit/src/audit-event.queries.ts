import { COUNT_LIMIT, firstRow, NotFound, oneRow, rows, type PageParams } from '@app/platform';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { AuditEntityType } from './audit-log';

export interface AuditEventRow {
  id: string;
  author_id: number;
  entity_type: AuditEntityType;
  entity_id: number;
  details: Record<string, unknown>;
  created_at: Date;
}

export interface AuditEventFilters {
  entityType?: AuditEntityType;
  entityId?: number;
  createdAfter?: Date;
  createdBefore?: Date;
}

const COLUMNS = `id::text as id, author_id, entity_type, entity_id, details, created_at`;

/** Reads of `audit_events`, newest first (GitLab's AuditEventsFinder orders by id, descending). */
@Injectable()
export class AuditEventQueries {
  constructor(private readonly db: DataSource) {}

  /**
   * A page, newest first, and the total: counted up to COUNT_LIMIT only, `null` past it (GitLab then
   * sends no `X-Total`), so a list never scans the whole table to count it; `hasNext` from one row
   * read past the page.
   */
  async list(
    f: AuditEventFilters,
    page: PageParams,
  ): Promise<{ rows: AuditEventRow[]; total: number | null; hasNext: boolean }> {
    const where: string[] = [];
    const params: unknown[] = [];
    const add = (sql: string, value: unknown) => {
      params.push(value);
      where.push(sql.replace('?', `$${params.length}`));
    };
    if (f.entityType) add('entity_type = ?', f.entityType);
    // GitLab's finder reads `entity_id` only together with `entity_type`.
    if (f.entityType && f.entityId !== undefined) add('entity_id = ?', f.entityId);
    // Both bounds include the instant given (GitLab's `created_at >=` and `<=`).
    if (f.createdAfter) add('created_at >= ?', f.createdAfter);
    if (f.createdBefore) add('created_at <= ?', f.createdBefore);
    const cond = where.length ? `where ${where.join(' and ')}` : '';
    const { total } = await oneRow<{ total: number }>(
      this.db,
      `select count(*)::int as total from (select 1 from audit_events ${cond} limit ${COUNT_LIMIT + 1}) c`,
      params,
    );
    const found = await rows<AuditEventRow>(
      this.db,
      `select ${COLUMNS} from audit_events ${cond} order by audit_events.id desc offset $${params.length + 1} limit $${params.length + 2}`,
      [...params, page.offset, page.perPage + 1],
    );
    return {
      rows: found.slice(0, page.perPage),
      total: total > COUNT_LIMIT ? null : total,
      hasNext: found.length > page.perPage,
    };
  }

  /** One entry, in `entity` when given; `404 Audit Event Not Found` otherwise. */
  async get(id: string, entity?: { type: AuditEntityType; id: number }): Promise<AuditEventRow> {
    const row = /^\d{1,18}$/.test(id)
      ? await firstRow<AuditEventRow>(
          this.db,
          `select ${COLUMNS} from audit_events where id = $1::bigint
             and ($2::text is null or (entity_type = $2 and entity_id = $3))`,
          [id, entity?.type ?? null, entity?.id ?? null],
        )
      : undefined;
    if (!row) throw new NotFound('Audit Event');
    return row;
  }
}
