import {
  dispatch,
  firstRow,
  handledTypes,
  type EventHandlers,
  type Projector,
  type ProjectorReplay,
  type Recorded,
} from '@app/platform';
import { userJoinSql } from '@app/users';
import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { ProjectForkEvent } from '../forks/fork';
import type { ProjectMemberEvent } from '../members/project-members';
import type { RepositoryPushedData } from '../pushes/repository-push';
import type { ProjectLifeEvent } from '../projects/project';
import { pushEntry, type ActivityEntry } from './activity';

export const ACTIVITY_TABLES = ['activity_events', 'activity_event_counts'] as const;

type Projected =
  | Extract<ProjectLifeEvent, { type: 'ProjectCreated' }>
  | Extract<ProjectForkEvent, { type: 'ProjectForked' }>
  | Extract<ProjectMemberEvent, { type: 'ProjectMemberAdded' | 'ProjectMemberRemoved' }>
  | { type: 'RepositoryPushed'; data: RepositoryPushedData };

/**
 * One row per entry, keyed by the stored event (`position`) and the entry's place in it, so replaying
 * the events gives the same rows. Written only while the project and the author still exist (a push
 * recorded late by the reconciler may find its project gone), as GitLab's foreign keys would have it.
 * With `answered`, tells whether a row was written (an append's creation remembers it); without, it
 * asks for no answer, as a rebuild's writes should not (see PipelinedWrites).
 */
async function insert(
  db: EntityManager,
  e: Recorded<Projected>,
  projectId: number,
  authorId: number,
  entries: (ActivityEntry | null)[],
  at: string,
  answered = false,
): Promise<boolean> {
  const rows = entries.flatMap((x, seq) => (x ? [{ seq, ...x }] : []));
  if (!rows.length) return false;
  // The counts follow the rows actually written, so an event applied twice counts once.
  const counted = await db.query<unknown[]>(
    `with written as (
       insert into activity_events (position, seq, project_id, author_id, action, action_name, push_data, created_at)
       select $1, r.seq, p.id, u.id, r.action, r.action_name, r.push_data, $4
         from jsonb_to_recordset($5::jsonb) as r(seq int, action text, action_name text, push_data jsonb)
         join projects p on p.id = $2
         ${userJoinSql('u', '$3::int')}
       on conflict do nothing
       returning author_id, project_id, action)
     insert into activity_event_counts (author_id, project_id, action, events)
     select author_id, project_id, action, count(*) from written group by author_id, project_id, action
     on conflict (author_id, project_id, action) do update set events = activity_event_counts.events + excluded.events
     ${answered ? 'returning 1' : ''}`,
    [
      e.globalPosition,
      projectId,
      authorId,
      at,
      JSON.stringify(
        rows.map((r) => ({ seq: r.seq, action: r.action, action_name: r.actionName, push_data: r.pushData })),
      ),
    ],
  );
  return answered && counted.length > 0;
}

const created = (importUrl: string | null | undefined): ActivityEntry => ({
  action: 'created',
  // Event#created_project_action_name: a project made from an import URL (`external_import?`) was imported.
  actionName: importUrl ? 'imported' : 'created',
  pushData: null,
});

/**
 * The handlers; `createdInAppend`, when the events come as one append, holds the projects whose
 * `created` entry this append wrote, with its time: a creator's membership in the same append then
 * needs no read to know it came with the creation.
 */
const handlers = (createdInAppend?: Map<number, string>): EventHandlers<Projected> => ({
  ProjectCreated: async (e, db) => {
    const d = e.data;
    if (await insert(db, e, d.projectId, d.creatorId, [created(d.importUrl)], d.at, !!createdInAppend))
      createdInAppend?.set(d.projectId, d.at);
  },
  // GitLab's ForkService creates the fork through Projects::CreateService, which records `created`.
  ProjectForked: async (e, db) => {
    const d = e.data;
    if (await insert(db, e, d.projectId, d.creatorId, [created(null)], d.at, !!createdInAppend))
      createdInAppend?.set(d.projectId, d.at);
  },
  ProjectMemberAdded: async (e, db) => {
    const d = e.data;
    // ProjectMember#post_create_hook records `joined` unless the member is the project's owner: the
    // owner of a personal namespace, added with the project's creation (same command, same instant).
    const withCreation =
      createdInAppend?.get(d.projectId) === d.at ||
      (await firstRow(
        db,
        `select 1 from activity_events where project_id = $1 and action = 'created' and created_at = $2 limit 1`,
        [d.projectId, d.at],
      ));
    if (withCreation) return;
    await insert(db, e, d.projectId, d.userId, [{ action: 'joined', actionName: 'joined', pushData: null }], d.at);
  },
  ProjectMemberRemoved: async (e, db) => {
    const d = e.data;
    await insert(db, e, d.projectId, d.userId, [{ action: 'left', actionName: 'left', pushData: null }], d.at);
  },
  RepositoryPushed: async (e, db) => {
    const d = e.data;
    await insert(db, e, d.projectId, d.userId, d.updates.map(pushEntry), d.at);
  },
});

const on = handlers();

/** GitLab's contribution events (the Events API's read model): `activity_events` and their counts. */
@Injectable()
export class ActivityProjection implements Projector<Projected> {
  readonly name = 'activity';
  readonly tables = ACTIVITY_TABLES;
  readonly eventTypes = handledTypes(on);

  apply(e: Recorded<Projected>, db: EntityManager): Promise<void> {
    return dispatch(on, e, db);
  }

  appendBatch(): ProjectorReplay<Projected> {
    const inAppend = handlers(new Map());
    return { apply: (e, db) => dispatch(inAppend, e, db), finish: async () => {} };
  }
}
