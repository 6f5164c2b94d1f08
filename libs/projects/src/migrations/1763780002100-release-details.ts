import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The Releases API (GitLab 11.7) on the same `releases` rows as 10.x's tag release notes: a name, the
 * release date and the author (null on rows 10.x's route made: the name reads as the tag's, the date
 * as the creation's), a description that may be absent, and the releases' asset links.
 */
export class ReleaseDetails1763780002100 implements MigrationInterface {
  name = 'ReleaseDetails1763780002100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      alter table releases
        add column name text,
        add column released_at timestamptz,
        add column author_id int,
        alter column description drop not null`);
    // The list's default order (released_at desc) reads this index.
    await q.query(
      `create index releases_project_released_at on releases (project_id, (coalesce(released_at, created_at)))`,
    );
    await q.query(`create sequence release_link_id_seq`);
    // A release's deletion takes its links by the cascade (GitLab's `has_many :links, dependent: :destroy`).
    await q.query(`
      create table release_links (
        id int primary key,
        project_id int not null,
        tag text not null,
        name text not null,
        url text not null,
        filepath text,
        link_type text not null default 'other',
        created_at timestamptz not null,
        updated_at timestamptz not null,
        foreign key (project_id, tag) references releases (project_id, tag) on delete cascade
      )`);
    await q.query(`create index release_links_release on release_links (project_id, tag, created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`drop table release_links`);
    await q.query(`drop sequence release_link_id_seq`);
    await q.query(`drop index releases_project_released_at`);
    await q.query(`delete from releases where description is null`);
    await q.query(`
      alter table releases
        drop column name,
        drop column released_at,
        drop column author_id,
        alter column description set not null`);
  }
}
