import { firstRow, NotFound, oneRow, rows, type PageParams } from '@app/platform';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { ProtectedTagRule } from './protected-tag';

const COLUMNS = `name, create_access_level as "createAccessLevel"`;

/** A project's protected-tag rules, from the `protected_tags` read model. */
@Injectable()
export class ProtectedTagQueries {
  constructor(private readonly db: DataSource) {}

  /** Every rule of the project in creation order: what the pre-receive gate (`ProtectedTagPolicy.refusal`) takes. */
  forProject(projectId: number): Promise<ProtectedTagRule[]> {
    return rows<ProtectedTagRule>(
      this.db,
      `select ${COLUMNS} from protected_tags where project_id = $1 order by position`,
      [projectId],
    );
  }

  /** `GET /projects/:id/protected_tags`, a page at a time. */
  async page(projectId: number, page: PageParams): Promise<{ rows: ProtectedTagRule[]; total: number }> {
    const { total } = await oneRow<{ total: number }>(
      this.db,
      `select count(*)::int as total from protected_tags where project_id = $1`,
      [projectId],
    );
    const found = await rows<ProtectedTagRule>(
      this.db,
      `select ${COLUMNS} from protected_tags where project_id = $1 order by position offset $2 limit $3`,
      [projectId, page.offset, page.perPage],
    );
    return { rows: found, total };
  }

  /** The rule of this exact name (a wildcard is looked up as written); GitLab's `find_by!` miss: `404 Not found`. */
  async get(projectId: number, name: string): Promise<ProtectedTagRule> {
    const rule = await firstRow<ProtectedTagRule>(
      this.db,
      `select ${COLUMNS} from protected_tags where project_id = $1 and name = $2`,
      [projectId, name],
    );
    if (!rule) throw new NotFound();
    return rule;
  }
}
