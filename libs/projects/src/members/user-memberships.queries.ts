import { userMembershipsSql } from '@app/groups';
import { oneRow, rows, type PageParams } from '@app/platform';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

/** One of a user's direct memberships, as GitLab's Membership entity shows it. */
export interface UserMembershipRow {
  sourceId: number;
  sourceType: 'namespace' | 'project';
  sourceName: string;
  accessLevel: number;
}

/**
 * A user's memberships of groups and projects (`GET /users/:id/memberships`, GitLab 12.8): the rows
 * are groups' (`members`), a group's name too; a project's name is this context's.
 */
@Injectable()
export class UserMembershipQueries {
  constructor(private readonly dataSource: DataSource) {}

  async list(
    userId: number,
    type: 'namespace' | 'project' | undefined,
    page: PageParams,
  ): Promise<{ rows: UserMembershipRow[]; total: number }> {
    const memberships = userMembershipsSql(
      '$1::int',
      type,
      'p.name as project_name',
      (projectIdSql) => `left join projects p on p.id = ${projectIdSql}`,
    );
    const { total } = await oneRow<{ total: number }>(
      this.dataSource,
      `select count(*)::int as total from (${memberships}) x`,
      [userId],
    );
    const found = await rows<{
      source_id: number;
      source_type: 'namespace' | 'project';
      access_level: number;
      group_name: string | null;
      project_name: string | null;
    }>(
      this.dataSource,
      `select * from (${memberships}) x order by x.created_at, x.source_type, x.source_id limit $2 offset $3`,
      [userId, page.perPage, (page.page - 1) * page.perPage],
    );
    return {
      rows: found.map((r) => ({
        sourceId: r.source_id,
        sourceType: r.source_type,
        sourceName: (r.source_type === 'project' ? r.project_name : r.group_name) ?? '',
        accessLevel: r.access_level,
      })),
      total,
    };
  }
}
