import type { MigrationInterface, QueryRunner } from 'typeorm';

/** A user's status (`/user/status`): at most one a user, gone with the user. */
export class UserStatuses1763780002610 implements MigrationInterface {
  name = 'UserStatuses1763780002610';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      create table user_statuses (
        user_id int primary key references users (id) on delete cascade,
        emoji text not null,
        message text,
        availability text not null,
        clear_status_at timestamptz,
        updated_at timestamptz not null
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`drop table user_statuses`);
  }
}
