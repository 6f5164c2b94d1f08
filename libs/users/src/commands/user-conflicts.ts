import { Conflict, Invalid, UniqueViolation } from '@app/platform';

/** POST and PUT /users: GitLab answers a taken e-mail or username with 409 and a sentence. */
export function rethrowUserConflict(err: unknown): never {
  if (err instanceof UniqueViolation) {
    if (err.constraint === 'user_email_claims_pkey') throw new Conflict('Email has already been taken');
    if (err.constraint === 'users_username_key') throw new Conflict('Username has already been taken');
    if (err.constraint === 'user_identities_extern_uid_key') throw new Invalid({ extern_uid: ['has already been taken'] });
  }
  throw err;
}
