import {
  assertNever,
  FieldErrors,
  Forbidden,
  NotFound,
  checkCustomAttribute,
  holdsCustomAttribute,
} from '@app/platform';
import { namespacePathErrors } from './namespace-path';
import { USER_SETTING_LIST, userSettingsFrom, type UserSettings } from './user-settings';

/*
 * The user aggregate: identity, profile and the credentials a user owns (SSH keys, GPG keys,
 * secondary e-mails, custom attributes). Stream `user-<id>`.
 * Personal data (e-mail, name, profile) is in these payloads; erasing it from the log on deletion
 * is not done yet (README, "Not done yet").
 */

/** GitLab's `users.state`: `deactivated` since 12.4, `banned` since 14.3 (both refused on the API and git, as blocked). */
export type UserState = 'active' | 'blocked' | 'ldap_blocked' | 'deactivated' | 'banned';

export interface Identity {
  provider: string;
  externUid: string;
}

/**
 * Profile fields that POST and PUT /users accept, with GitLab's wire names mapped to ours: the settings
 * of domain/user-settings.ts, and the identity fields each handled on its own (see there).
 */
export type UserProfile = UserSettings & {
  username: string;
  email: string;
  /** The avatar's stored file name, null without one. */
  avatar: string | null;
};

/** What an administrator gives for a new user (POST /users, `lode create-user`); null or absent takes the default. */
export type NewUserProfile = { name: string; username: string; email: string } & {
  [K in keyof UserSettings]?: UserSettings[K] | null;
};

/** A new user's profile with the table's defaults for what was not given (a projects limit of 100,000), no avatar. */
export function newUserProfile(p: NewUserProfile): UserProfile {
  return { ...userSettingsFrom(p), username: p.username, email: p.email, avatar: null };
}

export type UserEvent =
  // `namespaceId`: the id of the user's personal namespace, which the groups context projects.
  // `ghost`: GitLab's ghost user, who inherits what deleted users leave behind.
  | {
      type: 'UserCreated';
      data: UserProfile & {
        userId: number;
        namespaceId: number;
        passwordDigest: string | null;
        identities: Identity[];
        confirmedAt: string | null;
        at: string;
        ghost?: boolean;
      };
    }
  | {
      type: 'UserUpdated';
      data: { userId: number; changes: Partial<UserProfile>; passwordDigest?: string; identity?: Identity; at: string };
    }
  | { type: 'UserBlocked'; data: { userId: number; byDirectory: boolean; at: string } }
  | { type: 'UserUnblocked'; data: { userId: number; at: string } }
  | { type: 'UserIdentityRemoved'; data: { userId: number; provider: string; at: string } }
  | { type: 'UserDeactivated'; data: { userId: number; at: string } }
  | { type: 'UserActivated'; data: { userId: number; at: string } }
  | { type: 'UserBanned'; data: { userId: number; at: string } }
  | { type: 'UserUnbanned'; data: { userId: number; at: string } }
  // `ghostUserId`: on a soft delete, who takes over the user's contributions.
  | {
      type: 'UserDeleted';
      data: { userId: number; username: string; hardDelete: boolean; at: string; ghostUserId?: number };
    }
  | {
      type: 'SshKeyAdded';
      data: {
        userId: number;
        keyId: number;
        title: string;
        key: string;
        fingerprint: string;
        fingerprintSha256: string;
        keyType: string;
        /** ISO 8601; absent (older events) or null: the key never expires. */
        expiresAt?: string | null;
        at: string;
      };
    }
  | { type: 'SshKeyRemoved'; data: { userId: number; keyId: number; at: string } }
  | {
      type: 'GpgKeyAdded';
      data: { userId: number; keyId: number; key: string; fingerprint: string; primaryKeyId: string; at: string };
    }
  | { type: 'GpgKeyRemoved'; data: { userId: number; keyId: number; at: string } }
  | { type: 'EmailAdded'; data: { userId: number; emailId: number; email: string; at: string } }
  | { type: 'EmailRemoved'; data: { userId: number; emailId: number; at: string } }
  | { type: 'UserCustomAttributeSet'; data: { userId: number; key: string; value: string; at: string } }
  | { type: 'UserCustomAttributeRemoved'; data: { userId: number; key: string; at: string } };

