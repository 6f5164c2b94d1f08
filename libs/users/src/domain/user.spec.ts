import { Forbidden, Invalid, NotFound } from '@app/platform';
import {
  removeIdentity,
  activate,
  ban,
  deactivate,
  unban,
  addEmail,
  addGpgKey,
  addSshKey,
  block,
  create,
  evolve,
  initial,
  newUserProfile,
  remove,
  removeCustomAttribute,
  removeEmail,
  removeGpgKey,
  removeSshKey,
  setCustomAttribute,
  unblock,
  update,
  type User,
  type UserEvent,
  type UserProfile,
} from './user';
import { PATH_FORMAT_MESSAGE } from './namespace-path';

const NOW = new Date('2024-05-06T07:08:09.000Z');
const AT = NOW.toISOString();
const EARLIER = '2024-01-01T00:00:00.000Z';
const ID = 7;

const given = (...events: UserEvent[]): User => events.reduce(evolve, initial());

const profile = (over: Partial<UserProfile> = {}): UserProfile => ({
  ...newUserProfile({ name: 'Jane Doe', username: 'jane', email: 'jane@example.com' }),
  ...over,
});

const created = (over: Partial<UserProfile> = {}, userId = ID): UserEvent => ({
  type: 'UserCreated',
  data: {
    userId,
    namespaceId: userId + 100,
    ...profile(over),
    passwordDigest: 'digest',
    identities: [],
    confirmedAt: EARLIER,
    at: EARLIER,
  },
});
const updated = (changes: Partial<UserProfile>): UserEvent => ({
  type: 'UserUpdated',
  data: { userId: ID, changes, at: EARLIER },
});
const blocked = (byDirectory = false): UserEvent => ({
  type: 'UserBlocked',
  data: { userId: ID, byDirectory, at: EARLIER },
});
const unblocked = (): UserEvent => ({ type: 'UserUnblocked', data: { userId: ID, at: EARLIER } });
const deleted = (): UserEvent => ({
  type: 'UserDeleted',
  data: { userId: ID, username: 'jane', hardDelete: false, at: EARLIER },
});
const sshKeyAdded = (keyId: number): UserEvent => ({
  type: 'SshKeyAdded',
  data: {
    userId: ID,
    keyId,
    title: 'laptop',
    key: 'ssh-ed25519 AAAA',
    fingerprint: 'aa:bb',
    fingerprintSha256: 'SHA256:x',
    keyType: 'ssh-ed25519',
    at: EARLIER,
  },
});
const sshKeyRemoved = (keyId: number): UserEvent => ({
  type: 'SshKeyRemoved',
  data: { userId: ID, keyId, at: EARLIER },
});
const gpgKeyAdded = (keyId: number): UserEvent => ({
  type: 'GpgKeyAdded',
  data: {
    userId: ID,
    keyId,
    key: '-----BEGIN PGP PUBLIC KEY BLOCK-----',
    fingerprint: 'ABCD',
    primaryKeyId: 'CD',
    at: EARLIER,
  },
});
const gpgKeyRemoved = (keyId: number): UserEvent => ({
  type: 'GpgKeyRemoved',
  data: { userId: ID, keyId, at: EARLIER },
});
const emailAdded = (emailId: number, email: string): UserEvent => ({
  type: 'EmailAdded',
  data: { userId: ID, emailId, email, at: EARLIER },
});
const emailRemoved = (emailId: number): UserEvent => ({
  type: 'EmailRemoved',
  data: { userId: ID, emailId, at: EARLIER },
});
const attributeSet = (key: string, value: string): UserEvent => ({
  type: 'UserCustomAttributeSet',
  data: { userId: ID, key, value, at: EARLIER },
});
const attributeRemoved = (key: string): UserEvent => ({
  type: 'UserCustomAttributeRemoved',
  data: { userId: ID, key, at: EARLIER },
});

/** The field messages of the `Invalid` that `fn` throws. */
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

function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('expected an error');
}

function expectNotFound(fn: () => unknown, message: string): void {
  const e = thrownBy(fn);
  expect(e).toBeInstanceOf(NotFound);
  expect((e as NotFound).message).toBe(message);
}

