import type { Invalidations, LodeConfig } from '@app/platform';
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
import { TokenResolver, userCredentialsKey } from './token-resolver';

const LATER = '2026-02-01T00:00:00.000Z';

const event = (e: UserEvent | AccessTokenEvent) => recorded(e);
const token = (
  tokenId: number,
  userId: number,
  over: Partial<Extract<AccessTokenEvent, { type: 'AccessTokenCreated' }>['data']> = {},
) =>
  event({
    type: 'AccessTokenCreated',
    data: {
      tokenId,
      userId,
      name: `t${tokenId}`,
      scopes: ['api'],
      impersonation: false,
      expiresAt: null,
      digest: tokenDigest(`secret-${tokenId}`),
      at: AT,
      ...over,
    },
  });

describe('TokenResolver', () => {
  let pg: ProjectionDb;
  beforeAll(async () => {
    pg = await openProjectionDb();
  });
  afterAll(() => pg.drop());

  /** What `caughtUp` answers next: whether every NOTIFY committed before the lookup has been heard. */
  let heardEverything: () => Promise<boolean> = () => Promise.resolve(true);
  const invalidations = {
    register: () => undefined,
    subscribe: () => undefined,
    caughtUp: () => heardEverything(),
  } as unknown as Invalidations;
  afterEach(() => {
    heardEverything = () => Promise.resolve(true);
  });
  /** User 1 with token 9 (api, read_user; impersonation made by user 2, expiring), user 2 (administrator, external) with token 10. */
  const withTokens = (tokenCacheMs: number, test: (resolver: TokenResolver, db: EntityManager) => Promise<void>) =>
    pg.rollingBack(async (db) => {
      await pg.given(
        db,
        userCreated(1),
        userCreated(2, { isAdmin: true, external: true }),
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
              digest: tokenDigest('secret-9'),
              at: AT,
            },
          },
          { metadata: { actorId: 2 } },
        ),
        token(10, 2),
        recorded({ type: 'UserActivityRecorded' as const, data: { userId: 1, on: '2026-01-31', at: AT } }),
      );
      await test(new TokenResolver(asDataSource(db), { tokenCacheMs } as LodeConfig, invalidations), db);
    });

  it('resolves a secret to its token and owner, by digest, and an unknown one to null', () =>
    withTokens(0, async (resolver) => {
      expect(await resolver.resolve('secret-9')).toEqual({
        tokenId: 9,
        scopes: ['api', 'read_user'],
        impersonation: true,
        revoked: false,
        expiresAt: '2027-03-04',
        createdBy: 2,
        user: {
          id: 1,
          username: 'user1',
          isAdmin: false,
          external: false,
          state: 'active',
          lastActivityOn: '2026-01-31',
        },
      });
      expect(await resolver.resolve('secret-10')).toMatchObject({
        tokenId: 10,
        createdBy: null,
        user: { id: 2, isAdmin: true, external: true, lastActivityOn: null },
      });
      expect(await resolver.resolve(tokenDigest('secret-9'))).toBeNull(); // the digest is no secret
      expect(await resolver.resolve('nope')).toBeNull();
    }));

  it('reads what revocation and blocking changed, uncached', () =>
    withTokens(0, async (resolver, db) => {
      await pg.given(
        db,
        event({ type: 'AccessTokenRevoked', data: { tokenId: 9, userId: 1, at: LATER } }),
        event({ type: 'UserBlocked', data: { userId: 1, byDirectory: false, at: LATER } }),
      );
      expect(await resolver.resolve('secret-9')).toMatchObject({ revoked: true, user: { state: 'blocked' } });
    }));

  it("caches answers until the owner's entries are evicted", () =>
    withTokens(60_000, async (resolver, db) => {
      expect((await resolver.resolve('secret-9'))?.revoked).toBe(false);
      expect((await resolver.resolve('secret-10'))?.user.isAdmin).toBe(true);
      await pg.given(
        db,
        event({ type: 'AccessTokenRevoked', data: { tokenId: 9, userId: 1, at: LATER } }),
        event({ type: 'UserUpdated', data: { userId: 2, changes: { isAdmin: false }, at: LATER } }),
      );
      expect((await resolver.resolve('secret-9'))?.revoked).toBe(false);
      resolver.evict([userCredentialsKey(1)]);
      expect((await resolver.resolve('secret-9'))?.revoked).toBe(true);
      expect((await resolver.resolve('secret-10'))?.user.isAdmin).toBe(true); // user 2's entry stays
      resolver.evict('all');
      expect((await resolver.resolve('secret-10'))?.user.isAdmin).toBe(false);
    }));

  it('queries instead of serving a cached entry while notifications may be unheard', () =>
    withTokens(60_000, async (resolver, db) => {
      expect((await resolver.resolve('secret-9'))?.revoked).toBe(false);
      await pg.given(db, event({ type: 'AccessTokenRevoked', data: { tokenId: 9, userId: 1, at: LATER } }));
      heardEverything = () => Promise.resolve(false); // the LISTEN connection is down
      expect((await resolver.resolve('secret-9'))?.revoked).toBe(true);
    }));

  it('does not serve an entry evicted while it waited for the notifications', () =>
    withTokens(60_000, async (resolver, db) => {
      expect((await resolver.resolve('secret-9'))?.revoked).toBe(false);
      await pg.given(db, event({ type: 'AccessTokenRevoked', data: { tokenId: 9, userId: 1, at: LATER } }));
      // The revocation's NOTIFY arrives ahead of the fence's answer, as PostgreSQL orders them.
      heardEverything = () => {
        resolver.evict([userCredentialsKey(1)]);
        return Promise.resolve(true);
      };
      expect((await resolver.resolve('secret-9'))?.revoked).toBe(true);
    }));
});
