import { oneRow, rows, type Actor, type PageParams } from '@app/platform';
import { userJoinSql } from '@app/users';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { projectsVisibleSql } from '../access/project-access';
import type { PushData } from './activity';

/** A row of `activity_events` with its author's UserBasic columns. */
export interface ActivityRow {
  project_id: number;
  action_name: string;
  target_id: number | null;
  target_type: string | null;
  target_title: string | null;
  author_id: number;
  created_at: Date;
  push_data: PushData | null;
  author_name: string;
  author_username: string;
  author_state: string;
  author_avatar: string | null;
  author_email: string;
}

/** GitLab's EventsFinder parameters, checked by the DTO. */
export interface ActivityFilters {
  action?: string;
  /** The stored class name (`Issue`, `MergeRequest`...). */
  targetType?: string;
  /** `YYYY-MM-DD`: events created before that day began. */
  before?: string;
  /** `YYYY-MM-DD`: events created after that day ended. */
  after?: string;
  sort: 'asc' | 'desc';
}

/** Whose events: one author's (GET /events, /users/:id/events) or one project's. */
export type ActivitySource = { authorId: number } | { projectId: number };

@Injectable()
export class ActivityQueries {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * One page of a source's events, newest first unless `sort` says asc (GitLab 10.x orders by
   * `created_at` only; the stored event's position breaks ties so pages never overlap). An author's
   * events are those of the projects the caller can see (EventsFinder#by_current_user_access); a
   * project's were checked by the caller (`getVisible`) before. Visibility is in the `where`, so
   * `X-Total` counts what the caller may read.
   */
  async list(
    source: ActivitySource,
    actor: Actor | undefined,
    f: ActivityFilters,
    page: PageParams,
  ): Promise<{ rows: ActivityRow[]; total: number }> {
    const params: unknown[] = [];
    const where: string[] = [];
    if ('authorId' in source) {
      where.push(`e.author_id = $${params.push(source.authorId)}`);
      // The caller's id is a parameter only where the rule reads it (not for anonymous callers or administrators).
      const uid = `$${params.length + 1}::int`;
      const visible = projectsVisibleSql('p', actor, uid);
      if (visible.includes(uid)) params.push(actor?.id ?? null);
      where.push(`exists (select 1 from projects p where p.id = e.project_id and ${visible})`);
    } else where.push(`e.project_id = $${params.push(source.projectId)}`);
    if (f.action) where.push(`e.action = $${params.push(f.action)}`);
    if (f.targetType) where.push(`e.target_type = $${params.push(f.targetType)}`);
    // GitLab: `created_at < before.beginning_of_day` and `created_at > after.end_of_day` (UTC).
    if (f.before) where.push(`e.created_at < ($${params.push(f.before)}::date)::timestamp at time zone 'UTC'`);
    if (f.after) where.push(`e.created_at >= ($${params.push(f.after)}::date + 1)::timestamp at time zone 'UTC'`);
    const filter = `from activity_events e where ${where.join(' and ')}`;
    // Without a filter on the rows' own columns, the total is a sum of the counts kept per author,
    // project and action (the same `where`, read on `activity_event_counts`): a busy author's list
    // would otherwise count every row for its X-Total.
    const counted = !f.targetType && !f.before && !f.after;
    const { total } = await oneRow<{ total: number }>(
      this.dataSource,
      counted
        ? `select coalesce(sum(e.events), 0)::int as total from activity_event_counts e where ${where.join(' and ')}`
        : `select count(*)::int as total ${filter}`,
      params,
    );
    const dir = f.sort === 'asc' ? 'asc' : 'desc';
    const found = await rows<ActivityRow>(
      this.dataSource,
      `select e.project_id, e.action_name, e.target_id, e.target_type, e.target_title, e.author_id, e.created_at,
              e.push_data, u.name as author_name, u.username as author_username, u.state as author_state,
              u.avatar as author_avatar, u.email as author_email
         from (select e.* ${filter}
                order by e.created_at ${dir}, e.position ${dir}, e.seq ${dir}
                offset $${params.length + 1} limit $${params.length + 2}) e
         ${userJoinSql('u', 'e.author_id')}
        order by e.created_at ${dir}, e.position ${dir}, e.seq ${dir}`,
      [...params, page.offset, page.perPage],
    );
    return { rows: found, total };
  }
}