function expectForbidden(fn: () => unknown, message: string): void {
  const e = thrownBy(fn);
  expect(e).toBeInstanceOf(Forbidden);
  expect((e as Forbidden).message).toBe(message);
}

const newUser = (over: Partial<UserProfile> = {}, password: string | undefined = 'secret-password') =>
  create(
    initial(),
    { userId: ID, namespaceId: 107, profile: profile(over), password, passwordDigest: 'digest', confirmed: true },
    NOW,
  );

const TOO_LONG = 'is too long (maximum is 255 characters)';

describe('create', () => {
  it('records the whole profile, the digest and the confirmation time', () => {
    expect(newUser()).toEqual([
      {
        type: 'UserCreated',
        data: {
          userId: ID,
          namespaceId: 107,
          ...profile(),
          passwordDigest: 'digest',
          identities: [],
          confirmedAt: AT,
          at: AT,
        },
      },
    ]);
  });

  it('carries an identity and leaves an unconfirmed user unconfirmed', () => {
    const identity = { provider: 'ldapmain', externUid: 'uid=jane,ou=people' };
    const [e] = create(
      initial(),
      { userId: ID, namespaceId: 107, profile: profile(), passwordDigest: null, identity, confirmed: false },
      NOW,
    );
    expect(e).toMatchObject({
      type: 'UserCreated',
      data: { identities: [identity], confirmedAt: null, passwordDigest: null },
    });
  });

  it('refuses a second creation of the same stream', () => {
    expect(() =>
      create(
        given(created()),
        { userId: ID, namespaceId: 107, profile: profile(), passwordDigest: null, confirmed: true },
        NOW,
      ),
    ).toThrow(/exists already/);
  });

  it.each([
    ['', ["can't be blank"]],
    ['-jane', [PATH_FORMAT_MESSAGE]],
    ['.jane', [PATH_FORMAT_MESSAGE]],
    ['jane.', [PATH_FORMAT_MESSAGE]],
    ['jane.git', [PATH_FORMAT_MESSAGE]],
    ['jane.atom', [PATH_FORMAT_MESSAGE]],
    ['ja ne', [PATH_FORMAT_MESSAGE]],
    ['jané', [PATH_FORMAT_MESSAGE]],
    ['admin', ['admin is a reserved name']],
    ['Users', ['Users is a reserved name']],
    ['robots.txt', ['robots.txt is a reserved name']],
    ['a'.repeat(256), [TOO_LONG]],
  ])('refuses the username %j', (username, messages) => {
    expect(invalid(() => newUser({ username }))).toEqual({ username: messages });
  });

  it.each(['j', 'jane_doe', 'jane-doe', 'jane.doe', '_jane', '42', 'jane.gitlab', 'a'.repeat(255)])(
    'accepts the username %j',
    (username) => {
      expect(newUser({ username })).toHaveLength(1);
    },
  );

  it.each([
    ['', "can't be blank"],
    ['jane', 'is invalid'],
    ['jane@', 'is invalid'],
    ['@example.com', 'is invalid'],
    ['jane doe@example.com', 'is invalid'],
    ['jane@@example.com', 'is invalid'],
    [`${'a'.repeat(250)}@example.com`, TOO_LONG],
  ])('refuses the e-mail %j', (email, message) => {
    expect(invalid(() => newUser({ email }))).toEqual({ email: [message] });
  });

  it.each(['', '   '])('refuses the blank name %j', (name) => {
    expect(invalid(() => newUser({ name }))).toEqual({ name: ["can't be blank"] });
  });

  it('refuses a name over 255 characters', () => {
    expect(invalid(() => newUser({ name: 'n'.repeat(256) }))).toEqual({ name: [TOO_LONG] });
  });

  it('refuses a password under 8 characters and accepts 8', () => {
    expect(invalid(() => newUser({}, 'short12'))).toEqual({ password: ['is too short (minimum is 8 characters)'] });
    expect(newUser({}, '12345678')).toHaveLength(1);
  });

  it('refuses a password over 128 characters', () => {
    expect(invalid(() => newUser({}, 'p'.repeat(129)))).toEqual({
      password: ['is too long (maximum is 128 characters)'],
    });
  });

  it('needs no password (reset_password, or a directory identity)', () => {
    expect(newUser({}, undefined)).toHaveLength(1);
  });

  it('refuses a negative projects_limit and accepts 0', () => {
    expect(invalid(() => newUser({ projectsLimit: -1 }))).toEqual({
      projects_limit: ['must be greater than or equal to 0'],
    });
    expect(newUser({ projectsLimit: 0 })).toHaveLength(1);
  });

  it('refuses a projects_limit beyond a 32-bit integer', () => {
    expect(invalid(() => newUser({ projectsLimit: 2147483648 }))).toEqual({
      projects_limit: ['must be less than or equal to 2147483647'],
    });
  });

  it.each([
    ['bio', 'bio'],
    ['organization', 'organization'],
    ['location', 'location'],
    ['websiteUrl', 'website_url'],
    ['careerProfile', 'career_profile'],
  ] as const)('refuses a %s over 255 characters, under its wire name', (field, wire) => {
    expect(invalid(() => newUser({ [field]: 'x'.repeat(256) }))).toEqual({ [wire]: [TOO_LONG] });
    expect(newUser({ [field]: 'x'.repeat(255) })).toHaveLength(1);
  });

  it('reports every failing field at once', () => {
    expect(invalid(() => newUser({ username: 'api', email: 'nope', name: '', bio: 'b'.repeat(256) }, 'short'))).toEqual(
      {
        username: ['api is a reserved name'],
        email: ['is invalid'],
        name: ["can't be blank"],
        password: ['is too short (minimum is 8 characters)'],
        bio: [TOO_LONG],
      },
    );
  });

  it('refuses an identity without provider or extern_uid', () => {
    const fields = invalid(() =>
      create(
        initial(),
        {
          userId: ID,
          namespaceId: 107,
          profile: profile(),
          passwordDigest: null,
          identity: { provider: '', externUid: '' },
          confirmed: true,
        },
        NOW,
      ),
    );
    expect(fields).toEqual({ provider: ["can't be blank"], extern_uid: ["can't be blank"] });
  });
});

