import { NotFound } from '@app/platform';
import {
  archive,
  create,
  FEATURE_DEFAULTS,
  initial,
  pathFromName,
  remove,
  removeCustomAttribute,
  setCustomAttribute,
  transfer,
  unarchive,
  update,
  validateSettings,
} from './project';
import {
  archived,
  AT,
  attributeSet,
  created,
  deleted,
  EARLIER,
  fieldsOf,
  given,
  ID,
  memberAdded,
  memberRemoved,
  NOW,
  NS,
  OWNER,
  settings,
  shared,
  thrown,
  transferred,
  unarchived,
  unshared,
} from './project-decider.fixtures';

describe('project decider', () => {
  describe('evolve', () => {
    it('starts absent and exists once created, with the settings, no members, shares or attributes', () => {
      expect(initial()).toEqual({ exists: false });
      // toMatchObject: the fork and housekeeping state beside these belongs to those decisions’ tests.
      expect(given(created())).toMatchObject({
        exists: true,
        projectId: ID,
        namespaceId: NS,
        archived: false,
        settings: settings(),
        members: {},
        sharedWith: {},
        customAttributes: {},
      });
    });

    it('ignores events other than creation while the project does not exist', () => {
      expect(given(archived(), memberAdded(5, 30))).toEqual({ exists: false });
    });

    it('folds archive, members, shares, attributes, transfer and deletion', () => {
      const s = given(
        created(),
        archived(),
        memberAdded(5, 30),
        memberAdded(6, 20),
        memberRemoved(6),
        shared(9, 20),
        shared(10),
        unshared(10),
        attributeSet('k', 'v'),
        transferred(8),
      );
      expect(s).toMatchObject({
        exists: true,
        archived: true,
        namespaceId: 8,
        members: { 5: 30 },
        sharedWith: { 9: 20 },
        customAttributes: { k: 'v' },
      });
      expect(given(created(), archived(), unarchived())).toMatchObject({ archived: false });
      expect(given(created(), deleted())).toEqual({ exists: false });
    });

    it('merges updated settings and feature switches', () => {
      const s = given(created(), {
        type: 'ProjectUpdated',
        data: { projectId: ID, changes: { name: 'Bar', features: { wikiEnabled: false } }, at: EARLIER },
      });
      expect(s).toMatchObject({
        settings: { name: 'Bar', path: 'foo-project', features: { ...FEATURE_DEFAULTS, wikiEnabled: false } },
      });
    });
  });

  describe('pathFromName (Rails parameterize)', () => {
    it.each([
      ['Foo Project', 'foo-project'],
      ['  Spaces  around ', 'spaces-around'],
      ['Dots.And.Dashes--x', 'dots-and-dashes-x'],
      ['snake_case_Name', 'snake_case_name'],
      ['Café Crème', 'cafe-creme'],
      ['a - b', 'a-b'],
      ['-lead and trail-', 'lead-and-trail'],
      ['日本', ''],
    ])('%j → %j', (name, path) => {
      expect(pathFromName(name)).toBe(path);
    });
  });

  describe('validateSettings', () => {
    it('accepts GitLab names and paths', () => {
      expect(validateSettings({ name: 'My project_1.0 - beta', path: 'my-project_1.0' }, undefined).empty).toBe(true);
      expect(validateSettings({ name: '_x', path: '_x.' }, undefined).empty).toBe(true);
    });

    it('reports each broken field with GitLab words', () => {
      expect(fieldsOf(() => validateSettings({ name: '', path: '' }, undefined).throwIfAny())).toEqual({
        name: ["can't be blank"],
        path: ["can't be blank"],
      });
      expect(fieldsOf(() => validateSettings({ name: '-bad', path: '-bad' }, undefined).throwIfAny())).toEqual({
        name: [
          "can contain only letters, digits, emojis, '_', '.', dash, space. It must start with letter, digit, emoji or '_'.",
        ],
        path: [
          "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-', end in '.git' or end in '.atom'",
        ],
      });
      for (const path of ['repo.git', 'feed.atom', 'sp ace', 'sl/ash', 'ünï']) {
        expect(fieldsOf(() => validateSettings({ path }, undefined).throwIfAny())).toHaveProperty('path');
      }
      expect(fieldsOf(() => validateSettings({ name: 'x'.repeat(256) }, undefined).throwIfAny())).toEqual({
        name: ['is too long (maximum is 255 characters)'],
      });
      expect(fieldsOf(() => validateSettings({ description: 'd'.repeat(2001) }, undefined).throwIfAny())).toEqual({
        description: ['is too long (maximum is 2000 characters)'],
      });
      expect(
        fieldsOf(() => validateSettings({ importUrl: 'ftp://example.com/x.git' }, undefined).throwIfAny()),
      ).toHaveProperty('import_url');
      // git's branch name rules, which the new repository's HEAD is written with: 400, not a failed creation.
      for (const defaultBranch of ['bad branch', '-main', '@', 'refs/heads/main', 'a..b', 'x.lock', 'y'.repeat(251)])
        expect(fieldsOf(() => validateSettings({ defaultBranch }, undefined).throwIfAny())).toEqual({
          default_branch: ['is invalid'],
        });
      for (const defaultBranch of ['main', 'release/1.0', 'y'.repeat(250)])
        expect(() => validateSettings({ defaultBranch }, undefined).throwIfAny()).not.toThrow();
    });

    it('bounds the visibility by the group, and not in a personal namespace', () => {
      expect(fieldsOf(() => validateSettings({ visibility: 'public' }, 'private').throwIfAny())).toEqual({
        visibility_level: ['public is not allowed in a private group.'],
      });
      expect(fieldsOf(() => validateSettings({ visibility: 'internal' }, 'private').throwIfAny())).toEqual({
        visibility_level: ['internal is not allowed in a private group.'],
      });
      expect(validateSettings({ visibility: 'internal' }, 'internal').empty).toBe(true);
      expect(validateSettings({ visibility: 'private' }, 'public').empty).toBe(true);
      expect(validateSettings({ visibility: 'public' }, undefined).empty).toBe(true);
    });
  });

  describe('create', () => {
    const input = (over: Partial<Parameters<typeof create>[1]> = {}) => ({
      projectId: ID,
      namespaceId: NS,
      settings: settings(),
      creatorId: OWNER,
      runnersToken: 'secret',
      ...over,
    });

    it('creates a group project with sorted, unique, trimmed tags and no member', () => {
      const events = create(
        initial(),
        input({ settings: settings({ tagList: ['b', ' a ', 'b', ''] }), namespaceVisibility: 'private' }),
        NOW,
      );
      expect(events).toEqual([
        {
          type: 'ProjectCreated',
          data: {
            projectId: ID,
            namespaceId: NS,
            ...settings({ tagList: ['a', 'b'] }),
            creatorId: OWNER,
            runnersToken: 'secret',
            at: AT,
          },
        },
      ]);
    });

    it('adds the owner of a personal namespace as a maintainer (GitLab add_master)', () => {
      const events = create(initial(), input({ personalOwnerId: OWNER }), NOW);
      expect(events.map((e) => e.type)).toEqual(['ProjectCreated', 'ProjectMemberAdded']);
      expect(events[1]).toEqual({
        type: 'ProjectMemberAdded',
        data: { projectId: ID, userId: OWNER, accessLevel: 40, expiresAt: null, at: AT },
      });
    });

    it('refuses invalid settings and visibility wider than the group', () => {
      expect(fieldsOf(() => create(initial(), input({ settings: settings({ path: 'x.git' }) }), NOW))).toHaveProperty(
        'path',
      );
      expect(
        fieldsOf(() =>
          create(
            initial(),
            input({ settings: settings({ visibility: 'public' }), namespaceVisibility: 'internal' }),
            NOW,
          ),
        ),
      ).toEqual({
        visibility_level: ['public is not allowed in a internal group.'],
      });
    });

    it('never creates a project twice', () => {
      expect(() => create(given(created()), input(), NOW)).toThrow(/exists already/);
    });
  });

  describe('update', () => {
    it('records only what changes, tags sorted', () => {
      const s = given(created({ description: 'same' }));
      expect(update(s, { name: 'Foo Project', description: 'same' }, undefined, NOW)).toEqual([]);
      expect(
        update(
          s,
          { name: 'Renamed', tagList: ['z', 'a'], features: { ...FEATURE_DEFAULTS, issuesEnabled: false } },
          undefined,
          NOW,
        ),
      ).toEqual([
        {
          type: 'ProjectUpdated',
          data: {
            projectId: ID,
            changes: { name: 'Renamed', tagList: ['a', 'z'], features: { issuesEnabled: false } },
            at: AT,
          },
        },
      ]);
    });

    it('validates the changes and the group bound', () => {
      expect(fieldsOf(() => update(given(created()), { name: '' }, undefined, NOW))).toEqual({
        name: ["can't be blank"],
      });
      expect(fieldsOf(() => update(given(created()), { visibility: 'public' }, 'internal', NOW))).toHaveProperty(
        'visibility_level',
      );
    });

    it('404 for a project that does not exist (or no longer does)', () => {
      expect(thrown(() => update(initial(), { name: 'x' }, undefined, NOW))).toEqual(new NotFound('Project'));
      expect(thrown(() => update(given(created(), deleted()), { name: 'x' }, undefined, NOW))).toEqual(
        new NotFound('Project'),
      );
    });
  });

  describe('archive and unarchive', () => {
    it('archives once; archiving again records nothing (GitLab answers the unchanged project)', () => {
      expect(archive(given(created()), NOW)).toEqual([{ type: 'ProjectArchived', data: { projectId: ID, at: AT } }]);
      expect(archive(given(created(), archived()), NOW)).toEqual([]);
    });

    it('unarchives an archived project; unarchiving an active one records nothing', () => {
      expect(unarchive(given(created(), archived()), NOW)).toEqual([
        { type: 'ProjectUnarchived', data: { projectId: ID, at: AT } },
      ]);
      expect(unarchive(given(created()), NOW)).toEqual([]);
      expect(unarchive(given(created(), archived(), unarchived()), NOW)).toEqual([]);
    });

    it('404 without a project', () => {
      expect(() => archive(initial(), NOW)).toThrow(NotFound);
      expect(() => unarchive(initial(), NOW)).toThrow(NotFound);
    });
  });

  describe('transfer and remove', () => {
    it('moves to another namespace; to the same one is nothing', () => {
      expect(transfer(given(created()), 8, 'private', NOW)).toEqual([
        { type: 'ProjectTransferred', data: { projectId: ID, fromNamespaceId: NS, namespaceId: 8, at: AT } },
      ]);
      expect(transfer(given(created()), NS, undefined, NOW)).toEqual([]);
    });

    it('refuses a group less open than the project', () => {
      expect(fieldsOf(() => transfer(given(created({ visibility: 'public' })), 8, 'internal', NOW))).toEqual({
        visibility_level: ['public is not allowed in a internal group.'],
      });
    });

    it('PUT /transfer lowers the visibility to the group’s instead of refusing', () => {
      expect(transfer(given(created({ visibility: 'public' })), 8, 'internal', NOW, { lowerVisibility: true })).toEqual(
        [
          { type: 'ProjectTransferred', data: { projectId: ID, fromNamespaceId: NS, namespaceId: 8, at: AT } },
          { type: 'ProjectUpdated', data: { projectId: ID, changes: { visibility: 'internal' }, at: AT } },
        ],
      );
      expect(
        transfer(given(created({ visibility: 'private' })), 8, 'internal', NOW, { lowerVisibility: true }),
      ).toHaveLength(1);
    });

    it('into a personal namespace, its owner becomes a member unless one already', () => {
      expect(transfer(given(created()), 9, undefined, NOW, { personalOwnerId: 11 })).toEqual([
        { type: 'ProjectTransferred', data: { projectId: ID, fromNamespaceId: NS, namespaceId: 9, at: AT } },
        {
          type: 'ProjectMemberAdded',
          data: { projectId: ID, userId: 11, accessLevel: 40, expiresAt: null, at: AT },
        },
      ]);
      expect(transfer(given(created(), memberAdded(11, 30)), 9, undefined, NOW, { personalOwnerId: 11 })).toHaveLength(
        1,
      );
    });

    it('removes an existing project once', () => {
      expect(remove(given(created()), NOW)).toEqual([
        { type: 'ProjectDeleted', data: { projectId: ID, namespaceId: NS, at: AT } },
      ]);
      expect(() => remove(given(created(), deleted()), NOW)).toThrow(NotFound);
    });
  });

  describe('custom attributes', () => {
    it('sets, and records nothing when the value is the same', () => {
      expect(setCustomAttribute(given(created()), 'color', 'blue', NOW)).toEqual([
        { type: 'ProjectCustomAttributeSet', data: { projectId: ID, key: 'color', value: 'blue', at: AT } },
      ]);
      expect(setCustomAttribute(given(created(), attributeSet('color', 'blue')), 'color', 'blue', NOW)).toEqual([]);
      expect(setCustomAttribute(given(created(), attributeSet('color', 'blue')), 'color', 'red', NOW)).toHaveLength(1);
    });

    it('validates key and value', () => {
      expect(fieldsOf(() => setCustomAttribute(given(created()), '', '', NOW))).toEqual({
        key: ["can't be blank"],
        value: ["can't be blank"],
      });
      expect(fieldsOf(() => setCustomAttribute(given(created()), 'k', 'v'.repeat(256), NOW))).toEqual({
        value: ['is too long (maximum is 255 characters)'],
      });
    });

    it('removes a set attribute; 404 otherwise', () => {
      expect(removeCustomAttribute(given(created(), attributeSet('color', 'blue')), 'color', NOW)).toEqual([
        { type: 'ProjectCustomAttributeRemoved', data: { projectId: ID, key: 'color', at: AT } },
      ]);
      expect(thrown(() => removeCustomAttribute(given(created()), 'color', NOW))).toEqual(new NotFound());
    });
  });
});
