import { Conflict, Invalid, UniqueViolation } from '@app/platform';
import type { UserQueries } from '../queries/user.queries';

/**
 * POST and PUT /users: GitLab answers a taken e-mail, then a taken username, with 409 and a sentence,
 * and it checks both before it reports any other validation error (`conflict!` runs ahead of
 * `render_validation_error!`). The look-up runs only once the write has failed, so a good request
 * costs nothing more; `userId` is the user being updated, whose own addresses are no conflict.
 */
export async function rethrowUserConflict(
  err: unknown,
  users: UserQueries,
  wanted: { userId?: number; email?: string; username?: string },
): Promise<never> {
  if (err instanceof Invalid || err instanceof UniqueViolation) {
    const taken = await users.taken(wanted);
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
