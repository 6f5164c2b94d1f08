import { BadParameter, Invalid, validateParams } from '@app/platform';
import { newUserProfile, validateProfile } from '../domain/user';
import { USER_SETTING_LIST, userSettingsFrom } from '../domain/user-settings';
import type { UserRecord } from '../projections/user.record';
import { serializeUser, serializeUserAdmin } from './user.serializer';
import { newUserSettings, userSettingChanges } from './user-settings';
import { CreateUserDto, UPDATABLE_USER_FIELDS, UpdateUserDto } from './users.dto';

/* The table of domain/user-settings.ts against what reads it. */

const record = (): UserRecord => ({
  id: 1,
  username: 'ann',
  email: 'ann@example.com',
  name: 'Ann',
  state: 'active',
  isAdmin: true,
  bio: 'b',
  location: 'l',
  messenger: 'm',
  careerProfile: 'c',
  socialAccount: 's',
  websiteUrl: 'w',
  organization: 'o',
  projectsLimit: 7,
  canCreateGroup: false,
  external: true,
  note: 'n',
  avatar: null,
  themeId: 1,
  colorSchemeId: 1,
  confirmedAt: null,
  createdAt: new Date(0),
  updatedAt: new Date(0),
  lastActivityOn: null,
});

const urls = { externalUrl: 'http://lode', gravatar: false };

const refused = <T extends object>(dto: new () => T, params: object) =>
  validateParams(dto, params).then(
    () => undefined,
    (e: BadParameter) => e.message,
  );

describe('user settings, one entry each', () => {
  it('parameters, columns and keys are unique', () => {
    for (const field of ['param', 'column', 'key'] as const)
      expect(new Set(USER_SETTING_LIST.map((s) => s[field])).size).toBe(USER_SETTING_LIST.length);
  });

  it('the serializer shows each setting where the table says, under its column', () => {
    const json = serializeUserAdmin(record(), [], urls) as Record<string, unknown>;
    for (const s of USER_SETTING_LIST) {
      expect([s.param, s.column in json]).toEqual([s.param, s.shown !== 'no']);
      if (s.shown !== 'no') expect([s.param, json[s.column]]).toEqual([s.param, record()[s.key]]);
    }
    // The User entity (and every richer one) shows the profile settings right after created_at, in the table's order.
    const user = Object.keys(serializeUser(record(), urls));
    const profile = USER_SETTING_LIST.filter((s) => s.shown === 'profile').map((s) => s.column);
    expect(user.slice(user.indexOf('created_at') + 1)).toEqual(profile);
    expect(profile).toEqual([
      'bio',
      'location',
      'messenger',
      'career_profile',
      'social_account',
      'website_url',
      'organization',
    ]);
  });

  it("a POST's defaults are the table's, also for a profile made outside HTTP and an event older than a setting", () => {
    const p = Object.assign(new CreateUserDto(), { name: 'Ann', username: 'ann', email: 'a@x.io', bio: null });
    const defaults = {
      name: 'Ann',
      projectsLimit: 100000,
      bio: null,
      location: null,
      messenger: '',
      careerProfile: '',
      socialAccount: '',
      websiteUrl: '',
      organization: null,
      canCreateGroup: true,
      isAdmin: false,
      external: false,
      note: null,
    };
    expect(newUserSettings(p)).toEqual(defaults);
    expect(userSettingsFrom({ name: 'Ann' })).toEqual(defaults);
    expect(newUserProfile({ name: 'Ann', username: 'ann', email: 'a@x.io', messenger: null })).toEqual({
      ...defaults,
      username: 'ann',
      email: 'a@x.io',
      avatar: null,
    });
  });

  it('a PUT takes the settings sent, a null as the default (empty text, or null where the column allows it)', () => {
    const p = Object.assign(new UpdateUserDto(), {
      messenger: null,
      bio: null,
      admin: false,
      projects_limit: 3,
      username: 'bob',
    });
    expect(userSettingChanges(p)).toEqual({ messenger: '', bio: null, isAdmin: false, projectsLimit: 3 });
    expect(userSettingChanges(new UpdateUserDto())).toEqual({});
    for (const s of USER_SETTING_LIST) expect(UPDATABLE_USER_FIELDS).toContain(s.param);
  });

  it('the DTOs validate each setting by its type, in the order GitLab declares its parameters', async () => {
    const bad = {
      external: 'maybe',
      can_create_group: 'x',
      admin: 'x',
      location: 1,
      bio: 2,
      provider: 3,
      projects_limit: 'many',
      organization: 4,
      website_url: 5,
      social_account: 6,
      career_profile: 7,
      messenger: 8,
      name: 9,
    };
    expect(await refused(UpdateUserDto, bad)).toBe(
      'name is invalid, messenger is invalid, career_profile is invalid, social_account is invalid, website_url is invalid, organization is invalid, projects_limit is invalid, provider is invalid, bio is invalid, location is invalid, admin is invalid, can_create_group is invalid, external is invalid, extern_uid, provider provide all or none of parameters',
    );
    expect(await refused(CreateUserDto, { email: 'a@x.io', password: 'secret-password', username: 'ann' })).toBe(
      'name is missing',
    );
    expect(await refused(UpdateUserDto, {})).toBeUndefined();
    const created = await validateParams(CreateUserDto, {
      name: 'a',
      username: 'a',
      email: 'a@x.io',
      reset_password: 'true',
      projects_limit: '5',
      admin: 'true',
      bio: null,
    });
    expect(created).toMatchObject({ projects_limit: 5, admin: true, bio: null });
    // A null of a setting that is not clearable counts as not sent.
    expect(await validateParams(UpdateUserDto, { name: null, messenger: null })).toEqual(
      Object.assign(new UpdateUserDto(), { messenger: null }),
    );
  });

  it("the model's checks answer in the table's order, the password's after the name's", () => {
    const long = 'x'.repeat(256);
    const errors = validateProfile(
      { organization: long, messenger: long, bio: long, projectsLimit: -1, name: ' ', email: 'no' },
      'short',
    );
    let invalid: Invalid | undefined;
    try {
      errors.throwIfAny();
    } catch (e) {
      invalid = e as Invalid;
    }
    expect(invalid).toBeInstanceOf(Invalid);
    expect(Object.keys(invalid!.fields)).toEqual([
      'email',
      'name',
      'password',
      'projects_limit',
      'bio',
      'messenger',
      'organization',
    ]);
  });
});