export type User =
  | { exists: false }
  | {
      exists: true;
      userId: number;
      username: string;
      email: string;
      state: UserState;
      /** GitLab's internal users (here the ghost), whom no administrator may deactivate. */
      internal: boolean;
      /** The providers of the user's identities (one identity per provider). */
      identityProviders: string[];
      sshKeys: number[];
      gpgKeys: number[];
      emails: Record<number, string>;
      customAttributes: Record<string, string>;
    };

export const initial = (): User => ({ exists: false });

export function evolve(s: User, e: UserEvent): User {
  if (e.type === 'UserCreated') {
    const d = e.data;
    return {
      exists: true,
      userId: d.userId,
      username: d.username,
      email: d.email,
      state: 'active',
      internal: d.ghost === true,
      identityProviders: d.identities.map((i) => i.provider),
      sshKeys: [],
      gpgKeys: [],
      emails: {},
      customAttributes: {},
    };
  }
  if (!s.exists) return s;
  switch (e.type) {
    case 'UserUpdated': {
      const provider = e.data.identity?.provider;
      return {
        ...s,
        username: e.data.changes.username ?? s.username,
        email: e.data.changes.email ?? s.email,
        identityProviders:
          provider === undefined || s.identityProviders.includes(provider)
            ? s.identityProviders
            : [...s.identityProviders, provider],
      };
    }
    case 'UserIdentityRemoved':
      return { ...s, identityProviders: s.identityProviders.filter((p) => p !== e.data.provider) };
    case 'UserBlocked':
      return { ...s, state: e.data.byDirectory ? 'ldap_blocked' : 'blocked' };
    case 'UserUnblocked':
    case 'UserActivated':
    case 'UserUnbanned':
      return { ...s, state: 'active' };
    case 'UserDeactivated':
      return { ...s, state: 'deactivated' };
    case 'UserBanned':
      return { ...s, state: 'banned' };
    case 'UserDeleted':
      return { exists: false };
    case 'SshKeyAdded':
      return { ...s, sshKeys: [...s.sshKeys, e.data.keyId] };
    case 'SshKeyRemoved':
      return { ...s, sshKeys: s.sshKeys.filter((k) => k !== e.data.keyId) };
    case 'GpgKeyAdded':
      return { ...s, gpgKeys: [...s.gpgKeys, e.data.keyId] };
    case 'GpgKeyRemoved':
      return { ...s, gpgKeys: s.gpgKeys.filter((k) => k !== e.data.keyId) };
    case 'EmailAdded':
      return { ...s, emails: { ...s.emails, [e.data.emailId]: e.data.email } };
    case 'EmailRemoved': {
      const emails = { ...s.emails };
      delete emails[e.data.emailId];
      return { ...s, emails };
    }
    case 'UserCustomAttributeSet':
      return { ...s, customAttributes: { ...s.customAttributes, [e.data.key]: e.data.value } };
    case 'UserCustomAttributeRemoved': {
      const customAttributes = { ...s.customAttributes };
      delete customAttributes[e.data.key];
      return { ...s, customAttributes };
    }
    default:
      return assertNever(e);
  }
}

export const userDecider = { initial, evolve };

type Existing = Extract<User, { exists: true }>;

function existing(s: User): Existing {
  if (!s.exists) throw new NotFound('User');
  return s;
}

const EMAIL = /^[^@\s]+@[^@\s]+$/;
const MAX = 255;
const tooLong = (max: number) => `is too long (maximum is ${max} characters)`;

/**
 * GitLab's model validations for a user's fields; only the fields present are checked. The settings'
 * checks are their entries' (domain/user-settings.ts), in the table's order.
 */
export function validateProfile(
  p: Partial<UserProfile>,
  password: string | undefined,
  errors = new FieldErrors(),
): FieldErrors {
  if (p.username !== undefined) for (const m of namespacePathErrors(p.username, true)) errors.add('username', m);
  if (p.email !== undefined) {
    if (!p.email) errors.add('email', "can't be blank");
    else if (p.email.length > MAX) errors.add('email', tooLong(MAX));
    else if (!EMAIL.test(p.email)) errors.add('email', 'is invalid');
  }
  for (const s of USER_SETTING_LIST) {
    const value = p[s.key];
    if (value !== undefined && s.check) for (const m of s.check(value)) errors.add(s.param, m);
    // The password's messages have always followed the name's in the 400: its keys keep their order.
    if (s.key === 'name') validatePassword(password, errors);
  }
  return errors;
}

