import { BadRequestMessage, Invalid, NotFound, Unauthorized } from '@app/platform';
import {
  createToken,
  evolve,
  gitScopesAllow,
  initial,
  isDate,
  revokeImpersonationToken,
  revokePersonalToken,
  revokeToken,
  rotateAwayToken,
  rotatedTokenExpiry,
  type AccessToken,
  type AccessTokenEvent,
} from './access-token';

const NOW = new Date('2024-05-06T07:08:09.000Z');
const AT = NOW.toISOString();
const EARLIER = '2024-01-01T00:00:00.000Z';
const TOKEN = 5;
const USER = 7;

const given = (...events: AccessTokenEvent[]): AccessToken => events.reduce(evolve, initial());

type CreateInput = Parameters<typeof createToken>[1];
const input = (over: Partial<CreateInput> = {}): CreateInput => ({
  tokenId: TOKEN,
  userId: USER,
  name: 'ci',
  scopes: ['api'],
  impersonation: false,
  expiresAt: null,
  digest: 'sha256-digest',
  ownerIsAdmin: false,
  ...over,
});

const created = (impersonation: boolean, userId = USER): AccessTokenEvent => ({
  type: 'AccessTokenCreated',
  data: {
    tokenId: TOKEN,
    userId,
    name: 'ci',
    scopes: ['api'],
    impersonation,
    expiresAt: null,
    digest: 'd',
    at: EARLIER,
  },
});
const revoked = (): AccessTokenEvent => ({
  type: 'AccessTokenRevoked',
  data: { tokenId: TOKEN, userId: USER, at: EARLIER },
});

function invalid(fn: () => unknown): Record<string, string[]> {
  let thrown: unknown;
  try {
    fn();
  } catch (e) {
    thrown = e;
  }
  expect(thrown).toBeInstanceOf(Invalid);
  return (thrown as Invalid).fields;
}

function expectNotFound(fn: () => unknown, message: string): void {
  let thrown: unknown;
  try {
    fn();
  } catch (e) {
    thrown = e;
  }
  expect(thrown).toBeInstanceOf(NotFound);
  expect((thrown as NotFound).message).toBe(message);
}

const SCOPES_INVALID = { scopes: ['can only contain available scopes'] };

