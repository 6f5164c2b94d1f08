import { firstRow, rows } from '@app/platform';
import { namespaceJoinSql } from '@app/groups';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

/** A share of a project with a group, as POST /projects/:id/share answers it. */
export interface ProjectGroupLinkRow {
  id: number;
  project_id: number;
  group_id: number;
  group_access: number;
  expires_at: string | null;
}

export interface SharedGroup {
  project_id: number;
  group_id: number;
  group_name: string;
  group_access_level: number;
}

/** The shares of projects with groups (`project_group_links`, written by sharing/project-sharing.projection.ts). */
@Injectable()
export class ProjectSharingQueries {
  constructor(private readonly dataSource: DataSource) {}

  /** The groups each project is shared with, for many projects in one statement. */
  async sharedWith(projectIds: number[]): Promise<Map<number, SharedGroup[]>> {
    const map = new Map<number, SharedGroup[]>();
    if (!projectIds.length) return map;
    const links = await rows<SharedGroup>(
      this.dataSource,
      `select l.project_id, l.group_id, g.name as group_name, l.group_access as group_access_level
         from project_group_links l ${namespaceJoinSql('g', 'l.group_id')}
        where l.project_id = any($1::int[]) order by l.id`,
      [projectIds],
    );
    for (const r of links) map.set(r.project_id, [...(map.get(r.project_id) ?? []), r]);
    return map;
  }

  /** The project's share with the group (a share just made: it exists). */
  async groupLink(projectId: number, groupId: number): Promise<ProjectGroupLinkRow | undefined> {
    return firstRow<ProjectGroupLinkRow>(
      this.dataSource,
      `select id, project_id, group_id, group_access, to_char(expires_at, 'YYYY-MM-DD') as expires_at from project_group_links
        where project_id = $1 and group_id = $2`,
      [projectId, groupId],
    );
  }

  /** The groups the project is shared with (shares not expired), at `minAccess` or more when given. */
  async sharedGroupIds(projectId: number, minAccess?: number): Promise<number[]> {
    const found = await rows<{ group_id: number }>(
      this.dataSource,
      `select group_id from project_group_links
        where project_id = $1 and (expires_at is null or expires_at > current_date) and group_access >= coalesce($2::int, 0)`,
      [projectId, minAccess ?? null],
    );
    return found.map((r) => r.group_id);
  }
}
