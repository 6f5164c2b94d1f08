import {
  AuthFailureThrottle,
  Clock,
  LodeConfig,
  SharedCounters,
  Unauthorized,
  type Invalidations,
} from '@app/platform';
import type { EntityManager } from 'typeorm';
import {
  asDataSource,
  AT,
  openProjectionDb,
  recorded,
  userCreated,
  type ProjectionDb,
} from '../../../../test/support/projection-db';
import type { AccessTokenEvent } from '../domain/access-token';
import { tokenDigest } from '../domain/secrets';
import type { UserEvent } from '../domain/user';
import { ActorResolver, UserBlocked } from './actor-resolver';
import { lockSshKeyFingerprint, userSshKeyFingerprintTaken } from './ssh-key-fingerprints';
import { TokenResolver } from './token-resolver';

const LATER = '2026-02-01T00:00:00.000Z';
/** The throttle is off here (no Redis): the e2e test covers it. */
const CONFIG = Object.assign(new LodeConfig(), { authFailures: 0, tokenCacheMs: 0 });
const NO_THROTTLE = new AuthFailureThrottle(CONFIG, new SharedCounters(CONFIG));
const NO_INVALIDATIONS = { register: () => undefined, subscribe: () => undefined } as unknown as Invalidations;

class FixedClock extends Clock {
  now(): Date {
    return new Date('2026-03-10T12:00:00Z');
  }
}

const event = (e: UserEvent | AccessTokenEvent) => recorded(e);
const sshKey = (userId: number, keyId: number) =>
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
const token = (tokenId: number, userId: number, expiresAt: string | null) =>
  event({
    type: 'AccessTokenCreated',
    data: {
      tokenId,
      userId,
      name: `t${tokenId}`,
      scopes: ['read_repository'],
      impersonation: false,
      expiresAt,
      digest: tokenDigest(`secret-${tokenId}`),
      at: AT,
    },
  });

describe('ActorResolver against PostgreSQL', () => {
  let pg: ProjectionDb;
  beforeAll(async () => {
    pg = await openProjectionDb();
  });
  afterAll(() => pg.drop());

  /** User 1 (an administrator) with SSH key 5 and tokens 9 and 10 (expiring on the clock's day); user 2, blocked, with key 6 and token 11. */
  const withKeys = (test: (resolver: ActorResolver, db: EntityManager) => Promise<void>) =>
    pg.rollingBack(async (db) => {
      await pg.given(
        db,
        userCreated(1, { isAdmin: true }),
        userCreated(2, { external: true }),
        sshKey(1, 5),
        sshKey(2, 6),
        token(9, 1, '2026-03-11'),
        token(10, 1, '2026-03-10'),
        token(11, 2, null),
        recorded({ type: 'UserActivityRecorded' as const, data: { userId: 1, on: '2026-03-01', at: AT } }),
        event({ type: 'UserBlocked', data: { userId: 2, byDirectory: false, at: LATER } }),
      );
      const tokens = new TokenResolver(asDataSource(db), CONFIG, NO_INVALIDATIONS);
      await test(new ActorResolver(tokens, new FixedClock(), NO_THROTTLE, asDataSource(db)), db);
    });

  it("finds an SSH key's owner by its SHA256 fingerprint, without API scopes", () =>
    withKeys(async (resolver) => {
      expect(await resolver.bySshKey('SHA256:5')).toEqual({
        keyId: 5,
        actor: { id: 1, username: 'user1', isAdmin: true, external: false, scopes: [], impersonation: false },
        lastActivityOn: '2026-03-01',
      });
      expect(await resolver.bySshKey('SHA256:7')).toBeUndefined();
      expect(await resolver.bySshKey('md5:5')).toBeUndefined();
      await expect(resolver.bySshKey('SHA256:6')).rejects.toThrow(UserBlocked);
    }));

  it("stops knowing a removed key or a deleted user's", () =>
    withKeys(async (resolver, db) => {
      await pg.given(
        db,
        event({ type: 'SshKeyRemoved', data: { userId: 1, keyId: 5, at: LATER } }),
        event({ type: 'UserDeleted', data: { userId: 2, username: 'user2', hardDelete: true, at: LATER } }),
      );
      expect(await resolver.bySshKey('SHA256:5')).toBeUndefined();
      expect(await resolver.bySshKey('SHA256:6')).toBeUndefined();
    }));

  it('accepts a token until the day it expires, and refuses a blocked owner’s', () =>
    withKeys(async (resolver) => {
      expect((await resolver.byToken('secret-9')).actor).toMatchObject({
        id: 1,
        tokenId: 9,
        scopes: ['read_repository'],
      });
      await expect(resolver.byToken('secret-10')).rejects.toThrow(Unauthorized);
      await expect(resolver.byToken('secret-11')).rejects.toThrow(UserBlocked);
      await expect(resolver.byToken('nope')).rejects.toThrow(Unauthorized);
    }));

  it("tells a user's key by its md5 fingerprint (ssh-key-fingerprints.ts), under the fingerprint's lock", () =>
    withKeys(async (_, db) => {
      await lockSshKeyFingerprint(db, 'md5:5');
      expect(await userSshKeyFingerprintTaken(db, 'md5:5')).toBe(true);
      expect(await userSshKeyFingerprintTaken(db, 'SHA256:5')).toBe(false);
      expect(await userSshKeyFingerprintTaken(db, 'md5:7')).toBe(false);
    }));
});