describe('createToken', () => {
  it('records the token with its digest, never a secret', () => {
    expect(createToken(initial(), input({ scopes: ['api', 'read_user'], expiresAt: '2030-12-31' }), NOW)).toEqual([
      {
        type: 'AccessTokenCreated',
        data: {
          tokenId: TOKEN,
          userId: USER,
          name: 'ci',
          scopes: ['api', 'read_user'],
          impersonation: false,
          expiresAt: '2030-12-31',
          digest: 'sha256-digest',
          at: AT,
        },
      },
    ]);
  });

  it('records each scope once', () => {
    const [e] = createToken(initial(), input({ scopes: ['api', 'read_user', 'api'] }), NOW);
    expect(e.type === 'AccessTokenCreated' && e.data.scopes).toEqual(['api', 'read_user']);
  });

  it('refuses a second creation of the same stream', () => {
    expect(() => createToken(given(created(false)), input(), NOW)).toThrow(/exists already/);
  });

  it('refuses empty scopes', () => {
    expect(invalid(() => createToken(initial(), input({ scopes: [] }), NOW))).toEqual({ scopes: ["can't be blank"] });
    expect(invalid(() => createToken(initial(), input({ scopes: [], impersonation: true }), NOW))).toEqual({
      scopes: ["can't be blank"],
    });
  });

  it.each([['read_registry'], ['API'], [''], ['api', 'admin']])('refuses the unknown scope in %j', (...scopes) => {
    expect(invalid(() => createToken(initial(), input({ scopes, ownerIsAdmin: true }), NOW))).toEqual(SCOPES_INVALID);
  });

  it.each([['read_api'], ['read_repository'], ['write_repository'], ['read_api', 'write_repository']])(
    'grants the later scopes %j on personal and impersonation tokens',
    (...scopes) => {
      expect(createToken(initial(), input({ scopes }), NOW)).toMatchObject([{ data: { scopes } }]);
      expect(createToken(initial(), input({ scopes, impersonation: true }), NOW)).toMatchObject([{ data: { scopes } }]);
    },
  );

  it.each([
    [['api'], true, true],
    [['write_repository'], true, true],
    [['read_repository'], true, false],
    [['read_api'], false, false],
    [['read_user'], false, false],
  ])('lets %j fetch: %s, push: %s over git', (scopes, fetch, push) => {
    expect(gitScopesAllow(scopes, false)).toBe(fetch);
    expect(gitScopesAllow(scopes, true)).toBe(push);
  });

  it("grants sudo on an administrator's personal token", () => {
    const [e] = createToken(initial(), input({ scopes: ['api', 'sudo'], ownerIsAdmin: true }), NOW);
    expect(e).toMatchObject({ type: 'AccessTokenCreated', data: { scopes: ['api', 'sudo'], impersonation: false } });
  });

  it("refuses sudo on anyone else's personal token", () => {
    expect(invalid(() => createToken(initial(), input({ scopes: ['api', 'sudo'] }), NOW))).toEqual(SCOPES_INVALID);
    expect(invalid(() => createToken(initial(), input({ scopes: ['sudo'] }), NOW))).toEqual(SCOPES_INVALID);
  });

  it('allows impersonation tokens api and read_user', () => {
    expect(createToken(initial(), input({ impersonation: true, scopes: ['api', 'read_user'] }), NOW)).toMatchObject([
      { type: 'AccessTokenCreated', data: { impersonation: true, scopes: ['api', 'read_user'] } },
    ]);
    expect(createToken(initial(), input({ impersonation: true, scopes: ['read_user'] }), NOW)).toHaveLength(1);
  });

  it('refuses sudo on an impersonation token, even for an administrator', () => {
    expect(
      invalid(() =>
        createToken(initial(), input({ impersonation: true, scopes: ['api', 'sudo'], ownerIsAdmin: true }), NOW),
      ),
    ).toEqual(SCOPES_INVALID);
    expect(invalid(() => createToken(initial(), input({ impersonation: true, scopes: ['sudo'] }), NOW))).toEqual(
      SCOPES_INVALID,
    );
  });

  it.each(['tomorrow', '2024-02-30', '2024-13-01', '2024-5-6', '2024-05-06T00:00:00Z', ''])(
    'refuses expires_at %j',
    (expiresAt) => {
      expect(invalid(() => createToken(initial(), input({ expiresAt }), NOW))).toEqual({ expires_at: ['is invalid'] });
    },
  );

  // GitLab creates a token with a past expiry; it is simply inactive from the start.
  it('accepts an expiry date in the past', () => {
    expect(createToken(initial(), input({ expiresAt: '2000-01-01' }), NOW)).toHaveLength(1);
  });

  it('refuses a blank or overlong name', () => {
    expect(invalid(() => createToken(initial(), input({ name: '  ' }), NOW))).toEqual({ name: ["can't be blank"] });
    expect(invalid(() => createToken(initial(), input({ name: 'n'.repeat(256) }), NOW))).toEqual({
      name: ['is too long (maximum is 255 characters)'],
    });
  });

  it('reports every failing field at once', () => {
    expect(invalid(() => createToken(initial(), input({ name: '', scopes: [], expiresAt: 'soon' }), NOW))).toEqual({
      name: ["can't be blank"],
      scopes: ["can't be blank"],
      expires_at: ['is invalid'],
    });
  });
});

describe('revokeImpersonationToken', () => {
  const revocation: AccessTokenEvent = { type: 'AccessTokenRevoked', data: { tokenId: TOKEN, userId: USER, at: AT } };

  it("revokes the user's impersonation token", () => {
    expect(revokeImpersonationToken(given(created(true)), USER, NOW)).toEqual([revocation]);
    expect(given(created(true), revoked())).toMatchObject({ revoked: true });
  });

  it('changes nothing the second time', () => {
    expect(revokeImpersonationToken(given(created(true), revoked()), USER, NOW)).toEqual([]);
  });

  it("is NotFound for another user's token", () => {
    expectNotFound(
      () => revokeImpersonationToken(given(created(true, 99)), USER, NOW),
      '404 Impersonation Token Not Found',
    );
  });

  it('is NotFound for a personal token', () => {
    expectNotFound(
      () => revokeImpersonationToken(given(created(false)), USER, NOW),
      '404 Impersonation Token Not Found',
    );
  });

  it('is NotFound for an unknown token', () => {
    expectNotFound(() => revokeImpersonationToken(initial(), USER, NOW), '404 Impersonation Token Not Found');
  });
});

describe('revokeToken', () => {
  it('revokes a personal or impersonation token once', () => {
    expect(revokeToken(given(created(false)), NOW)).toEqual([
      { type: 'AccessTokenRevoked', data: { tokenId: TOKEN, userId: USER, at: AT } },
    ]);
    expect(revokeToken(given(created(true), revoked()), NOW)).toEqual([]);
  });

  it('is NotFound for an unknown token', () => {
    expectNotFound(() => revokeToken(initial(), NOW), '404 Token Not Found');
  });
});

