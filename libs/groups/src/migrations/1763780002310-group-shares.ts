import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A group shared with another group (GitLab's `group_group_links`): the members of `shared_with_group_id`
 * get up to `group_access` in `shared_group_id`, its subgroups and their projects. A link goes with
 * either group.
 */
export class GroupShares1763780002310 implements MigrationInterface {
  name = 'GroupShares1763780002310';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      create table group_group_links (
        shared_group_id int not null references namespaces (id) on delete cascade,
        shared_with_group_id int not null references namespaces (id) on delete cascade,
        group_access int not null,
        expires_at date,
        created_at timestamptz not null,
        primary key (shared_group_id, shared_with_group_id)
      )`);
    await q.query(
      `create index group_group_links_shared_with_idx on group_group_links (shared_with_group_id, shared_group_id)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`drop table group_group_links`);
  }
}
