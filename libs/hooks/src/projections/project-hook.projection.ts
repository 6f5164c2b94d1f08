import { dispatch, handledTypes, type EventHandlers, type Projector, type Recorded } from '@app/platform';
import { projectExistsSql } from '@app/projects';
import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { HookRecordSettings, ProjectHookEvent } from '../domain/project-hook';

const columns = (s: HookRecordSettings) => [
  s.url,
  s.events.pushEvents,
  s.events.tagPushEvents,
  s.events.issuesEvents,
  s.events.mergeRequestsEvents,
  s.events.noteEvents,
  s.events.jobEvents,
  s.events.pipelineEvents,
  s.events.wikiPageEvents,
  s.enableSslVerification,
  s.pushEventsBranchFilter ?? null,
];

const on: EventHandlers<ProjectHookEvent> = {
  ProjectHookAdded: async ({ data: d }, db) => {
    // A hook added by a command racing the project's deletion finds no project: nothing to keep.
    await db.query(
      `insert into project_hooks (id, project_id, url, push_events, tag_push_events, issues_events, merge_requests_events, note_events,
             job_events, pipeline_events, wiki_page_events, enable_ssl_verification, push_events_branch_filter, created_at)
           select $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14 where ${projectExistsSql('$2')}`,
      [d.hookId, d.projectId, ...columns(d), d.at],
    );
  },
  ProjectHookUpdated: async ({ data: d }, db) => {
    await db.query(
      `update project_hooks set url = $2, push_events = $3, tag_push_events = $4, issues_events = $5, merge_requests_events = $6,
             note_events = $7, job_events = $8, pipeline_events = $9, wiki_page_events = $10, enable_ssl_verification = $11,
             push_events_branch_filter = $12 where id = $1`,
      [d.hookId, ...columns(d.settings)],
    );
  },
  ProjectHookRemoved: async ({ data: d }, db) => {
    await db.query(`delete from project_hooks where id = $1`, [d.hookId]);
  },
  // Keyed on the hook in the event's data, not its stream, wherever deliveries are appended.
  ProjectHookDelivered: async (e, db) => {
    const d = e.data;
    // The global position orders attempts and keeps a replay from writing a row twice.
    await db.query(
      `insert into project_hook_deliveries (position, hook_id, event_uuid, event, url, attempt, response_status, error, duration_ms, created_at, skipped)
           select $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11 where exists (select 1 from project_hooks where id = $2)`,
      [
        e.globalPosition,
        d.hookId,
        d.eventUuid,
        d.event,
        d.url,
        d.attempt,
        d.responseStatus,
        d.error,
        d.durationMs,
        d.at,
        d.skipped ?? false,
      ],
    );
  },
};

/** `project_hooks` and their delivery log; a deleted project's hooks go with it (on delete cascade), a hook's log with the hook. */
@Injectable()
export class ProjectHookProjection implements Projector<ProjectHookEvent> {
  readonly name = 'project_hooks';
  readonly tables = ['project_hooks', 'project_hook_deliveries'];
  readonly eventTypes = handledTypes(on);

  apply(e: Recorded<ProjectHookEvent>, db: EntityManager): Promise<void> {
    return dispatch(on, e, db);
  }
}
