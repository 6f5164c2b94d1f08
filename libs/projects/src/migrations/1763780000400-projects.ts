import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Projects and what hangs on them: stars, shares with groups, custom attributes. */
export class Projects1763780000400 implements MigrationInterface {
  name = 'Projects1763780000400';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`create sequence project_id_seq`);
    await q.query(`create sequence project_group_link_id_seq`);
    await q.query(`
      create table projects (
        id int primary key,
        namespace_id int not null references namespaces (id) on delete cascade,
        name text not null,
        path text not null,
        description text,
        default_branch text,
        visibility text not null,
        archived boolean not null default false,
        creator_id int,
        issues_enabled boolean not null,
        merge_requests_enabled boolean not null,
        wiki_enabled boolean not null,
        jobs_enabled boolean not null,
        snippets_enabled boolean not null,
        container_registry_enabled boolean not null,
        shared_runners_enabled boolean not null,
        public_jobs boolean not null,
        lfs_enabled boolean not null,
        request_access_enabled boolean not null,
        only_allow_merge_if_pipeline_succeeds boolean not null,
        only_allow_merge_if_all_discussions_are_resolved boolean not null,
        resolve_outdated_diff_discussions boolean not null,
        printing_merge_request_link_enabled boolean not null,
        ci_config_path text,
        import_url text,
        import_status text not null default 'none',
        import_error text,
        tag_list text[] not null default '{}',
        forked_from_id int,
        star_count int not null default 0,
        forks_count int not null default 0,
        runners_token text not null,
        repository_size bigint not null default 0,
        commit_count int not null default 0,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        last_activity_at timestamptz not null
      )`);
    await q.query(`create unique index projects_path_key on projects (namespace_id, lower(path))`);
    await q.query(`create unique index projects_name_key on projects (namespace_id, lower(name))`);
    await q.query(`create index projects_visibility_idx on projects (visibility, id)`);
    await q.query(`create index projects_created_at_idx on projects (created_at, id)`);
    await q.query(`create index projects_last_activity_idx on projects (last_activity_at, id)`);
    await q.query(
      `create index projects_forked_from_idx on projects (forked_from_id) where forked_from_id is not null`,
    );
    await q.query(`create index projects_creator_idx on projects (creator_id)`);
    await q.query(`
      create table project_stars (
        project_id int not null references projects (id) on delete cascade,
        user_id int not null references users (id) on delete cascade,
        created_at timestamptz not null,
        primary key (project_id, user_id)
      )`);
    await q.query(`create index project_stars_user_idx on project_stars (user_id, project_id)`);
    await q.query(`
      create table project_group_links (
        id int primary key,
        project_id int not null references projects (id) on delete cascade,
        group_id int not null references namespaces (id) on delete cascade,
        group_access int not null,
        expires_at date,
        created_at timestamptz not null,
        constraint project_group_links_project_group_key unique (project_id, group_id)
      )`);
    await q.query(`create index project_group_links_group_idx on project_group_links (group_id, project_id)`);
    await q.query(`
      create table project_custom_attributes (
        project_id int not null references projects (id) on delete cascade,
        key text not null,
        value text not null,
        primary key (project_id, key)
      )`);
    await q.query(`create index project_custom_attributes_key_value_idx on project_custom_attributes (key, value)`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['project_custom_attributes', 'project_group_links', 'project_stars', 'projects'])
      await q.query(`drop table ${t}`);
    await q.query(`drop sequence project_group_link_id_seq`);
    await q.query(`drop sequence project_id_seq`);
  }
}
