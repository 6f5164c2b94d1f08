import { Conflict, Invalid, oneRow, UniqueViolation } from '@app/platform';
import type { DataSource } from 'typeorm';

/**
 * POST and PUT /users: GitLab answers a taken e-mail, then a taken username, with 409 and a sentence,
 * and it checks both before it reports any other validation error (`conflict!` runs ahead of
 * `render_validation_error!`). The look-up runs only once the write has failed, so a good request
 * costs nothing more; `userId` is the user being updated, whose own addresses are no conflict.
 */
export async function rethrowUserConflict(
  err: unknown,
  db: DataSource,
  wanted: { userId?: number; email?: string; username?: string },
): Promise<never> {
  if (err instanceof Invalid || err instanceof UniqueViolation) {
    const taken = await oneRow<{ email: boolean; username: boolean }>(
      db,
      `select exists (select 1 from user_email_claims where email_lower = lower($2) and user_id is distinct from $1) as email,
              exists (select 1 from users where lower(username) = lower($3) and id is distinct from $1) as username`,
      [wanted.userId ?? null, wanted.email ?? null, wanted.username ?? null],
    );
    if (taken.email) throw new Conflict('Email has already been taken');
    if (taken.username) throw new Conflict('Username has already been taken');
  }
  if (err instanceof UniqueViolation) {
    if (err.constraint === 'user_email_claims_pkey') throw new Conflict('Email has already been taken');
    if (err.constraint === 'users_username_key') throw new Conflict('Username has already been taken');
    if (err.constraint === 'user_identities_extern_uid_key')
      throw new Invalid({ extern_uid: ['has already been taken'] });
  }
  // A top-level group holding the path arrives as the groups context's `Invalid` on `username`
  // (GitLab's User#namespace_uniq): it is thrown on, after the 409s above.
  throw err;
}