describe('update', () => {
  const current = profile();

  it('records only the fields that change', () => {
    const changes = { name: 'Jane Roe', bio: 'Hello', email: 'jane@example.com', username: 'jane' };
    expect(update(given(created()), { changes, current }, NOW)).toEqual([
      { type: 'UserUpdated', data: { userId: ID, changes: { name: 'Jane Roe', bio: 'Hello' }, at: AT } },
    ]);
  });

  it("swaps the primary address with one of the user's own secondary addresses", () => {
    const state = given(created(), emailAdded(3, 'second@example.com'));
    expect(update(state, { changes: { email: 'SECOND@example.com' }, current, swapEmailId: 9 }, NOW)).toEqual([
      { type: 'EmailRemoved', data: { userId: ID, emailId: 3, at: AT } },
      { type: 'UserUpdated', data: { userId: ID, changes: { email: 'SECOND@example.com' }, at: AT } },
      { type: 'EmailAdded', data: { userId: ID, emailId: 9, email: 'jane@example.com', at: AT } },
    ]);
    // Another address is an ordinary change.
    expect(update(state, { changes: { email: 'new@example.com' }, current, swapEmailId: 9 }, NOW)).toEqual([
      { type: 'UserUpdated', data: { userId: ID, changes: { email: 'new@example.com' }, at: AT } },
    ]);
  });

  it('appends nothing when nothing changes', () => {
    expect(
      update(given(created()), { changes: { name: 'Jane Doe', bio: null, isAdmin: false }, current }, NOW),
    ).toEqual([]);
    expect(update(given(created()), { changes: {}, current }, NOW)).toEqual([]);
  });

  it('ignores fields that are present but undefined', () => {
    expect(update(given(created()), { changes: { name: undefined }, current }, NOW)).toEqual([]);
  });

  it('records a new password even when no profile field changes', () => {
    expect(
      update(given(created()), { changes: {}, current, password: 'new-password', passwordDigest: 'new' }, NOW),
    ).toEqual([{ type: 'UserUpdated', data: { userId: ID, changes: {}, passwordDigest: 'new', at: AT } }]);
  });

  it('records an identity', () => {
    const identity = { provider: 'github', externUid: '123' };
    expect(update(given(created()), { changes: {}, current, identity }, NOW)).toEqual([
      { type: 'UserUpdated', data: { userId: ID, changes: {}, identity, at: AT } },
    ]);
  });

  it('validates what it is given', () => {
    expect(
      invalid(() => update(given(created()), { changes: { username: 'jane.git', projectsLimit: -5 }, current }, NOW)),
    ).toEqual({
      username: [PATH_FORMAT_MESSAGE],
      projects_limit: ['must be greater than or equal to 0'],
    });
    expect(
      invalid(() => update(given(created()), { changes: {}, current, password: 'short', passwordDigest: 'x' }, NOW)),
    ).toEqual({
      password: ['is too short (minimum is 8 characters)'],
    });
  });

  it('is NotFound for an unknown user', () => {
    expectNotFound(() => update(initial(), { changes: { name: 'X' }, current }, NOW), '404 User Not Found');
  });

  it('keeps the new username and e-mail in the state', () => {
    const s = given(created(), updated({ username: 'jroe', email: 'jroe@example.com' }));
    expect(s).toMatchObject({ exists: true, username: 'jroe', email: 'jroe@example.com' });
    expect(remove(s, false, NOW)).toEqual([
      { type: 'UserDeleted', data: { userId: ID, username: 'jroe', hardDelete: false, at: AT } },
    ]);
  });
});

