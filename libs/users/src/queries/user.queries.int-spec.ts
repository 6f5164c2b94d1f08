import { NotFound } from '@app/platform';
import type { EntityManager } from 'typeorm';
import {
  asDataSource,
  AT,
  openProjectionDb,
  pageOf,
  recorded,
  userCreated,
  type ProjectionDb,
} from '../../../../test/support/projection-db';
import type { AccessTokenEvent } from '../domain/access-token';
import type { UserEvent } from '../domain/user';
import {
  currentAvatar,
  ghostUserId,
  isAdminHeld,
  lockGhostCreation,
  lockRootSeeding,
  nextIdOn,
  rootUserId,
  tokenDigestKnown,
  userCount,
  userIn,
  UserQueries,
  type UserListFilters,
} from './user.queries';

const LATER = '2026-02-01T00:00:00.000Z';
const ALL = pageOf(1, 100);
const BEYOND_INT = 2 ** 31;

const event = (e: UserEvent | AccessTokenEvent) => recorded(e);
const token = (tokenId: number, impersonation: boolean, expiresAt: string | null = '2999-01-01') =>
  event({
    type: 'AccessTokenCreated',
    data: {
      tokenId,
      userId: 1,
      name: `t${tokenId}`,
      scopes: ['api'],
      impersonation,
      expiresAt,
      digest: `d${tokenId}`,
      at: AT,
    },
  });

/**
 * Alice (1, two identities), Bob (2, external, created later), carol_x (3, blocked), dave (4,
 * blocked by the directory), root (5, administrator) and the ghost (6).
 */
const world = [
  userCreated(1, {
    username: 'alice',
    name: 'Alice Smith',
    identities: [
      { provider: 'ldapmain', externUid: 'uid=Alice,ou=people' },
      { provider: 'github', externUid: '42' },
    ],
  }),
  userCreated(2, { username: 'bob', name: 'Bob', external: true, at: LATER }),
  userCreated(3, { username: 'carol_x', name: 'Carol' }),
  userCreated(4, { username: 'dave', name: 'Dave' }),
  userCreated(5, { username: 'root', name: 'Administrator', isAdmin: true }),
  userCreated(6, { username: 'ghost', name: 'Ghost User', ghost: true }),
  event({ type: 'UserBlocked', data: { userId: 3, byDirectory: false, at: AT } }),
  event({ type: 'UserBlocked', data: { userId: 4, byDirectory: true, at: AT } }),
];