function validatePassword(password: string | undefined, errors: FieldErrors): void {
  if (password === undefined) return;
  if (password.length < 8) errors.add('password', 'is too short (minimum is 8 characters)');
  else if (password.length > 128) errors.add('password', 'is too long (maximum is 128 characters)');
}

export function validateIdentity(identity: Identity | undefined, errors: FieldErrors): void {
  if (!identity) return;
  if (!identity.provider || identity.provider.length > MAX)
    errors.add('provider', identity.provider ? tooLong(MAX) : "can't be blank");
  if (!identity.externUid || identity.externUid.length > MAX)
    errors.add('extern_uid', identity.externUid ? tooLong(MAX) : "can't be blank");
}

export function create(
  s: User,
  input: {
    userId: number;
    namespaceId: number;
    profile: UserProfile;
    password?: string;
    passwordDigest: string | null;
    identity?: Identity;
    confirmed: boolean;
  },
  now: Date,
): UserEvent[] {
  if (s.exists) throw new Error(`user ${input.userId} exists already`);
  const errors = validateProfile(input.profile, input.password);
  validateIdentity(input.identity, errors);
  errors.throwIfAny();
  const at = now.toISOString();
  return [
    {
      type: 'UserCreated',
      data: {
        userId: input.userId,
        namespaceId: input.namespaceId,
        ...input.profile,
        passwordDigest: input.passwordDigest,
        identities: input.identity ? [input.identity] : [],
        confirmedAt: input.confirmed ? at : null,
        at,
      },
    },
  ];
}

/**
 * Only what really changes is recorded; a PUT that changes nothing appends nothing.
 * GitLab quirk (User#update_emails_with_primary_email): making one of the user's own secondary
 * addresses the primary one swaps them, the old primary becoming a secondary (`swapEmailId`).
 */
export function update(
  s: User,
  input: {
    changes: Partial<UserProfile>;
    current: Partial<UserProfile>;
    password?: string;
    passwordDigest?: string;
    identity?: Identity;
    swapEmailId?: number;
  },
  now: Date,
): UserEvent[] {
  const u = existing(s);
  const errors = validateProfile(input.changes, input.password);
  validateIdentity(input.identity, errors);
  errors.throwIfAny();
  const changes: Partial<UserProfile> = {};
  for (const [k, v] of Object.entries(input.changes) as [keyof UserProfile, unknown][]) {
    if (v !== undefined && input.current[k] !== v) (changes as Record<string, unknown>)[k] = v;
  }
  if (!Object.keys(changes).length && !input.passwordDigest && !input.identity) return [];
  const data: Extract<UserEvent, { type: 'UserUpdated' }>['data'] = {
    userId: u.userId,
    changes,
    at: now.toISOString(),
  };
  if (input.passwordDigest) data.passwordDigest = input.passwordDigest;
  if (input.identity) data.identity = input.identity;
  const updated: UserEvent = { type: 'UserUpdated', data };
  const secondary =
    changes.email === undefined
      ? undefined
      : Object.entries(u.emails).find(([, e]) => e.toLowerCase() === changes.email!.toLowerCase());
  if (!secondary || input.swapEmailId === undefined) return [updated];
  const at = now.toISOString();
  return [
    { type: 'EmailRemoved', data: { userId: u.userId, emailId: Number(secondary[0]), at } },
    updated,
    { type: 'EmailAdded', data: { userId: u.userId, emailId: input.swapEmailId, email: u.email.toLowerCase(), at } },
  ];
}

/**
 * GitLab's state machine: `block` moves active (or directory-blocked, from the directory sync) to
 * blocked; from blocked nothing moves and the API answers `false`. A user blocked by directory
 * synchronisation cannot be blocked or unblocked through the API.
 */
export function block(s: User, now: Date, byDirectory = false): UserEvent[] {
  const u = existing(s);
  if (byDirectory)
    return u.state === 'ldap_blocked'
      ? []
      : [{ type: 'UserBlocked', data: { userId: u.userId, byDirectory: true, at: now.toISOString() } }];
  if (u.state === 'ldap_blocked') throw new Forbidden('LDAP blocked users cannot be modified by the API');
  if (u.state === 'blocked') return [];
  return [{ type: 'UserBlocked', data: { userId: u.userId, byDirectory: false, at: now.toISOString() } }];
}