describe('block and unblock', () => {
  const blockEvent = (byDirectory: boolean): UserEvent => ({
    type: 'UserBlocked',
    data: { userId: ID, byDirectory, at: AT },
  });
  const unblockEvent: UserEvent = { type: 'UserUnblocked', data: { userId: ID, at: AT } };

  it('blocks an active user', () => {
    expect(block(given(created()), NOW)).toEqual([blockEvent(false)]);
    expect(given(created(), blocked())).toMatchObject({ state: 'blocked' });
  });

  it('does nothing to a blocked user (GitLab answers false)', () => {
    expect(block(given(created(), blocked()), NOW)).toEqual([]);
  });

  it('blocks again after an unblock', () => {
    expect(block(given(created(), blocked(), unblocked()), NOW)).toEqual([blockEvent(false)]);
  });

  it('unblocks a blocked user, and does nothing to an active one', () => {
    expect(unblock(given(created(), blocked()), NOW)).toEqual([unblockEvent]);
    expect(unblock(given(created()), NOW)).toEqual([]);
    expect(unblock(given(created(), blocked(), unblocked()), NOW)).toEqual([]);
  });

  it('refuses API block and unblock of a user blocked by the directory', () => {
    const ldapBlocked = given(created(), blocked(true));
    expect(ldapBlocked).toMatchObject({ state: 'ldap_blocked' });
    expectForbidden(() => block(ldapBlocked, NOW), '403 Forbidden - LDAP blocked users cannot be modified by the API');
    expectForbidden(
      () => unblock(ldapBlocked, NOW),
      '403 Forbidden - LDAP blocked users cannot be unblocked by the API',
    );
  });

  it('lets the directory block active and blocked users, once', () => {
    expect(block(given(created()), NOW, true)).toEqual([blockEvent(true)]);
    expect(block(given(created(), blocked()), NOW, true)).toEqual([blockEvent(true)]);
    expect(block(given(created(), blocked(true)), NOW, true)).toEqual([]);
  });

  it('lets the directory unblock what it blocked', () => {
    expect(unblock(given(created(), blocked(true)), NOW, true)).toEqual([unblockEvent]);
    expect(given(created(), blocked(true), unblocked())).toMatchObject({ state: 'active' });
    expect(unblock(given(created()), NOW, true)).toEqual([]);
  });

  it('is NotFound for an unknown user', () => {
    expectNotFound(() => block(initial(), NOW), '404 User Not Found');
    expectNotFound(() => unblock(initial(), NOW), '404 User Not Found');
  });
});

