import { Conflict, Invalid, NotFound, NotModified } from '@app/platform';
import { recordPush } from '../pushes/record-repository-push.command';
import { settingsFrom } from './project-settings';
import {
  addMember,
  archive,
  create,
  evolve,
  FEATURE_DEFAULTS,
  initial,
  pathFromName,
  remove,
  removeCustomAttribute,
  removeMember,
  setCustomAttribute,
  share,
  star,
  starDecider,
  transfer,
  unarchive,
  unshare,
  update,
  updateMember,
  validateSettings,
  type Project,
  type ProjectEvent,
  type ProjectSettings,
  type StarEvent,
} from './project';

const NOW = new Date('2024-05-06T07:08:09.000Z');
const AT = NOW.toISOString();
const EARLIER = '2024-01-01T00:00:00.000Z';
const ID = 42;
const NS = 7;
const OWNER = 3;

const given = (...events: ProjectEvent[]): Project => events.reduce(evolve, initial());

const settings = (over: Partial<ProjectSettings> = {}): ProjectSettings => ({
  ...settingsFrom({ name: 'Foo Project', path: 'foo-project' }),
  ...over,
});

const created = (over: Partial<ProjectSettings> = {}): ProjectEvent => ({
  type: 'ProjectCreated',
  data: { projectId: ID, namespaceId: NS, ...settings(over), creatorId: OWNER, runnersToken: 'secret', at: EARLIER },
});
const archived = (): ProjectEvent => ({ type: 'ProjectArchived', data: { projectId: ID, at: EARLIER } });
const unarchived = (): ProjectEvent => ({ type: 'ProjectUnarchived', data: { projectId: ID, at: EARLIER } });
const deleted = (): ProjectEvent => ({ type: 'ProjectDeleted', data: { projectId: ID, namespaceId: NS, at: EARLIER } });
const memberAdded = (userId: number, accessLevel: number): ProjectEvent => ({
  type: 'ProjectMemberAdded',
  data: { projectId: ID, userId, accessLevel, expiresAt: null, at: EARLIER },
});
const memberRemoved = (userId: number): ProjectEvent => ({
  type: 'ProjectMemberRemoved',
  data: { projectId: ID, userId, at: EARLIER },
});
const shared = (groupId: number, groupAccess = 30): ProjectEvent => ({
  type: 'ProjectSharedWithGroup',
  data: { projectId: ID, linkId: 1, groupId, groupAccess, expiresAt: null, at: EARLIER },
});
const unshared = (groupId: number): ProjectEvent => ({
  type: 'ProjectUnsharedWithGroup',
  data: { projectId: ID, groupId, at: EARLIER },
});
const attributeSet = (key: string, value: string): ProjectEvent => ({
  type: 'ProjectCustomAttributeSet',
  data: { projectId: ID, key, value, at: EARLIER },
});
const transferred = (namespaceId: number): ProjectEvent => ({
  type: 'ProjectTransferred',
  data: { projectId: ID, fromNamespaceId: NS, namespaceId, at: EARLIER },
});

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
      expect(fieldsOf(() => validateSettings({ defaultBranch: 'bad branch' }, undefined).throwIfAny())).toEqual({
        default_branch: ['is invalid'],
      });
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

    it('removes an existing project once', () => {
      expect(remove(given(created()), NOW)).toEqual([
        { type: 'ProjectDeleted', data: { projectId: ID, namespaceId: NS, at: AT } },
      ]);
      expect(() => remove(given(created(), deleted()), NOW)).toThrow(NotFound);
    });
  });

  describe('members', () => {
    it('adds guests to maintainers', () => {
      for (const level of [10, 20, 30, 40]) {
        expect(addMember(given(created()), 5, level, '2030-01-01', NOW)).toEqual([
          {
            type: 'ProjectMemberAdded',
            data: { projectId: ID, userId: 5, accessLevel: level, expiresAt: '2030-01-01', at: AT },
          },
        ]);
      }
    });

    it('refuses owner and unknown levels on the access_level field', () => {
      for (const level of [0, 5, 50, 60]) {
        expect(fieldsOf(() => addMember(given(created()), 5, level, null, NOW))).toEqual({
          access_level: ['is not included in the list'],
        });
        expect(fieldsOf(() => updateMember(given(created(), memberAdded(5, 30)), 5, level, null, NOW))).toEqual({
          access_level: ['is not included in the list'],
        });
      }
    });

    it('409 Member already exists, before looking at the level', () => {
      const err = thrown(() => addMember(given(created(), memberAdded(5, 30)), 5, 50, null, NOW));
      expect(err).toEqual(new Conflict('Member already exists'));
    });

    it('updates and removes existing members only (404 Not found otherwise)', () => {
      const s = given(created(), memberAdded(5, 30));
      expect(updateMember(s, 5, 40, null, NOW)).toEqual([
        { type: 'ProjectMemberUpdated', data: { projectId: ID, userId: 5, accessLevel: 40, expiresAt: null, at: AT } },
      ]);
      expect(removeMember(s, 5, NOW)).toEqual([
        { type: 'ProjectMemberRemoved', data: { projectId: ID, userId: 5, at: AT } },
      ]);
      expect(thrown(() => updateMember(s, 6, 30, null, NOW))).toEqual(new NotFound());
      expect(thrown(() => removeMember(given(created(), memberAdded(5, 30), memberRemoved(5)), 5, NOW))).toEqual(
        new NotFound(),
      );
    });
  });

  describe('sharing', () => {
    const link = { linkId: 11, groupId: 9, groupAccess: 20, expiresAt: '2031-02-03' };

    it('shares with another group', () => {
      expect(share(given(created()), link, [NS], NOW)).toEqual([
        {
          type: 'ProjectSharedWithGroup',
          data: { projectId: ID, linkId: 11, groupId: 9, groupAccess: 20, expiresAt: '2031-02-03', at: AT },
        },
      ]);
    });

    it('409 when shared with that group already', () => {
      expect(thrown(() => share(given(created(), shared(9)), link, [NS], NOW))).toEqual(
        new Conflict('Group already shared with this group'),
      );
    });

    it('409 for its own group or one of its ancestors', () => {
      const own = new Conflict('Project cannot be shared with the group it is in or one of its ancestors.');
      expect(thrown(() => share(given(created()), { ...link, groupId: NS }, [NS, 2, 1], NOW))).toEqual(own);
      expect(thrown(() => share(given(created()), { ...link, groupId: 1 }, [NS, 2, 1], NOW))).toEqual(own);
    });

    it('unshares a shared group; 404 Group Link Not Found otherwise', () => {
      expect(unshare(given(created(), shared(9)), 9, NOW)).toEqual([
        { type: 'ProjectUnsharedWithGroup', data: { projectId: ID, groupId: 9, at: AT } },
      ]);
      expect(thrown(() => unshare(given(created(), shared(9), unshared(9)), 9, NOW))).toEqual(
        new NotFound('Group Link'),
      );
    });

    it('may share again after unsharing', () => {
      expect(share(given(created(), shared(9), unshared(9)), link, [NS], NOW)).toHaveLength(1);
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

  describe('stars', () => {
    const starState = (...events: StarEvent[]) => events.reduce(starDecider.evolve, starDecider.initial());
    const starred: StarEvent = { type: 'ProjectStarred', data: { projectId: ID, userId: 5, at: EARLIER } };
    const unstarred: StarEvent = { type: 'ProjectUnstarred', data: { projectId: ID, userId: 5, at: EARLIER } };

    it('stars and unstars', () => {
      expect(star(starState(), ID, 5, true, NOW)).toEqual([
        { type: 'ProjectStarred', data: { projectId: ID, userId: 5, at: AT } },
      ]);
      expect(star(starState(starred), ID, 5, false, NOW)).toEqual([
        { type: 'ProjectUnstarred', data: { projectId: ID, userId: 5, at: AT } },
      ]);
      expect(star(starState(starred, unstarred), ID, 5, true, NOW)).toHaveLength(1);
    });

    it('304 when nothing would change', () => {
      expect(() => star(starState(starred), ID, 5, true, NOW)).toThrow(NotModified);
      expect(() => star(starState(), ID, 5, false, NOW)).toThrow(NotModified);
      expect(() => star(starState(starred, unstarred), ID, 5, false, NOW)).toThrow(NotModified);
    });
  });

  describe('pushes', () => {
    const update = {
      ref: 'refs/heads/main',
      before: '0'.repeat(40),
      after: 'a'.repeat(40),
      checkoutSha: 'a'.repeat(40),
      commits: [],
      totalCommitsCount: 3,
      message: null,
    };
    const push = {
      userId: 5,
      updates: [update],
      defaultBranch: 'main',
      statistics: { commitCount: 3, repositorySize: 1000 },
    };

    it('records the push; the first one names the default branch, which later events keep', () => {
      const [e] = recordPush(given(created({ defaultBranch: null })), push, NOW, 0);
      expect(e).toEqual({ type: 'RepositoryPushed', data: { ...push, projectId: ID, at: AT } });
      const s = given(created({ defaultBranch: null }), e);
      expect(s).toMatchObject({ settings: { defaultBranch: 'main' } });
      expect(recordPush(s, { ...push, defaultBranch: 'other' }, NOW, 0)[0].data).toMatchObject({ defaultBranch: null });
    });

    it('does not replace a default branch the project has, records nothing for no ref update, and 404s a deleted project', () => {
      expect(recordPush(given(created({ defaultBranch: 'master' })), push, NOW, 2)[0].data).toMatchObject({
        defaultBranch: null,
      });
      expect(recordPush(given(created()), { ...push, updates: [] }, NOW, 2)).toEqual([]);
      expect(() => recordPush(given(created(), deleted()), push, NOW, 2)).toThrow(NotFound);
    });

    const protectedMain = (pushAccessLevel: number, mergeAccessLevel: number): ProjectEvent => ({
      type: 'ProtectedBranchCreated',
      data: { projectId: ID, name: 'main', pushAccessLevel, mergeAccessLevel, at: AT },
    });

    it.each([
      [1, 30, 40],
      [2, 40, 40],
      [3, 40, 30],
    ] as const)(
      'protects the default branch its first push creates, in the same decision (setting %i: push %i, merge %i)',
      (setting, pushLevel, mergeLevel) => {
        const events = recordPush(given(created({ defaultBranch: null })), push, NOW, setting);
        expect(events.map((e) => e.type)).toEqual(['RepositoryPushed', 'ProtectedBranchCreated']);
        expect(events[1]).toEqual(protectedMain(pushLevel, mergeLevel));
        expect(given(created({ defaultBranch: null }), ...events)).toMatchObject({
          protectedBranches: [{ name: 'main', pushAccessLevel: pushLevel, mergeAccessLevel: mergeLevel }],
        });
      },
    );

    it('protects nothing with setting 0, nor a branch other than the default, nor an update of an existing one', () => {
      expect(recordPush(given(created({ defaultBranch: null })), push, NOW, 0)).toHaveLength(1);
      const first = given(
        created({ defaultBranch: null }),
        ...recordPush(given(created({ defaultBranch: null })), push, NOW, 0),
      );
      const feature = { ...update, ref: 'refs/heads/feature' };
      expect(recordPush(first, { ...push, updates: [feature], defaultBranch: null }, NOW, 2)).toHaveLength(1);
      const fastForward = { ...update, before: 'a'.repeat(40), after: 'b'.repeat(40) };
      expect(recordPush(first, { ...push, updates: [fastForward], defaultBranch: null }, NOW, 2)).toHaveLength(1);
      const tag = { ...update, ref: 'refs/tags/main' };
      expect(recordPush(given(created({ defaultBranch: 'main' })), { ...push, updates: [tag] }, NOW, 2)).toHaveLength(
        1,
      );
    });

    it('protects a default branch set before its first push when a push creates it (GitLab `default_branch?`)', () => {
      const events = recordPush(given(created({ defaultBranch: 'main' })), push, NOW, 2);
      expect(events.map((e) => e.type)).toEqual(['RepositoryPushed', 'ProtectedBranchCreated']);
      expect(events[0].data).toMatchObject({ defaultBranch: null });
    });

    it('cannot protect a default branch whose name is longer than a rule may be (255), and still records the push', () => {
      const long = 'b'.repeat(256);
      const longPush = { ...push, updates: [{ ...update, ref: `refs/heads/${long}` }], defaultBranch: long };
      expect(recordPush(given(created({ defaultBranch: null })), longPush, NOW, 2).map((e) => e.type)).toEqual([
        'RepositoryPushed',
      ]);
    });

    it('leaves a default branch a rule already covers (an exact name or a wildcard) as it is', () => {
      const wildcard: ProjectEvent = {
        type: 'ProtectedBranchCreated',
        data: { projectId: ID, name: 'ma*', pushAccessLevel: 30, mergeAccessLevel: 30, at: EARLIER },
      };
      expect(recordPush(given(created({ defaultBranch: null }), wildcard), push, NOW, 2)).toHaveLength(1);
      expect(recordPush(given(created({ defaultBranch: null }), protectedMain(0, 0)), push, NOW, 2)).toHaveLength(1);
    });
  });
});
