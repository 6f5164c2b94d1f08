import { rows } from '@app/platform';
import type { EntityManager } from 'typeorm';
import {
  apply,
  AT,
  openProjectionDb,
  recorded,
  userCreated,
  type ProjectionDb,
} from '../../../../test/support/projection-db';
import { UserProjection } from './user.projection';

const LATER = '2026-02-01T00:00:00.000Z';
const projection = new UserProjection();

const user = async (db: EntityManager, id: number) =>
  (await rows<Record<string, unknown>>(db, `select * from users where id = $1`, [id]))[0];
const claims = (db: EntityManager) =>
  rows<{ email_lower: string; user_id: number; email_id: number | null }>(
    db,
    `select email_lower, user_id, email_id from user_email_claims order by user_id, email_lower`,
  );
const identities = (db: EntityManager) =>
  rows<{ user_id: number; provider: string; extern_uid: string }>(
    db,
    `select user_id, provider, extern_uid from user_identities order by user_id, provider`,
  );

describe('UserProjection', () => {
  let pg: ProjectionDb;
  beforeAll(async () => {
    pg = await openProjectionDb();
  });
  afterAll(() => pg.drop());

  it('handles every event of the users context', () => {
    expect([...projection.eventTypes].sort()).toEqual([
      'AccessTokenCreated',
      'AccessTokenRevoked',
      'EmailAdded',
      'EmailRemoved',
      'GpgKeyAdded',
      'GpgKeyRemoved',
      'SshKeyAdded',
      'SshKeyRemoved',
      'UserActivated',
      'UserActivityRecorded',
      'UserBanned',
      'UserBlocked',
      'UserCreated',
      'UserCustomAttributeRemoved',
      'UserCustomAttributeSet',
      'UserDeactivated',
      'UserDeleted',
      'UserIdentityRemoved',
      'UserStatusCleared',
      'UserStatusSet',
      'UserUnbanned',
      'UserUnblocked',
      'UserUpdated',
    ]);
  });

  it('creates an active user with the profile, its e-mail claimed and its identities', () =>
    pg.rollingBack(async (db) => {
      await apply(
        projection,
        db,
        userCreated(1, {
          name: 'Ann Example',
          username: 'Ann',
          email: 'Ann@Example.com',
          bio: 'hi',
          isAdmin: true,
          passwordDigest: 'digest',
          identities: [{ provider: 'ldapmain', externUid: 'uid=ann' }],
        }),
        userCreated(2, { ghost: true, confirmedAt: null }),
      );
      expect(await user(db, 1)).toEqual({
        id: 1,
        username: 'Ann',
        email: 'Ann@Example.com',
        name: 'Ann Example',
        state: 'active',
        is_admin: true,
        ghost: false,
        bio: 'hi',
        location: null,
        messenger: '',
        career_profile: '',
        social_account: '',
        website_url: '',
        organization: null,
        projects_limit: 100000,
        can_create_group: true,
        external: false,
        avatar: null,
        password_digest: 'digest',
        theme_id: 1,
        color_scheme_id: 1,
        confirmed_at: new Date(AT),
        created_at: new Date(AT),
        updated_at: new Date(AT),
        last_activity_on: null,
        note: null,
      });
      expect(await user(db, 2)).toMatchObject({ ghost: true, confirmed_at: null, password_digest: null });
      expect(await claims(db)).toEqual([
        { email_lower: 'ann@example.com', user_id: 1, email_id: null },
        { email_lower: 'user2@example.com', user_id: 2, email_id: null },
      ]);
      expect(await identities(db)).toEqual([{ user_id: 1, provider: 'ldapmain', extern_uid: 'uid=ann' }]);
    }));

  it('updates the changed columns, moves the e-mail claim, and sets or replaces an identity', () =>
    pg.rollingBack(async (db) => {
      await apply(projection, db, userCreated(1, { identities: [{ provider: 'ldapmain', externUid: 'old' }] }), {
        type: 'UserUpdated',
        data: {
          userId: 1,
          changes: {
            name: 'New Name',
            email: 'New@Example.com',
            careerProfile: 'dev',
            projectsLimit: 5,
            avatar: 'a.png',
          },
          passwordDigest: 'new-digest',
          identity: { provider: 'ldapmain', externUid: 'new' },
          at: LATER,
        },
      });
      expect(await user(db, 1)).toMatchObject({
        name: 'New Name',
        email: 'New@Example.com',
        career_profile: 'dev',
        projects_limit: 5,
        avatar: 'a.png',
        password_digest: 'new-digest',
        username: 'user1',
        created_at: new Date(AT),
        updated_at: new Date(LATER),
      });
      expect(await claims(db)).toEqual([{ email_lower: 'new@example.com', user_id: 1, email_id: null }]);
      expect(await identities(db)).toEqual([{ user_id: 1, provider: 'ldapmain', extern_uid: 'new' }]);

      await apply(projection, db, { type: 'UserUpdated', data: { userId: 1, changes: { bio: 'only' }, at: AT } });
      expect(await user(db, 1)).toMatchObject({ bio: 'only', password_digest: 'new-digest', updated_at: new Date(AT) });
      expect(await claims(db)).toEqual([{ email_lower: 'new@example.com', user_id: 1, email_id: null }]);
    }));

  it('keeps the last status set, and forgets it when cleared', () =>
    pg.rollingBack(async (db) => {
      await apply(projection, db, userCreated(1));
      const set = (emoji: string, at: string) => ({
        type: 'UserStatusSet' as const,
        data: { userId: 1, emoji, message: 'm', availability: 'busy' as const, clearStatusAt: null, at },
      });
      await apply(projection, db, set('coffee', AT), set('tea', LATER));
      expect(
        await db.query(`select user_id, emoji, message, availability, clear_status_at from user_statuses`),
      ).toEqual([{ user_id: 1, emoji: 'tea', message: 'm', availability: 'busy', clear_status_at: null }]);
      await apply(projection, db, { type: 'UserStatusCleared', data: { userId: 1, at: LATER } });
      expect(await db.query(`select * from user_statuses`)).toEqual([]);
    }));

  it('removes an identity by its provider', () =>
    pg.rollingBack(async (db) => {
      await apply(
        projection,
        db,
        userCreated(1, {
          identities: [
            { provider: 'github', externUid: 'g' },
            { provider: 'ldapmain', externUid: 'l' },
          ],
        }),
        { type: 'UserIdentityRemoved', data: { userId: 1, provider: 'ldapmain', at: LATER } },
      );
      expect(await identities(db)).toEqual([{ user_id: 1, provider: 'github', extern_uid: 'g' }]);
    }));

  it('blocks (by an administrator or the directory) and unblocks', () =>
    pg.rollingBack(async (db) => {
      await apply(projection, db, userCreated(1), userCreated(2));
      await apply(
        projection,
        db,
        { type: 'UserBlocked', data: { userId: 1, byDirectory: false, at: LATER } },
        { type: 'UserBlocked', data: { userId: 2, byDirectory: true, at: LATER } },
      );
      expect(await user(db, 1)).toMatchObject({ state: 'blocked', updated_at: new Date(LATER) });
      expect(await user(db, 2)).toMatchObject({ state: 'ldap_blocked' });
      await apply(projection, db, { type: 'UserUnblocked', data: { userId: 2, at: AT } });
      expect(await user(db, 2)).toMatchObject({ state: 'active', updated_at: new Date(AT) });
    }));

  it('deactivates and activates, bans and unbans', () =>
    pg.rollingBack(async (db) => {
      await apply(projection, db, userCreated(1), userCreated(2));
      await apply(
        projection,
        db,
        { type: 'UserDeactivated', data: { userId: 1, at: LATER } },
        { type: 'UserBanned', data: { userId: 2, at: LATER } },
      );
      expect(await user(db, 1)).toMatchObject({ state: 'deactivated', updated_at: new Date(LATER) });
      expect(await user(db, 2)).toMatchObject({ state: 'banned', updated_at: new Date(LATER) });
      await apply(
        projection,
        db,
        { type: 'UserActivated', data: { userId: 1, at: AT } },
        { type: 'UserUnbanned', data: { userId: 2, at: AT } },
      );
      expect(await user(db, 1)).toMatchObject({ state: 'active', updated_at: new Date(AT) });
      expect(await user(db, 2)).toMatchObject({ state: 'active', updated_at: new Date(AT) });
    }));

  it('keeps SSH and GPG keys, e-mails with their claims, and custom attributes', () =>
    pg.rollingBack(async (db) => {
      await apply(
        projection,
        db,
        userCreated(1),
        {
          type: 'SshKeyAdded',
          data: {
            userId: 1,
            keyId: 5,
            title: 'laptop',
            key: 'ssh-ed25519 AAAA',
            fingerprint: 'md5',
            fingerprintSha256: 'SHA256:x',
            keyType: 'ed25519',
            at: AT,
          },
        },
        {
          type: 'GpgKeyAdded',
          data: { userId: 1, keyId: 6, key: '-----BEGIN PGP', fingerprint: 'ABCD', primaryKeyId: 'CD', at: AT },
        },
        { type: 'EmailAdded', data: { userId: 1, emailId: 7, email: 'Second@Example.com', at: AT } },
        { type: 'EmailAdded', data: { userId: 1, emailId: 8, email: 'third@example.com', at: AT } },
        { type: 'UserCustomAttributeSet', data: { userId: 1, key: 'a', value: '1', at: AT } },
        { type: 'UserCustomAttributeSet', data: { userId: 1, key: 'b', value: '2', at: AT } },
        { type: 'UserCustomAttributeSet', data: { userId: 1, key: 'a', value: '3', at: AT } },
      );
      expect(
        await rows(
          db,
          `select id, user_id, title, key, key_type, fingerprint, fingerprint_sha256, created_at from ssh_keys`,
        ),
      ).toEqual([
        {
          id: 5,
          user_id: 1,
          title: 'laptop',
          key: 'ssh-ed25519 AAAA',
          key_type: 'ed25519',
          fingerprint: 'md5',
          fingerprint_sha256: 'SHA256:x',
          created_at: new Date(AT),
        },
      ]);
      expect(await rows(db, `select id, user_id, key, fingerprint, primary_keyid, created_at from gpg_keys`)).toEqual([
        {
          id: 6,
          user_id: 1,
          key: '-----BEGIN PGP',
          fingerprint: 'ABCD',
          primary_keyid: 'CD',
          created_at: new Date(AT),
        },
      ]);
      expect(await rows(db, `select id, user_id, email, created_at from emails order by id`)).toEqual([
        { id: 7, user_id: 1, email: 'Second@Example.com', created_at: new Date(AT) },
        { id: 8, user_id: 1, email: 'third@example.com', created_at: new Date(AT) },
      ]);
      expect(await claims(db)).toEqual([
        { email_lower: 'second@example.com', user_id: 1, email_id: 7 },
        { email_lower: 'third@example.com', user_id: 1, email_id: 8 },
        { email_lower: 'user1@example.com', user_id: 1, email_id: null },
      ]);
      expect(await rows(db, `select user_id, key, value from user_custom_attributes order by key`)).toEqual([
        { user_id: 1, key: 'a', value: '3' },
        { user_id: 1, key: 'b', value: '2' },
      ]);

      await apply(
        projection,
        db,
        { type: 'SshKeyRemoved', data: { userId: 1, keyId: 5, at: LATER } },
        { type: 'GpgKeyRemoved', data: { userId: 1, keyId: 6, at: LATER } },
        { type: 'EmailRemoved', data: { userId: 1, emailId: 7, at: LATER } },
        { type: 'UserCustomAttributeRemoved', data: { userId: 1, key: 'a', at: LATER } },
      );
      expect(await rows(db, `select id from ssh_keys`)).toEqual([]);
      expect(await rows(db, `select id from gpg_keys`)).toEqual([]);
      expect(await rows(db, `select id from emails`)).toEqual([{ id: 8 }]);
      expect((await claims(db)).map((c) => c.email_lower)).toEqual(['third@example.com', 'user1@example.com']);
      expect(await rows(db, `select key, value from user_custom_attributes`)).toEqual([{ key: 'b', value: '2' }]);
    }));

  it('creates access tokens with their creator and revokes them', () =>
    pg.rollingBack(async (db) => {
      await apply(
        projection,
        db,
        userCreated(1),
        userCreated(2),
        recorded(
          {
            type: 'AccessTokenCreated' as const,
            data: {
              tokenId: 9,
              userId: 1,
              name: 'ci',
              scopes: ['api', 'read_user'],
              impersonation: true,
              expiresAt: '2027-03-04',
              digest: 'sha256-digest',
              at: AT,
            },
          },
          { metadata: { actorId: 2 } },
        ),
        {
          type: 'AccessTokenCreated',
          data: {
            tokenId: 10,
            userId: 1,
            name: 'cli',
            scopes: ['api'],
            impersonation: false,
            expiresAt: null,
            digest: 'other-digest',
            at: AT,
          },
        },
        { type: 'AccessTokenRevoked', data: { tokenId: 10, userId: 1, at: LATER } },
      );
      const tokens = await rows<Record<string, unknown>>(
        db,
        `select id, user_id, name, digest, scopes, impersonation, revoked, to_char(expires_at, 'YYYY-MM-DD') as expires_at,
                created_by, created_at from access_tokens order by id`,
      );
      expect(tokens).toEqual([
        {
          id: 9,
          user_id: 1,
          name: 'ci',
          digest: 'sha256-digest',
          scopes: ['api', 'read_user'],
          impersonation: true,
          revoked: false,
          expires_at: '2027-03-04',
          created_by: 2,
          created_at: new Date(AT),
        },
        {
          id: 10,
          user_id: 1,
          name: 'cli',
          digest: 'other-digest',
          scopes: ['api'],
          impersonation: false,
          revoked: true,
          expires_at: null,
          created_by: null,
          created_at: new Date(AT),
        },
      ]);
    }));

  it('moves the last activity day forward only', () =>
    pg.rollingBack(async (db) => {
      await apply(projection, db, userCreated(1));
      const day = async () =>
        (await rows<{ day: string | null }>(db, `select to_char(last_activity_on, 'YYYY-MM-DD') as day from users`))[0]
          .day;
      const activity = (on: string) => ({ type: 'UserActivityRecorded' as const, data: { userId: 1, on, at: AT } });
      await apply(projection, db, activity('2026-03-02'));
      expect(await day()).toBe('2026-03-02');
      await apply(projection, db, activity('2026-03-01'));
      expect(await day()).toBe('2026-03-02');
      await apply(projection, db, activity('2026-03-05'));
      expect(await day()).toBe('2026-03-05');
    }));

  it('deletes a user with everything of theirs', () =>
    pg.rollingBack(async (db) => {
      await apply(projection, db, userCreated(1), userCreated(2), {
        type: 'EmailAdded',
        data: { userId: 1, emailId: 7, email: 'second@example.com', at: AT },
      });
      await apply(projection, db, {
        type: 'UserDeleted',
        data: { userId: 1, username: 'user1', hardDelete: true, at: LATER },
      });
      expect(await rows(db, `select id from users`)).toEqual([{ id: 2 }]);
      expect(await rows(db, `select id from emails`)).toEqual([]);
      expect((await claims(db)).map((c) => c.user_id)).toEqual([2]);
    }));
});
