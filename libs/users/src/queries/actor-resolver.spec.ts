import { AuthFailureThrottle, Clock, LodeConfig, SharedCounters, Unauthorized } from '@app/platform';
import { ActorResolver, UserBlocked } from './actor-resolver';
import type { DataSource } from 'typeorm';
import type { ResolvedToken, TokenResolver } from './token-resolver';

const TODAY = '2026-03-10';
/** The throttle is off here (no Redis): the e2e test covers it. */
const OFF = Object.assign(new LodeConfig(), { authFailures: 0 });
const NO_THROTTLE = new AuthFailureThrottle(OFF, new SharedCounters(OFF));

class FixedClock extends Clock {
  now(): Date {
    return new Date(`${TODAY}T12:00:00Z`);
  }
}

const token = (over: Partial<ResolvedToken> = {}, user: Partial<ResolvedToken['user']> = {}): ResolvedToken => ({
  tokenId: 7,
  scopes: ['api'],
  impersonation: false,
  revoked: false,
  expiresAt: null,
  createdBy: null,
  ...over,
  user: {
    id: 3,
    username: 'jane',
    isAdmin: false,
    external: false,
    state: 'active',
    lastActivityOn: '2026-03-09',
    ...user,
  },
});

/** A resolver over one known secret, `s3cret`, standing for `known`. */
function given(known: ResolvedToken | null): ActorResolver {
  const tokens = { resolve: async (secret: string) => (secret === 's3cret' ? known : null) };
  // No SSH key lookups here: those run against PostgreSQL in test/e2e/git-ssh.e2e-spec.ts.
  return new ActorResolver(tokens as unknown as TokenResolver, new FixedClock(), NO_THROTTLE, {} as DataSource);
}

const basic = (credentials: string) => `Basic ${Buffer.from(credentials).toString('base64')}`;

describe('ActorResolver', () => {
  describe('byToken', () => {
    it("gives the token's owner as the Actor, with the day of its last activity", async () => {
      expect(await given(token({}, { external: true })).byToken('s3cret')).toEqual({
        actor: {
          id: 3,
          username: 'jane',
          isAdmin: false,
          external: true,
          tokenId: 7,
          scopes: ['api'],
          impersonation: false,
          impersonatedBy: undefined,
        },
        lastActivityOn: '2026-03-09',
      });
    });

    it('names the administrator behind an impersonation token', async () => {
      const { actor } = await given(token({ impersonation: true, createdBy: 1 })).byToken('s3cret');
      expect(actor).toMatchObject({ impersonation: true, impersonatedBy: 1 });
    });

    it('refuses an unknown, a revoked and an expired token (expiry day included) as Unauthorized', async () => {
      await expect(given(token()).byToken('other')).rejects.toThrow(Unauthorized);
      await expect(given(token({ revoked: true })).byToken('s3cret')).rejects.toThrow(Unauthorized);
      await expect(given(token({ expiresAt: TODAY })).byToken('s3cret')).rejects.toThrow(Unauthorized);
      await expect(given(token({ expiresAt: '2026-03-11' })).byToken('s3cret')).resolves.toBeDefined();
    });

    it("refuses a blocked user's token as UserBlocked (403 User is blocked on the API)", async () => {
      const refused = given(token({}, { state: 'blocked' })).byToken('s3cret');
      await expect(refused).rejects.toThrow(UserBlocked);
      await expect(refused).rejects.toThrow('403 Forbidden - User is blocked');
    });
  });

  describe('byBasicAuth', () => {
    it('takes the password as the token, whatever the user name', async () => {
      for (const user of ['git', 'jane', 'anybody', ''])
        expect((await given(token()).byBasicAuth(basic(`${user}:s3cret`)))?.actor.id).toBe(3);
    });

    it('keeps a colon inside the password', async () => {
      const known = token();
      const tokens = { resolve: async (secret: string) => (secret === 'a:b' ? known : null) };
      const resolver = new ActorResolver(
        tokens as unknown as TokenResolver,
        new FixedClock(),
        NO_THROTTLE,
        {} as DataSource,
      );
      expect((await resolver.byBasicAuth(basic('git:a:b')))?.actor.id).toBe(3);
    });

    it('is undefined without Basic credentials (anonymous), also beside a Bearer token', async () => {
      expect(await given(token()).byBasicAuth(undefined)).toBeUndefined();
      expect(await given(token()).byBasicAuth('Bearer s3cret')).toBeUndefined();
    });

    it('refuses an empty or missing password, and a wrong one, as Unauthorized', async () => {
      await expect(given(token()).byBasicAuth(basic('git:'))).rejects.toThrow(Unauthorized);
      await expect(given(token()).byBasicAuth(basic('git'))).rejects.toThrow(Unauthorized);
      await expect(given(token()).byBasicAuth(basic('git:nope'))).rejects.toThrow(Unauthorized);
    });

    it('refuses a blocked user as UserBlocked', async () => {
      await expect(given(token({}, { state: 'blocked' })).byBasicAuth(basic('git:s3cret'))).rejects.toThrow(
        UserBlocked,
      );
    });
  });
});
