import { BadParameter, validateParams } from '@app/platform';
import { GROUP_SETTING_LIST, GROUP_UPDATE_AT_LEAST_ONE_OF, groupSettingsFrom } from '../domain/group-settings';
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
    });
    // An event older than a setting reads as its default.
    expect(groupSettingsFrom({ name: 'Foo', path: 'foo' })).toEqual(newGroupSettings(p));
  });

  it('a PUT takes what was sent, a null description as empty text; nothing sent is a 400 naming GitLab’s list', () => {
    const p = Object.assign(new UpdateGroupDto(), { lfs_enabled: false, description: null });
    expect(groupChanges(p)).toEqual({ description: '', lfsEnabled: false });
    expect(() => groupChanges(new UpdateGroupDto())).toThrow(
      new BadParameter(
        'name, path, description, visibility, lfs_enabled, request_access_enabled are missing, at least one parameter must be provided',
      ),
    );
    expect(GROUP_UPDATE_AT_LEAST_ONE_OF).toEqual(GROUP_SETTING_LIST.map((s) => s.wire));
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
