import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The audit log (libs/audit), a projection of every context's events:
 * - `audit_events`: one row per write event and changed value, keyed by the event's global position
 *   (`id` = position * 100 + the value's ordinal), so a rebuild gives the same rows and ids;
 * - `audit_entities`: the audit projector's own memory of what it needs to name things and to tell a
 *   change's old value (users, groups, projects, personal namespaces and live tokens: one row each,
 *   removed with the thing). Both are emptied and refilled by `lode projections rebuild`.
 */
export class AuditEvents1763780003300 implements MigrationInterface {
  name = 'AuditEvents1763780003300';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      create table audit_events (
        id bigint primary key,
        global_position bigint not null,
        author_id int not null,
        entity_type text not null,
        entity_id int not null,
        details jsonb not null,
        created_at timestamptz not null
      )`);
    await q.query(`create index audit_events_entity on audit_events (entity_type, entity_id, id)`);
    await q.query(`create index audit_events_created_at on audit_events (created_at)`);
    await q.query(`
      create table audit_entities (
        entity_type text not null,
        entity_id int not null,
        path text,
        name text,
        state jsonb not null default '{}',
        primary key (entity_type, entity_id)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`drop table audit_entities`);
    await q.query(`drop table audit_events`);
  }
}