export function unblock(s: User, now: Date, byDirectory = false): UserEvent[] {
  const u = existing(s);
  if (u.state === 'ldap_blocked' && !byDirectory)
    throw new Forbidden('LDAP blocked users cannot be unblocked by the API');
  if (u.state === 'deactivated') throw new Forbidden('Deactivated users cannot be unblocked by the API');
  if (u.state === 'active') return [];
  return [{ type: 'UserUnblocked', data: { userId: u.userId, at: now.toISOString() } }];
}

/** `DELETE /users/:id/identities/:provider`: the identity of that provider (its exact name), or 404 Identity. */
export function removeIdentity(s: User, provider: string, now: Date): UserEvent[] {
  const u = existing(s);
  if (!u.identityProviders.includes(provider)) throw new NotFound('Identity');
  return [{ type: 'UserIdentityRemoved', data: { userId: u.userId, provider, at: now.toISOString() } }];
}

/** GitLab's `blocked?`: a banned user is a blocked one too (`state :blocked, :ldap_blocked, :banned do def blocked?`). */
const isBlocked = (state: UserState) => state === 'blocked' || state === 'ldap_blocked' || state === 'banned';

/**
 * GitLab's `render_api_error!(message, 403)`: the message as given, without "403 Forbidden - " (ban
 * and unban answer through their services this way, unlike the `forbidden!` of activate/deactivate).
 */
export class ForbiddenAsIs extends Forbidden {
  constructor(message: string) {
    super();
    this.message = message;
  }
}

/** Days without activity before an administrator may deactivate a user (GitLab 14.0's `MINIMUM_INACTIVE_DAYS`; 180 before). */
export const MINIMUM_INACTIVE_DAYS = 90;

/**
 * GitLab 12.4's `POST /users/:id/deactivate` (14.x texts): only an active user who has not been active
 * for MINIMUM_INACTIVE_DAYS, and no internal user. `lastActivityOn` (`YYYY-MM-DD`, null when never
 * active) is the read model's: activity is kept on streams of its own. A user never active counts as
 * dormant, as in GitLab (`last_active_at` nil is 0), so Terraform can create a deactivated user.
 * Already deactivated: nothing moves, and the API answers `null`.
 */
export function deactivate(s: User, lastActivityOn: string | null, now: Date): UserEvent[] {
  const u = existing(s);
  if (u.state === 'deactivated') return [];
  if (isBlocked(u.state)) throw new Forbidden('A blocked user cannot be deactivated by the API');
  if (u.internal) throw new Forbidden('An internal user cannot be deactivated by the API');
  const cutoff = new Date(now.getTime() - MINIMUM_INACTIVE_DAYS * 86_400_000).toISOString().slice(0, 10);
  if (lastActivityOn !== null && lastActivityOn > cutoff)
    throw new Forbidden(
      `The user you are trying to deactivate has been active in the past ${MINIMUM_INACTIVE_DAYS} days and cannot be deactivated`,
    );
  return [{ type: 'UserDeactivated', data: { userId: u.userId, at: now.toISOString() } }];
}

/** GitLab 12.4's `POST /users/:id/activate`: a blocked (or banned) user must be unblocked first; an active one stays (`false`). */
export function activate(s: User, now: Date): UserEvent[] {
  const u = existing(s);
  if (isBlocked(u.state)) throw new Forbidden('A blocked user must be unblocked to be activated');
  if (u.state === 'active') return [];
  return [{ type: 'UserActivated', data: { userId: u.userId, at: now.toISOString() } }];
}

/** GitLab 14.3's `Users::BanService`: only an active user may be banned (the message names the raw state). */
export function ban(s: User, now: Date): UserEvent[] {
  const u = existing(s);
  if (u.state !== 'active') throw new ForbiddenAsIs(`You cannot ban ${u.state} users.`);
  return [{ type: 'UserBanned', data: { userId: u.userId, at: now.toISOString() } }];
}

/** GitLab 14.3's `Users::UnbanService`: only a banned user may be unbanned. */
export function unban(s: User, now: Date): UserEvent[] {
  const u = existing(s);
  if (u.state !== 'banned') throw new ForbiddenAsIs(`You cannot unban ${u.state} users.`);
  return [{ type: 'UserUnbanned', data: { userId: u.userId, at: now.toISOString() } }];
}