describe('UserQueries', () => {
  let pg: ProjectionDb;
  beforeAll(async () => {
    pg = await openProjectionDb();
  });
  afterAll(() => pg.drop());

  const inWorld = (test: (q: UserQueries, db: EntityManager) => Promise<void>) =>
    pg.rollingBack(async (db) => {
      await pg.given(db, ...world);
      await test(new UserQueries(asDataSource(db)), db);
    });
  const listed = async (q: UserQueries, f: Partial<UserListFilters> = {}) => {
    const found = await q.list({ searchEmail: false, ...f }, ALL);
    expect(found.total).toBe(found.rows.length);
    return found.rows.map((u) => u.id);
  };

  it('lists users newest first, counted and paged', () =>
    inWorld(async (q) => {
      expect(await listed(q)).toEqual([6, 5, 4, 3, 2, 1]);
      const second = await q.list({ searchEmail: false }, pageOf(2, 4));
      expect([second.total, second.rows.map((u) => u.username)]).toEqual([6, ['bob', 'alice']]);
    }));

  it('filters by username, state, external, identity, creation time and custom attributes', () =>
    inWorld(async (q, db) => {
      await pg.given(
        db,
        event({ type: 'UserCustomAttributeSet', data: { userId: 2, key: 'team', value: 'a', at: AT } }),
        event({ type: 'UserCustomAttributeSet', data: { userId: 3, key: 'team', value: 'a', at: AT } }),
        event({ type: 'UserCustomAttributeSet', data: { userId: 3, key: 'tier', value: 'gold', at: AT } }),
      );
      expect(await listed(q, { username: 'ALICE' })).toEqual([1]);
      expect(await listed(q, { username: 'ali' })).toEqual([]);
      expect(await listed(q, { active: true })).toEqual([6, 5, 2, 1]);
      expect(await listed(q, { blocked: true })).toEqual([4, 3]);
      expect(await listed(q, { external: true })).toEqual([2]);
      expect(await listed(q, { provider: 'ldapmain', externUid: 'UID=alice,OU=people' })).toEqual([1]);
      expect(await listed(q, { provider: 'github', externUid: 'uid=Alice,ou=people' })).toEqual([]);
      expect(await listed(q, { createdAfter: new Date(AT) })).toEqual([2]);
      expect(await listed(q, { createdBefore: new Date(LATER) })).toEqual([6, 5, 4, 3, 1]);
      expect(await listed(q, { customAttributes: { team: 'a' } })).toEqual([3, 2]);
      expect(await listed(q, { customAttributes: { team: 'a', tier: 'gold' } })).toEqual([3]);
    }));

  it('searches name and username literally, and e-mail addresses only for administrators', () =>
    inWorld(async (q) => {
      expect(await listed(q, { search: 'SMITH' })).toEqual([1]);
      expect(await listed(q, { search: 'o' })).toEqual([6, 5, 3, 2]); // ghost, root, Carol, bob
      expect(await listed(q, { search: '_' })).toEqual([3]);
      expect(await listed(q, { search: '%' })).toEqual([]);
      expect(await listed(q, { search: 'alice@' })).toEqual([]);
      expect(await listed(q, { search: 'alice@', searchEmail: true })).toEqual([1]);
    }));

  it('finds a user by id or username, and 404s or misses the rest', () =>
    inWorld(async (q) => {
      expect(await q.get(2)).toMatchObject({ id: 2, username: 'bob', external: true, state: 'active' });
      await expect(q.get(99)).rejects.toThrow('404 User Not Found');
      await expect(q.get(BEYOND_INT)).rejects.toThrow(NotFound);
      expect(await q.find(BEYOND_INT)).toBeNull();
      expect((await q.findByIdOrUsername('Alice'))?.id).toBe(1);
      expect((await q.findByIdOrUsername('4'))?.username).toBe('dave');
      expect(await q.findByIdOrUsername('nobody')).toBeNull();
      expect(await q.findByIdOrUsername('99999999999')).toBeNull();
      expect(await q.countExisting([1, 2, 99])).toBe(2);
      expect(await q.countExisting([])).toBe(0);
    }));

  it("reads many users' identities in one go, by provider", () =>
    inWorld(async (q) => {
      expect(await q.identities([1, 2])).toEqual(
        new Map([
          [
            1,
            [
              { userId: 1, provider: 'github', externUid: '42' },
              { userId: 1, provider: 'ldapmain', externUid: 'uid=Alice,ou=people' },
            ],
          ],
        ]),
      );
      expect(await q.identities([])).toEqual(new Map());
    }));

  it("reads a user's SSH keys, GPG keys, e-mails and custom attributes, 404 for another user's", () =>
    inWorld(async (q, db) => {
      const ssh = (keyId: number, userId: number) =>
        event({
          type: 'SshKeyAdded',
          data: {
            userId,
            keyId,
            title: `key ${keyId}`,
            key: `ssh-ed25519 AAAA${keyId}`,
            fingerprint: `md5:${keyId}`,
            fingerprintSha256: `SHA256:${keyId}`,
            keyType: 'ed25519',
            at: AT,
          },
        });
      await pg.given(
        db,
        ssh(7, 1),
        ssh(5, 1),
        ssh(6, 2),
        event({
          type: 'GpgKeyAdded',
          data: { userId: 1, keyId: 8, key: '-----BEGIN PGP', fingerprint: 'ABCD', primaryKeyId: 'CD', at: AT },
        }),
        event({ type: 'EmailAdded', data: { userId: 1, emailId: 9, email: 'second@example.com', at: AT } }),
        event({ type: 'UserCustomAttributeSet', data: { userId: 1, key: 'a', value: '1', at: AT } }),
      );
      const keys = await q.sshKeys(1, ALL);
      expect([keys.total, keys.rows.map((k) => k.id)]).toEqual([2, [5, 7]]);
      expect((await q.sshKeys(1, pageOf(2, 1))).rows.map((k) => k.id)).toEqual([7]);
      expect(await q.sshKey(1, 5)).toMatchObject({ id: 5, userId: 1, title: 'key 5' });
      await expect(q.sshKey(1, 6)).rejects.toThrow('404 Key Not Found');
      await expect(q.sshKey(1, BEYOND_INT)).rejects.toThrow(NotFound);
      expect((await q.gpgKeys(1, ALL)).rows.map((k) => k.id)).toEqual([8]);
      expect((await q.gpgKeys(2, ALL)).total).toBe(0);
      expect((await q.gpgKey(1, 8)).id).toBe(8);
      await expect(q.gpgKey(2, 8)).rejects.toThrow('404 GPG Key Not Found');
      const emails = await q.emails(1, ALL);
      expect([emails.total, emails.rows.map((e) => [e.id, e.email])]).toEqual([1, [[9, 'second@example.com']]]);
      expect((await q.email(1, 9)).email).toBe('second@example.com');
      await expect(q.email(2, 9)).rejects.toThrow('404 Email Not Found');
      expect(await q.customAttributes(1)).toEqual([{ key: 'a', value: '1' }]);
      await expect(q.customAttribute(2, 'a')).rejects.toThrow(NotFound);
    }));

  it('lists impersonation tokens all, active (neither revoked nor expired) or inactive', () =>
    inWorld(async (q, db) => {
      await pg.given(
        db,
        token(9, true),
        token(10, true),
        event({ type: 'AccessTokenRevoked', data: { tokenId: 10, userId: 1, at: LATER } }),
        token(11, true, '2026-01-15'),
        token(12, false),
        token(13, true, '2026-02-01'),
        token(14, true, null),
      );
      const tokens = async (state: 'all' | 'active' | 'inactive') => {
        const found = await q.impersonationTokens(1, state, ALL, '2026-02-01');
        expect(found.total).toBe(found.rows.length);
        return found.rows.map((t) => t.id);
      };
      expect(await tokens('all')).toEqual([9, 10, 11, 13, 14]);
      expect(await tokens('active')).toEqual([9, 14]);
      expect(await tokens('inactive')).toEqual([10, 11, 13]); // expiring today is expired
      const page = await q.impersonationTokens(1, 'all', pageOf(2, 3), '2026-02-01');
      expect([page.total, page.rows.map((t) => t.id)]).toEqual([5, [13, 14]]);
      expect(await q.impersonationToken(1, 10)).toMatchObject({ id: 10, revoked: true, impersonation: true });
      await expect(q.impersonationToken(1, 12)).rejects.toThrow('404 Impersonation Token Not Found');
      await expect(q.impersonationToken(2, 9)).rejects.toThrow(NotFound);
      expect(await tokenDigestKnown(db, 'd12')).toBe(true);
      expect(await tokenDigestKnown(db, 'd99')).toBe(false);
    }));

  it('lists personal access tokens by owner, kind, state, name and creation, and reads any one by id', () =>
    inWorld(async (q, db) => {
      await pg.given(
        db,
        token(20, false),
        token(21, false),
        event({ type: 'AccessTokenRevoked', data: { tokenId: 21, userId: 1, at: LATER } }),
        token(22, false, '2026-02-01'),
        token(23, true),
        event({
          type: 'AccessTokenCreated',
          data: {
            tokenId: 24,
            userId: 2,
            name: 'bobs_%',
            scopes: ['api'],
            impersonation: false,
            expiresAt: null,
            digest: 'd24',
            at: LATER,
          },
        }),
      );
      const base = { withImpersonation: true, lastUsedFilter: false, today: '2026-02-01' };
      const ids = async (f: Partial<Parameters<UserQueries['personalAccessTokens']>[0]>) => {
        const found = await q.personalAccessTokens({ ...base, ...f }, ALL);
        expect(found.total).toBe(found.rows.length);
        return found.rows.map((t) => t.id);
      };
      expect(await ids({})).toEqual([20, 21, 22, 23, 24]);
      expect(await ids({ userId: 1, withImpersonation: false })).toEqual([20, 21, 22]);
      expect(await ids({ userId: 1, revoked: true })).toEqual([21]);
      expect(await ids({ userId: 1, revoked: false })).toEqual([20, 22, 23]);
      expect(await ids({ state: 'active' })).toEqual([20, 23, 24]);
      expect(await ids({ state: 'inactive' })).toEqual([21, 22]); // expiring today is expired
      expect(await ids({ search: 'T2' })).toEqual([20, 21, 22, 23]);
      expect(await ids({ search: '_%' })).toEqual([24]); // wildcards are text
      expect(await ids({ createdAfter: new Date(LATER) })).toEqual([24]);
      expect(await ids({ createdBefore: new Date(AT) })).toEqual([20, 21, 22, 23]); // inclusive
      expect(await ids({ createdBefore: new Date(new Date(AT).getTime() - 1) })).toEqual([]);
      expect(await ids({ lastUsedFilter: true })).toEqual([]);
      const page = await q.personalAccessTokens(base, pageOf(2, 2));
      expect([page.total, page.rows.map((t) => t.id)]).toEqual([5, [22, 23]]);
      expect(await q.accessToken(23)).toMatchObject({ id: 23, userId: 1, impersonation: true, revoked: false });
      expect(await q.accessToken(99)).toBeUndefined();
      expect(await q.accessToken(BEYOND_INT)).toBeUndefined();
    }));

  it('lists users active since a day, least recently active first', () =>
    inWorld(async (q, db) => {
      const active = (userId: number, on: string) =>
        recorded({ type: 'UserActivityRecorded' as const, data: { userId, on, at: AT } });
      await pg.given(
        db,
        active(1, '2026-01-10'),
        active(2, '2026-01-05'),
        active(3, '2025-12-31'),
        active(4, '2026-01-05'),
      );
      const found = await q.activities('2026-01-01', ALL);
      expect(found).toEqual({
        rows: [
          { username: 'bob', last_activity_on: '2026-01-05' },
          { username: 'dave', last_activity_on: '2026-01-05' },
          { username: 'alice', last_activity_on: '2026-01-10' },
        ],
        total: 3,
      });
      expect((await q.activities('2026-01-06', pageOf(1, 1))).total).toBe(1);
    }));

  it("tells an e-mail (any of a user's) or username taken by another user, case-insensitively", () =>
    inWorld(async (q, db) => {
      await pg.given(
        db,
        event({ type: 'EmailAdded', data: { userId: 1, emailId: 9, email: 'second@example.com', at: AT } }),
      );
      expect(await q.taken({ email: 'ALICE@example.com', username: 'BOB' })).toEqual({ email: true, username: true });
      expect(await q.taken({ userId: 1, email: 'alice@example.com', username: 'Alice' })).toEqual({
        email: false,
        username: false,
      });
      expect(await q.taken({ userId: 2, email: 'Second@Example.com' })).toEqual({ email: true, username: false });
      expect(await q.taken({ email: 'nobody@example.com', username: 'nobody' })).toEqual({
        email: false,
        username: false,
      });
    }));

  it("answers the commands' reads in their transaction", () =>
    inWorld(async (_, db) => {
      await lockRootSeeding(db);
      await lockGhostCreation(db);
      expect(await userCount(db)).toBe(6);
      expect(await rootUserId(db)).toBe(5);
      expect(await ghostUserId(db)).toBe(6);
      expect(await isAdminHeld(db, 5)).toBe(true);
      expect(await isAdminHeld(db, 1)).toBe(false);
      expect(await isAdminHeld(db, 99)).toBeUndefined();
      expect(await currentAvatar(db, 1)).toBeNull();
      expect(await currentAvatar(db, 99)).toBeUndefined();
      expect((await userIn(db, 2))?.username).toBe('bob');
      expect(await userIn(db, 99)).toBeNull();
      const first = await nextIdOn(db, 'user_id_seq');
      expect(await nextIdOn(db, 'user_id_seq')).toBe(first + 1);
      await pg.given(db, event({ type: 'UserUpdated', data: { userId: 5, changes: { isAdmin: false }, at: LATER } }));
      expect(await rootUserId(db)).toBeUndefined(); // root no longer an administrator
    }));
});
