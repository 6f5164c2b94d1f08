import { BadParameter, validateParams } from '@app/platform';
import { GROUP_SETTING_LIST, groupSettingsFrom } from '../domain/group-settings';
import type { NamespaceRecord } from '../queries/namespace-access';
import { serializeGroup } from './group.serializer';
import { groupChanges, newGroupSettings } from './group-settings';
import { CreateGroupDto, UpdateGroupDto } from './groups.dto';

/* The table of domain/group-settings.ts against what reads it. */

// A setting left out here (a new one) has its default.
const record = (): NamespaceRecord => ({
  id: 1,
  kind: 'group',
  ...groupSettingsFrom({
    name: 'Foo',
    path: 'foo',
    description: 'd',
    visibility: 'internal',
    lfsEnabled: false,
    requestAccessEnabled: true,
  }),
  parentId: null,
  fullPath: 'foo',
  fullName: 'Foo',
  ownerId: null,
  createdAt: new Date(0),
  updatedAt: new Date(0),
});

const refused = (dto: typeof CreateGroupDto | typeof UpdateGroupDto, params: object) =>
  validateParams(dto, params).then(
    () => undefined,
    (e: BadParameter) => e.message,
  );

describe('group settings, one entry each', () => {
  it('wire names and keys are unique', () => {
    expect(new Set(GROUP_SETTING_LIST.map((s) => s.wire)).size).toBe(GROUP_SETTING_LIST.length);
    expect(new Set(GROUP_SETTING_LIST.map((s) => s.key)).size).toBe(GROUP_SETTING_LIST.length);
  });

  it('the serializer shows each setting where the table says, under its name', () => {
    const json = serializeGroup(record(), { externalUrl: 'http://lode', gravatar: undefined } as never) as Record<
      string,
      unknown
    >;
    for (const s of GROUP_SETTING_LIST) {
      expect([s.wire, s.wire in json]).toEqual([s.wire, s.shown !== 'no']);
      if (s.shown !== 'no') expect([s.wire, json[s.wire]]).toEqual([s.wire, record()[s.key]]);
    }
    const appended = GROUP_SETTING_LIST.filter((s) => s.shown === 'appended').map((s) => s.wire);
    expect(Object.keys(json).slice(Object.keys(json).indexOf('parent_id') + 1)).toEqual(appended);
  });

  it("a POST's defaults are the table's", () => {
    const p = Object.assign(new CreateGroupDto(), { name: 'Foo', path: 'foo' });
    expect(newGroupSettings(p)).toEqual({
      name: 'Foo',
      path: 'foo',
      description: '',
      visibility: 'private',
      lfsEnabled: true,
      requestAccessEnabled: false,
      shareWithGroupLock: false,
      requireTwoFactorAuthentication: false,
      twoFactorGracePeriod: 48,
      projectCreationLevel: 'maintainer',
      autoDevopsEnabled: false,
      subgroupCreationLevel: 'owner',
      emailsDisabled: false,
      mentionsDisabled: false,
      defaultBranchProtection: 2,
      preventForkingOutsideGroup: false,
    });
    // An event older than a setting reads as its default.
    expect(groupSettingsFrom({ name: 'Foo', path: 'foo' })).toEqual(newGroupSettings(p));
    // The instance's default branch protection, where the installation sets one, unless the POST sends its own.
    expect(newGroupSettings(p, { defaultBranchProtection: 0 }).defaultBranchProtection).toBe(0);
    const sent = Object.assign(new CreateGroupDto(), { name: 'Foo', path: 'foo', default_branch_protection: 3 });
    expect(newGroupSettings(sent, { defaultBranchProtection: 0 }).defaultBranchProtection).toBe(3);
  });

  it('a PUT takes what was sent, a null description as empty text; nothing Lode keeps is no change (no at_least_one_of)', () => {
    const p = Object.assign(new UpdateGroupDto(), { lfs_enabled: false, description: null });
    expect(groupChanges(p)).toEqual({ description: '', lfsEnabled: false });
    expect(groupChanges(new UpdateGroupDto())).toEqual({});
    const levels = Object.assign(new UpdateGroupDto(), {
      project_creation_level: 'developer',
      two_factor_grace_period: 0,
    });
    expect(groupChanges(levels)).toEqual({ projectCreationLevel: 'developer', twoFactorGracePeriod: 0 });
  });

  it('the DTOs validate each setting by its type, in the parameters’ order, parent_id last', async () => {
    const bad = {
      parent_id: 'x',
      request_access_enabled: 'x',
      lfs_enabled: 'maybe',
      visibility: 'secret',
      description: 2,
      path: 3,
      name: 4,
    };
    expect(await refused(CreateGroupDto, bad)).toBe(
      'name is invalid, path is invalid, description is invalid, visibility does not have a valid value, lfs_enabled is invalid, request_access_enabled is invalid, parent_id is invalid',
    );
    expect(await refused(CreateGroupDto, {})).toBe('name is missing, path is missing');
    expect(
      await refused(UpdateGroupDto, {
        default_branch_protection: 7,
        subgroup_creation_level: 'developer',
        project_creation_level: 'anyone',
        two_factor_grace_period: 'x',
      }),
    ).toBe(
      'two_factor_grace_period is invalid, project_creation_level does not have a valid value, subgroup_creation_level does not have a valid value, default_branch_protection does not have a valid value',
    );
    expect(await validateParams(UpdateGroupDto, { default_branch_protection: '0', emails_disabled: 'true' })).toEqual(
      Object.assign(new UpdateGroupDto(), { default_branch_protection: 0, emails_disabled: true }),
    );
    expect(await refused(UpdateGroupDto, bad)).toBe(
      'name is invalid, path is invalid, description is invalid, visibility does not have a valid value, lfs_enabled is invalid, request_access_enabled is invalid',
    );
    const created = await validateParams(CreateGroupDto, {
      name: 'a',
      path: 'a',
      description: null,
      lfs_enabled: 'false',
    });
    expect(created).toMatchObject({ lfs_enabled: false });
    expect(created.description).toBeUndefined(); // a POST's null counts as not sent
    expect(await validateParams(UpdateGroupDto, { description: null, visibility: null })).toEqual(
      Object.assign(new UpdateGroupDto(), { description: null }),
    );
  });
});
