import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Namespaces (personal and groups), their ancestry, and memberships of groups and projects. */
export class Groups1763780000300 implements MigrationInterface {
  name = 'Groups1763780000300';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      create table namespaces (
        id int primary key,
        kind text not null,
        name text not null,
        path text not null,
        parent_id int references namespaces (id) on delete cascade,
        full_path text not null,
        full_name text not null,
        owner_id int,
        description text not null default '',
        visibility text not null,
        lfs_enabled boolean not null default true,
        request_access_enabled boolean not null default false,
        created_at timestamptz not null,
        updated_at timestamptz not null
      )`);
    // Paths are unique among siblings; top-level paths are shared by users and groups.
    await q.query(`create unique index namespaces_path_key on namespaces (coalesce(parent_id, 0), lower(path))`);
    await q.query(`create unique index namespaces_full_path_key on namespaces (lower(full_path))`);
    await q.query(`create unique index namespaces_owner_key on namespaces (owner_id) where kind = 'user'`);
    await q.query(`create index namespaces_parent_idx on namespaces (parent_id, lower(name))`);
    await q.query(`create index namespaces_visibility_idx on namespaces (kind, visibility)`);
    // Every (ancestor, descendant) pair, self included at depth 0: inherited membership in one join.
    await q.query(`
      create table namespace_closure (
        ancestor_id int not null references namespaces (id) on delete cascade,
        descendant_id int not null references namespaces (id) on delete cascade,
        depth int not null,
        primary key (ancestor_id, descendant_id)
      )`);
    await q.query(`create index namespace_closure_descendant_idx on namespace_closure (descendant_id, ancestor_id)`);
    await q.query(`
      create table members (
        source_type text not null,
        source_id int not null,
        user_id int not null references users (id) on delete cascade,
        access_level int not null,
        expires_at date,
        created_by int,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        primary key (source_type, source_id, user_id)
      )`);
    await q.query(`create index members_user_idx on members (user_id, source_type, source_id)`);
    await q.query(`
      create table group_custom_attributes (
        group_id int not null references namespaces (id) on delete cascade,
        key text not null,
        value text not null,
        primary key (group_id, key)
      )`);
    await q.query(`create index group_custom_attributes_key_value_idx on group_custom_attributes (key, value)`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['group_custom_attributes', 'members', 'namespace_closure', 'namespaces'])
      await q.query(`drop table ${t}`);
  }
}
