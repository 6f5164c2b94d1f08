import { dispatch, handledTypes, type EventHandlers, type Projector, type Recorded } from '@app/platform';
import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { ReleaseStreamEvent } from './release-stream';

export const RELEASE_TABLES = ['releases', 'release_links'] as const;

type Projected = ReleaseStreamEvent;

const on: EventHandlers<Projected> = {
  ProjectReleaseCreated: async ({ data: d }, db) => {
    await db.query(
      `insert into releases (project_id, tag, description, name, released_at, author_id, created_at, updated_at)
       values ($1, $2, $3, $4, $5, $6, $7, $7)`,
      [d.projectId, d.tagName, d.description, d.name ?? null, d.releasedAt ?? null, d.authorId ?? null, d.at],
    );
  },
  ProjectReleaseUpdated: async ({ data: d }, db) => {
    await db.query(`update releases set description = $3, updated_at = $4 where project_id = $1 and tag = $2`, [
      d.projectId,
      d.tagName,
      d.description,
      d.at,
    ]);
  },
  ProjectReleaseChanged: async ({ data: d }, db) => {
    const c = d.changes;
    // `$n::text is null` cannot tell "not given" from "set to null", so each column says whether it changes.
    await db.query(
      `update releases set
         name = case when $3 then $4 else name end,
         description = case when $5 then $6 else description end,
         released_at = case when $7 then $8::timestamptz else released_at end,
         updated_at = $9
       where project_id = $1 and tag = $2`,
      [
        d.projectId,
        d.tagName,
        'name' in c,
        c.name ?? null,
        'description' in c,
        c.description ?? null,
        'releasedAt' in c,
        c.releasedAt ?? null,
        d.at,
      ],
    );
  },
  ProjectReleaseRemoved: async ({ data: d }, db) => {
    await db.query(`delete from releases where project_id = $1 and tag = $2`, [d.projectId, d.tagName]);
  },
  ProjectReleaseLinkAdded: async ({ data: d }, db) => {
    await db.query(
      `insert into release_links (id, project_id, tag, name, url, filepath, link_type, created_at, updated_at)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $8)`,
      [d.linkId, d.projectId, d.tagName, d.name, d.url, d.filepath, d.linkType, d.at],
    );
  },
  ProjectReleaseLinkChanged: async ({ data: d }, db) => {
    await db.query(
      `update release_links set name = $2, url = $3, filepath = $4, link_type = $5, updated_at = $6 where id = $1`,
      [d.linkId, d.name, d.url, d.filepath, d.linkType, d.at],
    );
  },
  ProjectReleaseLinkRemoved: async ({ data: d }, db) => {
    await db.query(`delete from release_links where id = $1`, [d.linkId]);
  },
};

/**
 * Releases (10.x's tag release notes and the Releases API's, one row per tag) and their asset links.
 * A project's deletion takes them by the foreign keys' cascade, a release's deletion its links.
 */
@Injectable()
export class ReleaseProjection implements Projector<Projected> {
  readonly name = 'releases';
  readonly tables = RELEASE_TABLES;
  readonly eventTypes = handledTypes(on);

  apply(e: Recorded<Projected>, db: EntityManager): Promise<void> {
    return dispatch(on, e, db);
  }
}
