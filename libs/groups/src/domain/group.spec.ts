import { BadRequestMessage, Conflict, Forbidden, Invalid, NotFound } from '@app/platform';
import { ACCESS } from './access-level';
import {
  addMember,
  create,
  evolve,
  initial,
  remove,
  removeCustomAttribute,
  removeMember,
  setCustomAttribute,
  shareWithGroup,
  transfer,
  unshareWithGroup,
  update,
  updateMember,
  validateSettings,
  type Group,
  type GroupEvent,
  type GroupSettings,
  type TransferFacts,
} from './group';
import { groupSettingsFrom } from './group-settings';

const NOW = new Date('2024-05-06T07:08:09.000Z');
const AT = NOW.toISOString();
const EARLIER = '2024-01-01T00:00:00.000Z';
const ID = 7;
const OWNER = 3;

const given = (...events: GroupEvent[]): Group => events.reduce(evolve, initial());

/** A new group's settings: the table's defaults (domain/group-settings.ts) but where the test says. */
const settings = (over: Partial<GroupSettings> = {}): GroupSettings =>
  groupSettingsFrom({ name: 'Foo Group', path: 'foo-group', requestAccessEnabled: true, ...over });

const created = (over: Partial<GroupSettings> = {}, parentId: number | null = null): GroupEvent => ({
  type: 'GroupCreated',
  data: { groupId: ID, parentId, ...settings(over), creatorId: OWNER, at: EARLIER },
});
const updated = (changes: Partial<GroupSettings>): GroupEvent => ({
  type: 'GroupUpdated',
  data: { groupId: ID, changes, at: EARLIER },
});
const deleted = (): GroupEvent => ({ type: 'GroupDeleted', data: { groupId: ID, at: EARLIER } });
const memberAdded = (userId: number, accessLevel: number): GroupEvent => ({
  type: 'GroupMemberAdded',
  data: { groupId: ID, userId, accessLevel, expiresAt: null, at: EARLIER },
});
const memberUpdated = (userId: number, accessLevel: number): GroupEvent => ({
  type: 'GroupMemberUpdated',
  data: { groupId: ID, userId, accessLevel, expiresAt: null, at: EARLIER },
});
const memberRemoved = (userId: number): GroupEvent => ({
  type: 'GroupMemberRemoved',
  data: { groupId: ID, userId, at: EARLIER },
});
const attributeSet = (key: string, value: string): GroupEvent => ({
  type: 'GroupCustomAttributeSet',
  data: { groupId: ID, key, value, at: EARLIER },
});
const shared = (sharedWithGroupId: number, groupAccess: number): GroupEvent => ({
  type: 'GroupSharedWithGroup',
  data: { groupId: ID, sharedWithGroupId, groupAccess, expiresAt: null, at: EARLIER },
});
const unshared = (sharedWithGroupId: number): GroupEvent => ({
  type: 'GroupUnsharedWithGroup',
  data: { groupId: ID, sharedWithGroupId, at: EARLIER },
});
const attributeRemoved = (key: string): GroupEvent => ({
  type: 'GroupCustomAttributeRemoved',
  data: { groupId: ID, key, at: EARLIER },
});

/** A group as its creation leaves it: created, with its creator as owner. */
const existing = (...more: GroupEvent[]): Group => given(created(), memberAdded(OWNER, ACCESS.owner), ...more);

/** Runs a decision and returns what it threw. */
const thrown = (decide: () => unknown): unknown => {
  try {
    decide();
  } catch (err) {
    return err;
  }
  throw new Error('expected the decision to throw');
};
const fieldsOf = (decide: () => unknown) => {
  const err = thrown(decide);
  expect(err).toBeInstanceOf(Invalid);
  return (err as Invalid).fields;
};

