import { rows } from '@app/platform';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { TagRelease } from './release';

/** Release notes of tags, from the `releases` read model. */
@Injectable()
export class ReleaseQueries {
  constructor(private readonly db: DataSource) {}

  /**
   * The releases of these tags of the project, by tag name: one statement on the primary key for a
   * whole page of tags (GitLab's Tag entity asks `project.releases.find_by(tag:)` once per tag).
   */
  async forTags(projectId: number, tagNames: readonly string[]): Promise<Map<string, TagRelease>> {
    if (!tagNames.length) return new Map();
    const found = await rows<TagRelease>(
      this.db,
      `select tag as "tagName", description from releases where project_id = $1 and tag = any($2::text[])`,
      [projectId, [...tagNames]],
    );
    return new Map(found.map((r) => [r.tagName, r]));
  }
}