describe('activate, deactivate, ban and unban', () => {
  const event = (type: 'UserDeactivated' | 'UserActivated' | 'UserBanned' | 'UserUnbanned'): UserEvent => ({
    type,
    data: { userId: ID, at: AT },
  });
  const later = (type: 'UserDeactivated' | 'UserActivated' | 'UserBanned' | 'UserUnbanned'): UserEvent => ({
    type,
    data: { userId: ID, at: EARLIER },
  });
  const deactivatedUser = () => given(created(), later('UserDeactivated'));
  const bannedUser = () => given(created(), later('UserBanned'));

  it('deactivates a user never active, or last active more than 90 days ago', () => {
    expect(deactivate(given(created()), null, NOW)).toEqual([event('UserDeactivated')]);
    expect(deactivate(given(created()), '2024-02-06', NOW)).toEqual([event('UserDeactivated')]);
    expect(deactivatedUser()).toMatchObject({ state: 'deactivated' });
  });

  it('refuses to deactivate a user active in the last 90 days', () => {
    expectForbidden(
      () => deactivate(given(created()), '2024-02-07', NOW),
      '403 Forbidden - The user you are trying to deactivate has been active in the past 90 days and cannot be deactivated',
    );
  });

  it('does nothing to a deactivated user (GitLab answers null)', () => {
    expect(deactivate(deactivatedUser(), '2024-05-06', NOW)).toEqual([]);
  });

  it('refuses to deactivate blocked, directory-blocked and banned users, and internal ones', () => {
    for (const s of [given(created(), blocked()), given(created(), blocked(true)), bannedUser()])
      expectForbidden(
        () => deactivate(s, null, NOW),
        '403 Forbidden - A blocked user cannot be deactivated by the API',
      );
    const ghost = given({ ...created(), data: { ...(created().data as object), ghost: true } } as UserEvent);
    expectForbidden(
      () => deactivate(ghost, null, NOW),
      '403 Forbidden - An internal user cannot be deactivated by the API',
    );
  });

  it('activates a deactivated user, does nothing to an active one, refuses a blocked or banned one', () => {
    expect(activate(deactivatedUser(), NOW)).toEqual([event('UserActivated')]);
    expect(given(created(), later('UserDeactivated'), later('UserActivated'))).toMatchObject({ state: 'active' });
    expect(activate(given(created()), NOW)).toEqual([]);
    for (const s of [given(created(), blocked()), bannedUser()])
      expectForbidden(() => activate(s, NOW), '403 Forbidden - A blocked user must be unblocked to be activated');
  });

  it('bans only an active user, with the service message as is', () => {
    expect(ban(given(created()), NOW)).toEqual([event('UserBanned')]);
    expect(bannedUser()).toMatchObject({ state: 'banned' });
    expectForbidden(() => ban(given(created(), blocked()), NOW), 'You cannot ban blocked users.');
    expectForbidden(() => ban(deactivatedUser(), NOW), 'You cannot ban deactivated users.');
    expectForbidden(() => ban(bannedUser(), NOW), 'You cannot ban banned users.');
  });

  it('unbans only a banned user', () => {
    expect(unban(bannedUser(), NOW)).toEqual([event('UserUnbanned')]);
    expect(given(created(), later('UserBanned'), later('UserUnbanned'))).toMatchObject({ state: 'active' });
    expectForbidden(() => unban(given(created()), NOW), 'You cannot unban active users.');
  });

  it('blocks deactivated and banned users, but refuses to unblock a deactivated one', () => {
    expect(block(deactivatedUser(), NOW)).toHaveLength(1);
    expect(block(bannedUser(), NOW)).toHaveLength(1);
    expectForbidden(
      () => unblock(deactivatedUser(), NOW),
      '403 Forbidden - Deactivated users cannot be unblocked by the API',
    );
  });

  it('is NotFound for an unknown user', () => {
    expectNotFound(() => deactivate(initial(), null, NOW), '404 User Not Found');
    expectNotFound(() => ban(initial(), NOW), '404 User Not Found');
  });
});

