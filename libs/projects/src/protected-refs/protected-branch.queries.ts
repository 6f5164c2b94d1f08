import { firstRow, NotFound, oneRow, rows, type PageParams } from '@app/platform';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { ProtectedBranchRule } from './protected-branch';

const COLUMNS = `name, push_access_level as "pushAccessLevel", merge_access_level as "mergeAccessLevel",
                 allow_force_push as "allowForcePush"`;

/** A project's protected-branch rules, from the `protected_branches` read model. */
@Injectable()
export class ProtectedBranchQueries {
  constructor(private readonly db: DataSource) {}

  /**
   * Every rule of the project in creation order: one statement on the table's primary key. What the
   * pre-receive gate (`ProtectedBranchPolicy.refusal`) and the Branch entity (`branchFlags`) take.
   */
  forProject(projectId: number): Promise<ProtectedBranchRule[]> {
    return rows<ProtectedBranchRule>(
      this.db,
      `select ${COLUMNS} from protected_branches where project_id = $1 order by position`,
      [projectId],
    );
  }

  /** `GET /projects/:id/protected_branches`, a page at a time. */
  async page(projectId: number, page: PageParams): Promise<{ rows: ProtectedBranchRule[]; total: number }> {
    const { total } = await oneRow<{ total: number }>(
      this.db,
      `select count(*)::int as total from protected_branches where project_id = $1`,
      [projectId],
    );
    const found = await rows<ProtectedBranchRule>(
      this.db,
      `select ${COLUMNS} from protected_branches where project_id = $1 order by position offset $2 limit $3`,
      [projectId, page.offset, page.perPage],
    );
    return { rows: found, total };
  }

  /** The rule of this exact name (a wildcard is looked up as written); GitLab's `find_by!` miss: `404 Not found`. */
  async get(projectId: number, name: string): Promise<ProtectedBranchRule> {
    const rule = await firstRow<ProtectedBranchRule>(
      this.db,
      `select ${COLUMNS} from protected_branches where project_id = $1 and name = $2`,
      [projectId, name],
    );
    if (!rule) throw new NotFound();
    return rule;
  }
}