describe('group decider', () => {
  describe('evolve', () => {
    it('starts absent and exists once created, with its settings and parent, no members or attributes', () => {
      expect(initial()).toEqual({ exists: false });
      expect(given(created({}, 4))).toEqual({
        exists: true,
        groupId: ID,
        parentId: 4,
        settings: settings(),
        members: {},
        customAttributes: {},
        sharedWith: {},
      });
    });

    it('ignores events other than creation while the group does not exist', () => {
      expect(given(memberAdded(5, 30), updated({ name: 'x' }), attributeSet('k', 'v'))).toEqual({ exists: false });
    });

    it('folds settings, members and attributes, and forgets the group on deletion', () => {
      const s = given(
        created(),
        updated({ name: 'Bar', visibility: 'internal' }),
        memberAdded(5, 30),
        memberAdded(6, 20),
        memberUpdated(5, 40),
        memberRemoved(6),
        attributeSet('k', 'v'),
        attributeSet('gone', 'x'),
        attributeRemoved('gone'),
      );
      expect(s).toEqual({
        exists: true,
        groupId: ID,
        parentId: null,
        settings: settings({ name: 'Bar', visibility: 'internal' }),
        members: { 5: 40 },
        customAttributes: { k: 'v' },
        sharedWith: {},
      });
      expect(given(created(), memberAdded(5, 30), deleted())).toEqual({ exists: false });
    });
  });

  describe('validateSettings', () => {
    it('accepts GitLab names and paths', () => {
      expect(validateSettings(settings({ name: 'My group_1.0 - beta', path: 'my-group_1.0' }), true, {}).empty).toBe(
        true,
      );
    });

    it('reports each broken field with GitLab words', () => {
      expect(fieldsOf(() => validateSettings({ name: ' ', path: '' }, true, {}).throwIfAny())).toEqual({
        name: ["can't be blank"],
        path: ["can't be blank"],
      });
      expect(fieldsOf(() => validateSettings({ name: '-bad' }, true, {}).throwIfAny())).toEqual({
        name: [
          "can contain only letters, digits, emojis, '_', '.', dash, space. It must start with letter, digit, emoji or '_'.",
        ],
      });
      expect(
        fieldsOf(() =>
          validateSettings({ name: 'x'.repeat(256), description: 'd'.repeat(256) }, true, {}).throwIfAny(),
        ),
      ).toEqual({
        name: ['is too long (maximum is 255 characters)'],
        description: ['is too long (maximum is 255 characters)'],
      });
    });

    it('refuses a reserved path at the top level only', () => {
      expect(fieldsOf(() => validateSettings({ path: 'admin' }, true, {}).throwIfAny())).toEqual({
        path: ['admin is a reserved name'],
      });
      expect(validateSettings({ path: 'admin' }, false, {}).empty).toBe(true);
    });

    it('keeps a visibility within the parent and above its subgroups and projects, one message per reason', () => {
      expect(
        fieldsOf(() =>
          validateSettings({ visibility: 'public' }, false, { parentVisibility: 'internal' }).throwIfAny(),
        ),
      ).toEqual({
        visibility_level: ['public is not allowed since the parent group has a internal visibility.'],
      });
      expect(
        fieldsOf(() =>
          validateSettings({ visibility: 'private' }, true, {
            widestProjectVisibility: 'internal',
            widestSubgroupVisibility: 'public',
          }).throwIfAny(),
        ),
      ).toEqual({
        visibility_level: [
          'private is not allowed since this group contains projects with higher visibility.',
          'private is not allowed since there are sub-groups with higher visibility.',
        ],
      });
      expect(
        validateSettings({ visibility: 'internal' }, false, {
          parentVisibility: 'internal',
          widestProjectVisibility: 'internal',
          widestSubgroupVisibility: 'private',
        }).empty,
      ).toBe(true);
    });
  });

  describe('create', () => {
    it('creates the group and makes its creator the owner', () => {
      expect(create(initial(), { groupId: ID, parentId: 4, settings: settings(), creatorId: OWNER }, {}, NOW)).toEqual([
        { type: 'GroupCreated', data: { groupId: ID, parentId: 4, ...settings(), creatorId: OWNER, at: AT } },
        { type: 'GroupMemberAdded', data: { groupId: ID, userId: OWNER, accessLevel: 50, expiresAt: null, at: AT } },
      ]);
    });

    it('refuses invalid settings, and a group more open than its parent', () => {
      expect(
        fieldsOf(() =>
          create(
            initial(),
            { groupId: ID, parentId: null, settings: settings({ name: '' }), creatorId: OWNER },
            {},
            NOW,
          ),
        ),
      ).toEqual({ name: ["can't be blank"] });
      expect(
        fieldsOf(() =>
          create(
            initial(),
            { groupId: ID, parentId: 4, settings: settings({ visibility: 'public' }), creatorId: OWNER },
            { parentVisibility: 'private' },
            NOW,
          ),
        ),
      ).toHaveProperty('visibility_level');
    });

    it('never creates a group twice (ids come from a sequence)', () => {
      expect(() =>
        create(existing(), { groupId: ID, parentId: null, settings: settings(), creatorId: OWNER }, {}, NOW),
      ).toThrow(`group ${ID} exists already`);
    });
  });

  describe('update', () => {
    it('records only the settings that change', () => {
      expect(update(existing(), { name: 'Foo Group', description: 'new', lfsEnabled: true }, {}, NOW)).toEqual([
        { type: 'GroupUpdated', data: { groupId: ID, changes: { description: 'new' }, at: AT } },
      ]);
    });

    it('records nothing when nothing changes', () => {
      expect(update(existing(), { name: 'Foo Group', path: undefined }, {}, NOW)).toEqual([]);
    });

    it('validates the changes with the rules of a top-level group or a subgroup', () => {
      expect(fieldsOf(() => update(existing(), { path: 'admin' }, {}, NOW))).toEqual({
        path: ['admin is a reserved name'],
      });
      expect(update(given(created({}, 4)), { path: 'admin' }, {}, NOW)).toEqual([
        { type: 'GroupUpdated', data: { groupId: ID, changes: { path: 'admin' }, at: AT } },
      ]);
    });

    it('is a 404 for a group that does not exist', () => {
      expect(thrown(() => update(initial(), { name: 'x' }, {}, NOW))).toEqual(new NotFound('Group'));
      expect(thrown(() => update(existing(deleted()), { name: 'x' }, {}, NOW))).toEqual(new NotFound('Group'));
    });
  });

  describe('remove', () => {
    it('deletes an existing group, and is a 404 otherwise', () => {
      expect(remove(existing(), NOW)).toEqual([{ type: 'GroupDeleted', data: { groupId: ID, at: AT } }]);
      expect(thrown(() => remove(initial(), NOW))).toBeInstanceOf(NotFound);
    });
  });

  describe('members', () => {
    it('adds a member once; a second time is a 409', () => {
      expect(addMember(existing(), 5, 30, '2030-01-01', NOW)).toEqual([
        {
          type: 'GroupMemberAdded',
          data: { groupId: ID, userId: 5, accessLevel: 30, expiresAt: '2030-01-01', at: AT },
        },
      ]);
      expect(thrown(() => addMember(existing(memberAdded(5, 30)), 5, 40, null, NOW))).toEqual(
        new Conflict('Member already exists'),
      );
    });

    it("changes a member's level, and is a bare 404 for someone who is not a member", () => {
      expect(updateMember(existing(memberAdded(5, 30)), 5, 40, null, NOW)).toEqual([
        { type: 'GroupMemberUpdated', data: { groupId: ID, userId: 5, accessLevel: 40, expiresAt: null, at: AT } },
      ]);
      expect(thrown(() => updateMember(existing(), 5, 40, null, NOW))).toEqual(new NotFound());
    });

    it('keeps an owner: the last one can be neither demoted nor removed, one of two can', () => {
      expect(thrown(() => updateMember(existing(), OWNER, 40, null, NOW))).toEqual(
        new Forbidden('The last owner cannot be demoted'),
      );
      expect(thrown(() => removeMember(existing(), OWNER, NOW))).toEqual(
        new Forbidden('The last owner cannot be removed'),
      );
      const twoOwners = existing(memberAdded(5, ACCESS.owner));
      expect(updateMember(twoOwners, OWNER, 40, null, NOW)).toHaveLength(1);
      expect(removeMember(twoOwners, OWNER, NOW)).toEqual([
        { type: 'GroupMemberRemoved', data: { groupId: ID, userId: OWNER, at: AT } },
      ]);
      expect(updateMember(existing(), OWNER, ACCESS.owner, '2030-01-01', NOW)).toHaveLength(1);
    });

    it('removes the last owner when the user is deleted', () => {
      expect(removeMember(existing(), OWNER, NOW, true, true)).toEqual([
        { type: 'GroupMemberRemoved', data: { groupId: ID, userId: OWNER, at: AT } },
      ]);
    });

    it('finds the member before asking whether the caller may remove it', () => {
      expect(thrown(() => removeMember(existing(), 5, NOW, false))).toEqual(new NotFound());
      expect(thrown(() => removeMember(existing(memberAdded(5, 30)), 5, NOW, false))).toEqual(new Forbidden());
    });
  });

  describe('custom attributes', () => {
    it('sets an attribute, and records nothing when it already holds the value', () => {
      expect(setCustomAttribute(existing(), 'k', 'v', NOW)).toEqual([
        { type: 'GroupCustomAttributeSet', data: { groupId: ID, key: 'k', value: 'v', at: AT } },
      ]);
      expect(setCustomAttribute(existing(attributeSet('k', 'v')), 'k', 'v', NOW)).toEqual([]);
      expect(setCustomAttribute(existing(attributeSet('k', 'v')), 'k', 'w', NOW)).toHaveLength(1);
    });

    it('refuses a blank key or value', () => {
      expect(fieldsOf(() => setCustomAttribute(existing(), '', '', NOW))).toEqual({
        key: ["can't be blank"],
        value: ["can't be blank"],
      });
    });

    it('removes an attribute it holds; another key (even an inherited name) is a 404', () => {
      expect(removeCustomAttribute(existing(attributeSet('k', 'v')), 'k', NOW)).toEqual([
        { type: 'GroupCustomAttributeRemoved', data: { groupId: ID, key: 'k', at: AT } },
      ]);
      expect(thrown(() => removeCustomAttribute(existing(), 'k', NOW))).toEqual(new NotFound());
      expect(thrown(() => removeCustomAttribute(existing(), 'constructor', NOW))).toEqual(new NotFound());
    });
  });

  describe('shares with groups', () => {
    it('folds the access granted to each group, and forgets an unshared one', () => {
      const s = existing(shared(20, 30), shared(21, 10), unshared(21));
      expect(s.exists && s.sharedWith).toEqual({ 20: 30 });
    });

    it('shares with a group, the expiry as given', () => {
      expect(
        shareWithGroup(existing(), { sharedWithGroupId: 20, groupAccess: 30, expiresAt: '2030-01-31' }, NOW),
      ).toEqual([
        {
          type: 'GroupSharedWithGroup',
          data: { groupId: ID, sharedWithGroupId: 20, groupAccess: 30, expiresAt: '2030-01-31', at: AT },
        },
      ]);
    });

    it('refuses a second share with the same group with the model’s full message (409)', () => {
      expect(
        thrown(() =>
          shareWithGroup(existing(shared(20, 30)), { sharedWithGroupId: 20, groupAccess: 40, expiresAt: null }, NOW),
        ),
      ).toEqual(new Conflict('Shared group The group has already been shared with this group'));
      // Shared again once unshared.
      expect(
        shareWithGroup(
          existing(shared(20, 30), unshared(20)),
          { sharedWithGroupId: 20, groupAccess: 40, expiresAt: null },
          NOW,
        ),
      ).toHaveLength(1);
    });

    it('unshares a group it is shared with; another is 404 Group Link', () => {
      expect(unshareWithGroup(existing(shared(20, 30)), 20, NOW)).toEqual([
        { type: 'GroupUnsharedWithGroup', data: { groupId: ID, sharedWithGroupId: 20, at: AT } },
      ]);
      expect(thrown(() => unshareWithGroup(existing(), 20, NOW))).toEqual(new NotFound('Group Link'));
      expect(thrown(() => unshareWithGroup(given(), 20, NOW))).toEqual(new NotFound('Group'));
    });
  });

  describe('transfer', () => {
    const facts = (over: Partial<TransferFacts> = {}): TransferFacts => ({
      newParentAncestry: [40, 41],
      mayCreateThere: true,
      pathTaken: false,
      parentVisibility: 'public',
      widestVisibilityInside: 'private',
      ...over,
    });
    const refusal = (s: Group, parentId: number | null, f: TransferFacts) => {
      const err = thrown(() => transfer(s, parentId, f, NOW));
      expect(err).toBeInstanceOf(BadRequestMessage);
      return (err as Error).message;
    };

    it('moves under a new parent, or to the top level, and folds the new parent', () => {
      expect(transfer(existing(), 41, facts(), NOW)).toEqual([
        { type: 'GroupTransferred', data: { groupId: ID, parentId: 41, at: AT } },
      ]);
      const nested = given(created({}, 41), memberAdded(OWNER, ACCESS.owner));
      expect(transfer(nested, null, facts({ newParentAncestry: undefined, parentVisibility: undefined }), NOW)).toEqual(
        [{ type: 'GroupTransferred', data: { groupId: ID, parentId: null, at: AT } }],
      );
      const moved = given(created(), { type: 'GroupTransferred', data: { groupId: ID, parentId: 41, at: EARLIER } });
      expect(moved.exists && moved.parentId).toBe(41);
    });

    it('refuses with GitLab’s reasons, in its order', () => {
      const top = existing();
      const nested = given(created({}, 41), memberAdded(OWNER, ACCESS.owner));
      expect(refusal(top, null, facts({ mayCreateThere: false }))).toBe(
        'Transfer failed: Group is already a root group.',
      );
      expect(refusal(nested, 41, facts({ mayCreateThere: false }))).toBe(
        'Transfer failed: Group is already associated to the parent group.',
      );
      expect(refusal(top, 41, facts({ mayCreateThere: false, pathTaken: true }))).toBe(
        "Transfer failed: You don't have enough permissions.",
      );
      expect(refusal(top, 41, facts({ pathTaken: true, newParentAncestry: [ID, 41] }))).toBe(
        'Transfer failed: The parent group already has a subgroup or a project with the same path.',
      );
      expect(refusal(top, 41, facts({ newParentAncestry: [ID, 41] }))).toBe(
        'Transfer failed: Cannot transfer group to one of its subgroup.',
      );
      expect(refusal(top, 41, facts({ parentVisibility: 'private', widestVisibilityInside: 'internal' }))).toBe(
        'Transfer failed: internal is not allowed since the parent group has a private visibility.',
      );
      expect(thrown(() => transfer(given(), 41, facts(), NOW))).toEqual(new NotFound('Group'));
    });
  });
});