const OWNER = { id: USER, isAdmin: false };
const OTHER = { id: USER + 1, isAdmin: false };
const ADMIN = { id: 1, isAdmin: true };
const revocation = { type: 'AccessTokenRevoked', data: { tokenId: TOKEN, userId: USER, at: AT } };

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('expected a refusal');
}

describe('revokePersonalToken', () => {
  it("revokes the owner's own personal token, and any token for an administrator, once", () => {
    expect(revokePersonalToken(given(created(false)), OWNER, NOW)).toEqual([revocation]);
    expect(revokePersonalToken(given(created(true)), ADMIN, NOW)).toEqual([revocation]);
    expect(revokePersonalToken(given(created(false), revoked()), OWNER, NOW)).toEqual([]);
  });

  it("is a bare 400 for another user's token, or a user's own impersonation token (GitLab's RevokeService)", () => {
    for (const [state, actor] of [
      [given(created(false)), OTHER],
      [given(created(true)), OWNER],
    ] as const) {
      const e = thrown(() => revokePersonalToken(state, actor, NOW));
      expect(e).toBeInstanceOf(BadRequestMessage);
      expect((e as Error).message).toBe('400 Bad request');
    }
  });

  it('is 404 Not found for an unknown token, whoever asks', () => {
    expect((thrown(() => revokePersonalToken(initial(), OWNER, NOW)) as Error).message).toBe('404 Not found');
  });
});

describe('rotateAwayToken', () => {
  it("revokes the owner's token, or any for an administrator", () => {
    expect(rotateAwayToken(given(created(false)), OWNER, NOW)).toEqual([revocation]);
    expect(rotateAwayToken(given(created(true)), ADMIN, NOW)).toEqual([revocation]);
  });

  it('tells only administrators that a token is unknown: 404 for them, 401 for others', () => {
    expect(thrown(() => rotateAwayToken(initial(), ADMIN, NOW))).toBeInstanceOf(NotFound);
    expect(thrown(() => rotateAwayToken(initial(), OWNER, NOW))).toBeInstanceOf(Unauthorized);
    expect(thrown(() => rotateAwayToken(given(created(false)), OTHER, NOW))).toBeInstanceOf(Unauthorized);
  });

  it('refuses a revoked token, and a non-administrator rotating an impersonation token', () => {
    expect((thrown(() => rotateAwayToken(given(created(false), revoked()), OWNER, NOW)) as Error).message).toBe(
      '400 Bad request - Token already revoked',
    );
    expect((thrown(() => rotateAwayToken(given(created(true)), OWNER, NOW)) as Error).message).toBe(
      '400 Bad request - Not permitted to create',
    );
  });

  it('keeps what the successor copies in the state', () => {
    expect(given(created(false))).toMatchObject({ name: 'ci', scopes: ['api'], impersonation: false });
  });

  it('expires the successor a week from today by default', () => {
    expect(rotatedTokenExpiry(NOW)).toBe('2024-05-13');
  });
});

describe('createToken rotatedFrom', () => {
  it('records the rotated token on the successor', () => {
    const [e] = createToken(initial(), input({ rotatedFrom: 3 }), NOW);
    expect(e.type === 'AccessTokenCreated' && e.data.rotatedFrom).toBe(3);
    const [plain] = createToken(initial(), input(), NOW);
    expect(plain.data).not.toHaveProperty('rotatedFrom');
  });
});

describe('evolve', () => {
  it('ignores a revocation of a token it never saw', () => {
    expect(given(revoked())).toEqual({ exists: false });
  });
});

describe('isDate', () => {
  it.each(['2024-05-06', '2024-02-29', '2000-02-29', '1999-12-31', '9999-12-31'])('accepts %j', (value) => {
    expect(isDate(value)).toBe(true);
  });

  it.each([
    '2023-02-29',
    '1900-02-29',
    '2024-02-30',
    '2024-04-31',
    '2024-00-10',
    '2024-13-01',
    '2024-01-00',
    '2024-01-32',
    '2024-5-06',
    '24-05-06',
    '2024/05/06',
    '2024-05-06T00:00:00Z',
    ' 2024-05-06',
    '2024-05-06\n',
    '',
    'abcd-ef-gh',
  ])('refuses %j', (value) => {
    expect(isDate(value)).toBe(false);
  });
});