describe('removeIdentity', () => {
  const withIdentity = (): UserEvent => {
    const e = created();
    return { ...e, data: { ...(e.data as object), identities: [{ provider: 'github', externUid: 'g' }] } } as UserEvent;
  };

  it('removes the identity of a provider, then answers 404 Identity', () => {
    const removed: UserEvent = { type: 'UserIdentityRemoved', data: { userId: ID, provider: 'github', at: AT } };
    expect(removeIdentity(given(withIdentity()), 'github', NOW)).toEqual([removed]);
    expectNotFound(() => removeIdentity(given(withIdentity(), removed), 'github', NOW), '404 Identity Not Found');
  });

  it('knows identities set by an update, and no provider by another name', () => {
    const update: UserEvent = {
      type: 'UserUpdated',
      data: { userId: ID, changes: {}, identity: { provider: 'ldapmain', externUid: 'l' }, at: EARLIER },
    };
    expect(removeIdentity(given(created(), update), 'ldapmain', NOW)).toHaveLength(1);
    expectNotFound(() => removeIdentity(given(created(), update), 'LDAPMAIN', NOW), '404 Identity Not Found');
  });
});

describe('remove', () => {
  it.each([true, false])('carries hardDelete=%s and the username', (hardDelete) => {
    expect(remove(given(created()), hardDelete, NOW)).toEqual([
      { type: 'UserDeleted', data: { userId: ID, username: 'jane', hardDelete, at: AT } },
    ]);
  });

  it('is NotFound for an unknown user', () => {
    expectNotFound(() => remove(initial(), false, NOW), '404 User Not Found');
  });
});

describe('a deleted user', () => {
  const gone = () =>
    given(created(), sshKeyAdded(1), emailAdded(2, 'other@example.com'), attributeSet('k', 'v'), deleted());

  it('folds to a user that does not exist', () => {
    expect(gone()).toEqual({ exists: false });
  });

  it('ignores later events', () => {
    expect(given(created(), deleted(), updated({ name: 'X' }), blocked(), sshKeyAdded(3))).toEqual({ exists: false });
  });

  it('answers every decision with NotFound', () => {
    const s = gone();
    const decisions: (() => unknown)[] = [
      () => update(s, { changes: { name: 'X' }, current: profile() }, NOW),
      () => block(s, NOW),
      () => unblock(s, NOW),
      () => remove(s, true, NOW),
      () =>
        addSshKey(
          s,
          {
            keyId: 9,
            title: 't',
            key: 'k',
            fingerprint: 'f',
            fingerprintSha256: 'f',
            keyType: 'ssh-rsa',
            expiresAt: null,
          },
          NOW,
        ),
      () => removeSshKey(s, 1, NOW),
      () => addGpgKey(s, { keyId: 9, key: 'k', fingerprint: 'f', primaryKeyId: 'p' }, NOW),
      () => addEmail(s, 9, 'new@example.com', NOW),
      () => removeEmail(s, 2, NOW),
      () => setCustomAttribute(s, 'k', 'w', NOW),
      () => removeCustomAttribute(s, 'k', NOW),
    ];
    for (const decide of decisions) expectNotFound(decide, '404 User Not Found');
  });
});

