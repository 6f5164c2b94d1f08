import { rows } from '@app/platform';
import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';

/**
 * The head of each ref's recorded chain (`recorded_refs`, projected from `RepositoryPushed`): where
 * the last recorded update of the ref left it. A ref absent from it has never been recorded (a fork's
 * refs, refs from before the table was kept): its head is unknown.
 */
@Injectable()
export class RecordedRefs {
  constructor(private readonly db: DataSource) {}

  /** The heads of `refs` in the project; `db` inside a transaction that must see its own writes. */
  async heads(
    projectId: number,
    refs: readonly string[],
    db: DataSource | EntityManager = this.db,
  ): Promise<Map<string, string>> {
    if (!refs.length) return new Map();
    const found = await rows<{ ref: string; sha: string }>(
      db,
      `select ref, sha from recorded_refs where project_id = $1 and ref = any($2::text[])`,
      [projectId, [...refs]],
    );
    return new Map(found.map((r) => [r.ref, r.sha]));
  }
}
