import { firstRow, rows, type PageParams } from '@app/platform';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { LinkType } from './release-link';

/** A tag's release as the Tag entity shows it (10.x's Release): the description is null when the Releases API was given none. */
export interface TagReleaseRow {
  tagName: string;
  description: string | null;
}

/** A release as the Releases API shows it. `name` and `releasedAt` are filled for releases 10.x's route made. */
export interface ReleaseRow {
  tagName: string;
  name: string;
  description: string | null;
  createdAt: Date;
  releasedAt: Date;
  /** Null for releases 10.x's route made (GitLab's own are authorless too) and after the author's removal is not tracked. */
  authorId: number | null;
}

export interface ReleaseLinkRow {
  id: number;
  tagName: string;
  name: string;
  url: string;
  filepath: string | null;
  linkType: LinkType;
  createdAt: Date;
}

export type ReleaseOrder = { orderBy: 'released_at' | 'created_at'; sort: 'asc' | 'desc' };

const RELEASE_COLUMNS = `tag as "tagName", coalesce(name, tag) as name, description, created_at as "createdAt",
  coalesce(released_at, created_at) as "releasedAt", author_id as "authorId"`;

const LINK_COLUMNS = `id, tag as "tagName", name, url, filepath, link_type as "linkType", created_at as "createdAt"`;

/** Releases and their asset links, from the `releases` and `release_links` read models. */
@Injectable()
export class ReleaseQueries {
  constructor(private readonly db: DataSource) {}

  /**
   * The releases of these tags of the project, by tag name: one statement on the primary key for a
   * whole page of tags (GitLab's Tag entity asks `project.releases.find_by(tag:)` once per tag).
   */
  async forTags(projectId: number, tagNames: readonly string[]): Promise<Map<string, TagReleaseRow>> {
    if (!tagNames.length) return new Map();
    const found = await rows<TagReleaseRow>(
      this.db,
      `select tag as "tagName", description from releases where project_id = $1 and tag = any($2::text[])`,
      [projectId, [...tagNames]],
    );
    return new Map(found.map((r) => [r.tagName, r]));
  }

  /**
   * One page of the project's releases (GitLab's ReleasesFinder: `order_by` released_at, the default,
   * or created_at; `sort` desc, the default, or asc), ties broken by tag name in the same direction.
   */
  async page(projectId: number, order: ReleaseOrder, page: PageParams): Promise<{ rows: ReleaseRow[]; total: number }> {
    const column = order.orderBy === 'created_at' ? 'created_at' : 'coalesce(released_at, created_at)';
    const dir = order.sort === 'asc' ? 'asc' : 'desc';
    const found = await rows<ReleaseRow & { total: string }>(
      this.db,
      `select ${RELEASE_COLUMNS}, count(*) over () as total from releases where project_id = $1
       order by ${column} ${dir}, tag ${dir} limit $2 offset $3`,
      [projectId, page.perPage, page.offset],
    );
    const total = found.length ? Number(found[0].total) : await this.count(projectId);
    return { rows: found.map(({ total: _total, ...r }) => r), total };
  }

  private async count(projectId: number): Promise<number> {
    const row = await firstRow<{ n: string }>(this.db, `select count(*) as n from releases where project_id = $1`, [
      projectId,
    ]);
    return Number(row?.n ?? 0);
  }

  async find(projectId: number, tagName: string): Promise<ReleaseRow | undefined> {
    return firstRow<ReleaseRow>(this.db, `select ${RELEASE_COLUMNS} from releases where project_id = $1 and tag = $2`, [
      projectId,
      tagName,
    ]);
  }

  /** The links of these releases, each release's newest first (GitLab's `sorted_links`: created_at desc). */
  async linksOf(projectId: number, tagNames: readonly string[]): Promise<Map<string, ReleaseLinkRow[]>> {
    const byTag = new Map<string, ReleaseLinkRow[]>(tagNames.map((t) => [t, []]));
    if (!tagNames.length) return byTag;
    const found = await rows<ReleaseLinkRow>(
      this.db,
      `select ${LINK_COLUMNS} from release_links where project_id = $1 and tag = any($2::text[])
       order by created_at desc, id desc`,
      [projectId, [...tagNames]],
    );
    for (const link of found) byTag.get(link.tagName)?.push(link);
    return byTag;
  }

  async link(projectId: number, tagName: string, linkId: number): Promise<ReleaseLinkRow | undefined> {
    return firstRow<ReleaseLinkRow>(
      this.db,
      `select ${LINK_COLUMNS} from release_links where project_id = $1 and tag = $2 and id = $3`,
      [projectId, tagName, linkId],
    );
  }
}