describe('SSH keys', () => {
  const key = {
    keyId: 11,
    title: 'laptop',
    key: 'ssh-ed25519 AAAA',
    fingerprint: 'aa:bb',
    fingerprintSha256: 'SHA256:x',
    keyType: 'ssh-ed25519',
    expiresAt: null as string | null,
  };

  it('adds a key', () => {
    expect(addSshKey(given(created()), key, NOW)).toEqual([
      { type: 'SshKeyAdded', data: { userId: ID, ...key, at: AT } },
    ]);
  });

  it('adds a key that expires later, and refuses one whose expiry has passed (GitLab: key has expired)', () => {
    const later = { ...key, expiresAt: '2024-05-07T00:00:00.000Z' };
    expect(addSshKey(given(created()), later, NOW)).toEqual([
      { type: 'SshKeyAdded', data: { userId: ID, ...later, at: AT } },
    ]);
    expect(invalid(() => addSshKey(given(created()), { ...key, expiresAt: '2024-05-06T00:00:00.000Z' }, NOW))).toEqual({
      key: ['has expired'],
    });
  });

  it('refuses a blank or overlong title', () => {
    expect(invalid(() => addSshKey(given(created()), { ...key, title: ' ' }, NOW))).toEqual({
      title: ["can't be blank"],
    });
    expect(invalid(() => addSshKey(given(created()), { ...key, title: 't'.repeat(256) }, NOW))).toEqual({
      title: [TOO_LONG],
    });
  });

  it('removes a key the user has', () => {
    expect(removeSshKey(given(created(), sshKeyAdded(11), sshKeyAdded(12)), 12, NOW)).toEqual([
      { type: 'SshKeyRemoved', data: { userId: ID, keyId: 12, at: AT } },
    ]);
  });

  it('is NotFound(Key) for an unknown or already removed key', () => {
    expectNotFound(() => removeSshKey(given(created()), 11, NOW), '404 Key Not Found');
    expectNotFound(
      () => removeSshKey(given(created(), sshKeyAdded(11), sshKeyRemoved(11)), 11, NOW),
      '404 Key Not Found',
    );
  });

  it('does not let a GPG key id stand for an SSH key', () => {
    expectNotFound(() => removeSshKey(given(created(), gpgKeyAdded(11)), 11, NOW), '404 Key Not Found');
  });
});

describe('GPG keys', () => {
  const key = { keyId: 21, key: '-----BEGIN PGP PUBLIC KEY BLOCK-----', fingerprint: 'ABCD', primaryKeyId: 'CD' };

  it('adds a key', () => {
    expect(addGpgKey(given(created()), key, NOW)).toEqual([
      { type: 'GpgKeyAdded', data: { userId: ID, ...key, at: AT } },
    ]);
  });

  it('removes a key the user has', () => {
    expect(removeGpgKey(given(created(), gpgKeyAdded(21)), 21, NOW)).toEqual([
      { type: 'GpgKeyRemoved', data: { userId: ID, keyId: 21, at: AT } },
    ]);
  });

  it('is NotFound(GPG Key) for an unknown or already removed key', () => {
    expectNotFound(() => removeGpgKey(given(created(), sshKeyAdded(21)), 21, NOW), '404 GPG Key Not Found');
    expectNotFound(
      () => removeGpgKey(given(created(), gpgKeyAdded(21), gpgKeyRemoved(21)), 21, NOW),
      '404 GPG Key Not Found',
    );
  });
});

describe('e-mails', () => {
  it('adds a secondary address', () => {
    expect(addEmail(given(created()), 31, 'work@example.com', NOW)).toEqual([
      { type: 'EmailAdded', data: { userId: ID, emailId: 31, email: 'work@example.com', at: AT } },
    ]);
  });

  it('stores the address stripped and lower-cased, as GitLab does', () => {
    expect(addEmail(given(created()), 31, '  Work@Example.COM ', NOW)).toEqual([
      { type: 'EmailAdded', data: { userId: ID, emailId: 31, email: 'work@example.com', at: AT } },
    ]);
  });

  it.each(['jane@example.com', 'JANE@Example.COM'])('refuses the own primary address %j', (email) => {
    expect(invalid(() => addEmail(given(created()), 31, email, NOW))).toEqual({ email: ['has already been taken'] });
  });

  it('compares with the primary address as last updated', () => {
    const s = given(created(), updated({ email: 'new@example.com' }));
    expect(invalid(() => addEmail(s, 31, 'new@example.com', NOW))).toEqual({ email: ['has already been taken'] });
    expect(addEmail(s, 31, 'jane@example.com', NOW)).toHaveLength(1);
  });

  it('refuses an address the user already has as a secondary one', () => {
    const s = given(created(), emailAdded(31, 'work@example.com'));
    expect(invalid(() => addEmail(s, 32, 'Work@example.com', NOW))).toEqual({ email: ['has already been taken'] });
  });

  it('accepts a secondary address again once it was removed', () => {
    expect(
      addEmail(given(created(), emailAdded(31, 'work@example.com'), emailRemoved(31)), 32, 'work@example.com', NOW),
    ).toHaveLength(1);
  });

  it.each([
    ['', "can't be blank"],
    ['not-an-address', 'is invalid'],
    [`${'a'.repeat(250)}@example.com`, TOO_LONG],
  ])('refuses %j', (email, message) => {
    expect(invalid(() => addEmail(given(created()), 31, email, NOW))).toEqual({ email: [message] });
  });

  it('removes an address the user has', () => {
    expect(removeEmail(given(created(), emailAdded(31, 'work@example.com')), 31, NOW)).toEqual([
      { type: 'EmailRemoved', data: { userId: ID, emailId: 31, at: AT } },
    ]);
  });

  it('is NotFound(Email) for an unknown or already removed address', () => {
    expectNotFound(() => removeEmail(given(created()), 31, NOW), '404 Email Not Found');
    expectNotFound(
      () => removeEmail(given(created(), emailAdded(31, 'work@example.com'), emailRemoved(31)), 31, NOW),
      '404 Email Not Found',
    );
  });
});

