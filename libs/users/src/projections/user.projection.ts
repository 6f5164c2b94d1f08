import { dispatch, handledTypes, type EventHandlers, type Projector, type Recorded } from '@app/platform';
import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { AccessTokenEvent } from '../domain/access-token';
import type { UserProfile, UserEvent } from '../domain/user';
import { USER_SETTING_LIST, userSettingsFrom, type UserSettings } from '../domain/user-settings';
import type { UserActivityEvent } from '../domain/user-activity';
import type { UserStatusEvent } from '../domain/user-status';
import { USER_CUSTOM_ATTRIBUTES, USER_RECORDS_TABLES } from './credential.record';

/** Each profile field's column: the settings' from their entries, the identity fields' by name. */
const PROFILE_COLUMNS: Record<keyof UserProfile, string> = {
  username: 'username',
  email: 'email',
  avatar: 'avatar',
  ...(Object.fromEntries(USER_SETTING_LIST.map((s) => [s.key, s.column])) as Record<keyof UserSettings, string>),
};

/** Every event of the users context. */
type Projected = UserEvent | AccessTokenEvent | UserActivityEvent | UserStatusEvent;

const on: EventHandlers<Projected> = {
  UserCreated: async ({ data: d }, db) => {
    // An event older than a setting holds no value for it: the setting's default.
    const settings = userSettingsFrom(d);
    const columns = USER_SETTING_LIST.map((s) => s.column);
    const values = USER_SETTING_LIST.map((s) => settings[s.key]);
    const fixed = [d.userId, d.username, d.email, d.avatar, d.passwordDigest, d.confirmedAt, d.at, d.ghost === true];
    await db.query(
      `insert into users (id, username, email, state, avatar, password_digest, confirmed_at, created_at, updated_at, ghost,
             ${columns.join(', ')})
           values ($1, $2, $3, 'active', $4, $5, $6, $7, $7, $8, ${columns.map((_, i) => `$${fixed.length + 1 + i}`).join(', ')})`,
      [...fixed, ...values],
    );
    await db.query(`insert into user_email_claims (email_lower, user_id) values ($1, $2)`, [
      d.email.toLowerCase(),
      d.userId,
    ]);
    for (const i of d.identities) {
      await db.query(`insert into user_identities (user_id, provider, extern_uid) values ($1,$2,$3)`, [
        d.userId,
        i.provider,
        i.externUid,
      ]);
    }
  },
  UserUpdated: async ({ data: d }, db) => {
    const sets: string[] = [];
    const values: unknown[] = [d.userId];
    for (const [k, v] of Object.entries(d.changes)) {
      values.push(v);
      sets.push(`${PROFILE_COLUMNS[k as keyof UserProfile]} = $${values.length}`);
    }
    if (d.passwordDigest) {
      values.push(d.passwordDigest);
      sets.push(`password_digest = $${values.length}`);
    }
    values.push(d.at);
    sets.push(`updated_at = $${values.length}`);
    if (d.changes.email !== undefined) {
      await db.query(`delete from user_email_claims where user_id = $1 and email_id is null`, [d.userId]);
      await db.query(`insert into user_email_claims (email_lower, user_id) values ($1, $2)`, [
        d.changes.email.toLowerCase(),
        d.userId,
      ]);
    }
    await db.query(`update users set ${sets.join(', ')} where id = $1`, values);
    if (d.identity) {
      await db.query(
        `insert into user_identities (user_id, provider, extern_uid) values ($1,$2,$3)
             on conflict (user_id, provider) do update set extern_uid = excluded.extern_uid`,
        [d.userId, d.identity.provider, d.identity.externUid],
      );
    }
  },
  UserBlocked: async ({ data: d }, db) => {
    await db.query(`update users set state = $2, updated_at = $3 where id = $1`, [
      d.userId,
      d.byDirectory ? 'ldap_blocked' : 'blocked',
      d.at,
    ]);
  },
  UserUnblocked: async ({ data: d }, db) => {
    await db.query(`update users set state = 'active', updated_at = $2 where id = $1`, [d.userId, d.at]);
  },
  UserIdentityRemoved: async ({ data: d }, db) => {
    await db.query(`delete from user_identities where user_id = $1 and provider = $2`, [d.userId, d.provider]);
  },
  UserDeactivated: async ({ data: d }, db) => {
    await db.query(`update users set state = 'deactivated', updated_at = $2 where id = $1`, [d.userId, d.at]);
  },
  UserActivated: async ({ data: d }, db) => {
    await db.query(`update users set state = 'active', updated_at = $2 where id = $1`, [d.userId, d.at]);
  },
  UserBanned: async ({ data: d }, db) => {
    await db.query(`update users set state = 'banned', updated_at = $2 where id = $1`, [d.userId, d.at]);
  },
  UserUnbanned: async ({ data: d }, db) => {
    await db.query(`update users set state = 'active', updated_at = $2 where id = $1`, [d.userId, d.at]);
  },
  UserDeleted: async ({ data: d }, db) => {
    // Credentials, identities, e-mails and tokens go with the row (on delete cascade).
    await db.query(`delete from users where id = $1`, [d.userId]);
  },
  SshKeyAdded: async ({ data: d }, db) => {
    await db.query(
      `insert into ssh_keys (id, user_id, title, key, key_type, fingerprint, fingerprint_sha256, expires_at, created_at)
       values ($1,$2,$3,$4,$5,$6,$7,$8,$9)`,
      [d.keyId, d.userId, d.title, d.key, d.keyType, d.fingerprint, d.fingerprintSha256, d.expiresAt ?? null, d.at],
    );
  },
  SshKeyRemoved: async ({ data: d }, db) => {
    await db.query(`delete from ssh_keys where id = $1`, [d.keyId]);
  },
  GpgKeyAdded: async ({ data: d }, db) => {
    await db.query(
      `insert into gpg_keys (id, user_id, key, fingerprint, primary_keyid, created_at) values ($1,$2,$3,$4,$5,$6)`,
      [d.keyId, d.userId, d.key, d.fingerprint, d.primaryKeyId, d.at],
    );
  },
  GpgKeyRemoved: async ({ data: d }, db) => {
    await db.query(`delete from gpg_keys where id = $1`, [d.keyId]);
  },
  EmailAdded: async ({ data: d }, db) => {
    await db.query(`insert into user_email_claims (email_lower, user_id, email_id) values ($1,$2,$3)`, [
      d.email.toLowerCase(),
      d.userId,
      d.emailId,
    ]);
    await db.query(`insert into emails (id, user_id, email, created_at) values ($1,$2,$3,$4)`, [
      d.emailId,
      d.userId,
      d.email,
      d.at,
    ]);
  },
  EmailRemoved: async ({ data: d }, db) => {
    await db.query(`delete from user_email_claims where email_id = $1`, [d.emailId]);
    await db.query(`delete from emails where id = $1`, [d.emailId]);
  },
  UserCustomAttributeSet: async ({ data: d }, db) => {
    await USER_CUSTOM_ATTRIBUTES.set(db, d.userId, d.key, d.value);
  },
  UserCustomAttributeRemoved: async ({ data: d }, db) => {
    await USER_CUSTOM_ATTRIBUTES.remove(db, d.userId, d.key);
  },
  AccessTokenCreated: async (e, db) => {
    const d = e.data;
    await db.query(
      `insert into access_tokens (id, user_id, name, digest, scopes, impersonation, expires_at, created_by, created_at)
           values ($1,$2,$3,$4,$5,$6,$7,$8,$9)`,
      [d.tokenId, d.userId, d.name, d.digest, d.scopes, d.impersonation, d.expiresAt, e.metadata.actorId ?? null, d.at],
    );
  },
  AccessTokenRevoked: async ({ data: d }, db) => {
    await db.query(`update access_tokens set revoked = true where id = $1`, [d.tokenId]);
  },
  UserActivityRecorded: async ({ data: d }, db) => {
    await db.query(
      `update users set last_activity_on = $2 where id = $1 and (last_activity_on is null or last_activity_on < $2)`,
      [d.userId, d.on],
    );
  },
  // The last change wins: events replay in global order, whichever day's stream holds them.
  UserStatusSet: async ({ data: d }, db) => {
    await db.query(
      `insert into user_statuses (user_id, emoji, message, availability, clear_status_at, updated_at)
       values ($1,$2,$3,$4,$5,$6)
       on conflict (user_id) do update set emoji = excluded.emoji, message = excluded.message,
         availability = excluded.availability, clear_status_at = excluded.clear_status_at, updated_at = excluded.updated_at`,
      [d.userId, d.emoji, d.message, d.availability, d.clearStatusAt, d.at],
    );
  },
  UserStatusCleared: async ({ data: d }, db) => {
    await db.query(`delete from user_statuses where user_id = $1`, [d.userId]);
  },
};

/** Keeps `users` and the credential tables in step with the users context's events. */
@Injectable()
export class UserProjection implements Projector<Projected> {
  readonly name = 'users';
  readonly tables = USER_RECORDS_TABLES;
  readonly eventTypes = handledTypes(on);

  apply(e: Recorded<Projected>, db: EntityManager): Promise<void> {
    return dispatch(on, e, db);
  }
}
