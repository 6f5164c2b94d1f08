import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Sign-ins to the web pages: a random secret in the browser's cookie, only its SHA-256 digest here,
 * so every process sees a session and a sign-out anywhere ends it. Not a read model (no event makes
 * one: a sign-in changes nothing of the domain), so a projection rebuild leaves it alone; gone with
 * the user, and with the access token it was made from.
 */
export class WebSessions1763780004000 implements MigrationInterface {
  name = 'WebSessions1763780004000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      create table web_sessions (
        digest text primary key,
        user_id int not null references users (id) on delete cascade,
        token_id int references access_tokens (id) on delete cascade,
        created_at timestamptz not null,
        expires_at timestamptz not null
      )`);
    await q.query(`create index web_sessions_expires_idx on web_sessions (expires_at)`);
    await q.query(`create index web_sessions_user_idx on web_sessions (user_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`drop table web_sessions`);
  }
}
