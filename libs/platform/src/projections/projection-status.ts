import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { firstRow } from '../database/sql';
import { ProjectionRegistry } from './projector';

/** Where the event log stands and what reads it, for operators (`lode check`). */
export interface ProjectionReport {
  /** The last event's position and when it was recorded; null on an empty log. */
  lastPosition: string | null;
  lastRecordedAt: Date | null;
  projectors: { name: string; tables: readonly string[] }[];
}

/**
 * Projections keep no position of their own: each runs inside the transaction that appends its
 * events, so a read model is never behind the log it was built from (a rebuild replays the whole log
 * in one transaction). What there is to report is the log's head and the projectors that follow it.
 */
@Injectable()
export class ProjectionStatus {
  constructor(
    private readonly dataSource: DataSource,
    private readonly projections: ProjectionRegistry,
  ) {}

  async report(): Promise<ProjectionReport> {
    const head = await firstRow<{ global_position: string; recorded_at: Date }>(
      this.dataSource,
      `select global_position, recorded_at from events order by global_position desc limit 1`,
    );
    return {
      lastPosition: head ? String(head.global_position) : null,
      lastRecordedAt: head?.recorded_at ?? null,
      projectors: this.projections.all().map((p) => ({ name: p.name, tables: p.tables })),
    };
  }
}
