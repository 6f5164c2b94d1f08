import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Sign-ins to the web pages: a random secret in the browser's cookie, only its SHA-256 digest here,
 * so every process sees a session and a sign-out anywhere ends it. Not a read model (no event makes
 * one: a sign-in changes nothing of the domain), so a projection rebuild leaves it alone. No foreign
 * keys to users or access_tokens, which are read models a rebuild truncates: a session whose user or
 * token is gone finds no row in `WebSessions.resolve`'s joins and is dead; expiry prunes its row.
 */
export class WebSessions1763780004000 implements MigrationInterface {
  name = 'WebSessions1763780004000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      create table web_sessions (
        digest text primary key,
        user_id int not null,
        token_id int,
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