export function remove(s: User, hardDelete: boolean, now: Date, ghostUserId?: number): UserEvent[] {
  const u = existing(s);
  if (ghostUserId === u.userId) throw new Forbidden('The ghost user cannot be deleted');
  const data: Extract<UserEvent, { type: 'UserDeleted' }>['data'] = {
    userId: u.userId,
    username: u.username,
    hardDelete,
    at: now.toISOString(),
  };
  if (!hardDelete && ghostUserId !== undefined) data.ghostUserId = ghostUserId;
  return [{ type: 'UserDeleted', data }];
}

/**
 * A user's new SSH key. GitLab's Key model (`validate :expiration, on: :create`) refuses a key whose
 * expiry has passed: `{"message":{"key":["has expired"]}}`.
 */
export function addSshKey(
  s: User,
  key: {
    keyId: number;
    title: string;
    key: string;
    fingerprint: string;
    fingerprintSha256: string;
    keyType: string;
    expiresAt: string | null;
  },
  now: Date,
): UserEvent[] {
  const u = existing(s);
  const errors = new FieldErrors();
  if (!key.title.trim()) errors.add('title', "can't be blank");
  else if (key.title.length > MAX) errors.add('title', tooLong(MAX));
  if (key.expiresAt !== null && new Date(key.expiresAt).getTime() <= now.getTime()) errors.add('key', 'has expired');
  errors.throwIfAny();
  return [{ type: 'SshKeyAdded', data: { userId: u.userId, ...key, at: now.toISOString() } }];
}

export function removeSshKey(s: User, keyId: number, now: Date): UserEvent[] {
  const u = existing(s);
  if (!u.sshKeys.includes(keyId)) throw new NotFound('Key');
  return [{ type: 'SshKeyRemoved', data: { userId: u.userId, keyId, at: now.toISOString() } }];
}

export function addGpgKey(
  s: User,
  key: { keyId: number; key: string; fingerprint: string; primaryKeyId: string },
  now: Date,
): UserEvent[] {
  const u = existing(s);
  return [{ type: 'GpgKeyAdded', data: { userId: u.userId, ...key, at: now.toISOString() } }];
}

export function removeGpgKey(s: User, keyId: number, now: Date): UserEvent[] {
  const u = existing(s);
  if (!u.gpgKeys.includes(keyId)) throw new NotFound('GPG Key');
  return [{ type: 'GpgKeyRemoved', data: { userId: u.userId, keyId, at: now.toISOString() } }];
}

export function addEmail(s: User, emailId: number, address: string, now: Date): UserEvent[] {
  const u = existing(s);
  // GitLab's Email model stores secondary addresses stripped and lower-cased (`value.downcase.strip`).
  const email = address.trim().toLowerCase();
  const errors = new FieldErrors();
  if (!email) errors.add('email', "can't be blank");
  else if (email.length > MAX) errors.add('email', tooLong(MAX));
  else if (!EMAIL.test(email)) errors.add('email', 'is invalid');
  // GitLab's Email model: a secondary address may not repeat the user's own primary one.
  else if (email === u.email.toLowerCase() || Object.values(u.emails).some((e) => e.toLowerCase() === email))
    errors.add('email', 'has already been taken');
  errors.throwIfAny();
  return [{ type: 'EmailAdded', data: { userId: u.userId, emailId, email, at: now.toISOString() } }];
}

export function removeEmail(s: User, emailId: number, now: Date): UserEvent[] {
  const u = existing(s);
  if (!(emailId in u.emails)) throw new NotFound('Email');
  return [{ type: 'EmailRemoved', data: { userId: u.userId, emailId, at: now.toISOString() } }];
}

export function setCustomAttribute(s: User, key: string, value: string, now: Date): UserEvent[] {
  const u = existing(s);
  checkCustomAttribute(key, value);
  if (holdsCustomAttribute(u.customAttributes, key, value)) return [];
  return [{ type: 'UserCustomAttributeSet', data: { userId: u.userId, key, value, at: now.toISOString() } }];
}

export function removeCustomAttribute(s: User, key: string, now: Date): UserEvent[] {
  const u = existing(s);
  // hasOwn, not `in`: a key such as `constructor` must not find Object.prototype's member.
  if (!Object.hasOwn(u.customAttributes, key)) throw new NotFound('Custom Attribute');
  return [{ type: 'UserCustomAttributeRemoved', data: { userId: u.userId, key, at: now.toISOString() } }];
}
