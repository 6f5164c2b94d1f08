import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * GitLab's `events` (the Events API's contributions), a read model projected from the event store by
 * activity/activity.projection.ts. The platform's `events` is the store itself, hence the name.
 * A row is keyed by the stored event it came from (`position`, its global position) and its place
 * among the rows that event made (`seq`: a push makes one row per ref update), so a rebuild gives
 * back the same keys. Deleting a project or a user takes its rows by the cascade, as GitLab 10.x's
 * foreign keys on `events.project_id` and `events.author_id` do.
 */
export class ActivityEvents1763780003100 implements MigrationInterface {
  name = 'ActivityEvents1763780003100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      create table activity_events (
        position bigint not null,
        seq int not null,
        project_id int not null references projects (id) on delete cascade,
        author_id int not null references users (id) on delete cascade,
        action text not null,
        action_name text not null,
        target_type text,
        target_id int,
        target_title text,
        push_data jsonb,
        created_at timestamptz not null,
        primary key (position, seq)
      )`);
    // The lists' orders: a user's events (GET /events, /users/:id/events) and a project's, newest
    // first, read backwards along these without a sort.
    await q.query(`create index activity_events_author on activity_events (author_id, created_at, position, seq)`);
    await q.query(`create index activity_events_project on activity_events (project_id, created_at, position, seq)`);
    // How many events each author has in each project, by action: X-Total of a user's list is a sum
    // over the projects the caller can see, not a count of every row (1M rows by one author: 350 ms).
    await q.query(`
      create table activity_event_counts (
        author_id int not null references users (id) on delete cascade,
        project_id int not null references projects (id) on delete cascade,
        action text not null,
        events bigint not null,
        primary key (author_id, project_id, action)
      )`);
    await q.query(`create index activity_event_counts_project on activity_event_counts (project_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`drop table activity_event_counts`);
    await q.query(`drop table activity_events`);
  }
}