describe('custom attributes', () => {
  it('sets a new attribute, and a new value for an existing one', () => {
    expect(setCustomAttribute(given(created()), 'team', 'blue', NOW)).toEqual([
      { type: 'UserCustomAttributeSet', data: { userId: ID, key: 'team', value: 'blue', at: AT } },
    ]);
    expect(setCustomAttribute(given(created(), attributeSet('team', 'blue')), 'team', 'red', NOW)).toEqual([
      { type: 'UserCustomAttributeSet', data: { userId: ID, key: 'team', value: 'red', at: AT } },
    ]);
  });

  it('appends nothing when the value is the same', () => {
    expect(setCustomAttribute(given(created(), attributeSet('team', 'blue')), 'team', 'blue', NOW)).toEqual([]);
  });

  it('refuses a blank or overlong key or value', () => {
    expect(invalid(() => setCustomAttribute(given(created()), '', '', NOW))).toEqual({
      key: ["can't be blank"],
      value: ["can't be blank"],
    });
    expect(invalid(() => setCustomAttribute(given(created()), 'k'.repeat(256), 'v'.repeat(256), NOW))).toEqual({
      key: [TOO_LONG],
      value: [TOO_LONG],
    });
  });

  it('removes an attribute the user has', () => {
    expect(removeCustomAttribute(given(created(), attributeSet('team', 'blue')), 'team', NOW)).toEqual([
      { type: 'UserCustomAttributeRemoved', data: { userId: ID, key: 'team', at: AT } },
    ]);
  });

  it('is NotFound for an unknown or already removed attribute', () => {
    expectNotFound(() => removeCustomAttribute(given(created()), 'team', NOW), '404 Custom Attribute Not Found');
    expectNotFound(
      () =>
        removeCustomAttribute(given(created(), attributeSet('team', 'blue'), attributeRemoved('team')), 'team', NOW),
      '404 Custom Attribute Not Found',
    );
  });

  it.each(['constructor', 'toString', '__proto__', 'hasOwnProperty'])(
    'does not take the inherited %j for an attribute',
    (key) => {
      expectNotFound(() => removeCustomAttribute(given(created()), key, NOW), '404 Custom Attribute Not Found');
      expect(setCustomAttribute(given(created()), key, 'v', NOW)).toHaveLength(1);
    },
  );

  it('keeps an attribute called __proto__ as data', () => {
    const s = given(created(), attributeSet('__proto__', 'v'));
    expect(setCustomAttribute(s, '__proto__', 'v', NOW)).toEqual([]);
    expect(removeCustomAttribute(s, '__proto__', NOW)).toHaveLength(1);
    expectNotFound(
      () =>
        removeCustomAttribute(
          given(created(), attributeSet('__proto__', 'v'), attributeRemoved('__proto__')),
          '__proto__',
          NOW,
        ),
      '404 Custom Attribute Not Found',
    );
  });
});
