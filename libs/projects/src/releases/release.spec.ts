import { Conflict, NotFound } from '@app/platform';
import { settingsFrom } from '../projects/project-settings';
import { evolve, initial, type Project, type ProjectEvent } from '../projects/project';
import {
  changeRelease,
  createRelease,
  deleteRelease,
  publishRelease,
  ReleaseNotFound,
  removeTagRelease,
  updateRelease,
} from './release';

const NOW = new Date('2024-05-06T07:08:09.000Z');
const AT = NOW.toISOString();
const EARLIER = '2024-01-01T00:00:00.000Z';
const ID = 42;

const given = (...events: ProjectEvent[]): Project => events.reduce(evolve, initial());
const created: ProjectEvent = {
  type: 'ProjectCreated',
  data: {
    projectId: ID,
    namespaceId: 7,
    ...settingsFrom({ name: 'P', path: 'p', defaultBranch: 'master' }),
    creatorId: 3,
    runnersToken: 'secret',
    at: EARLIER,
  },
};
const released = (tagName: string, description = 'Notes'): ProjectEvent => ({
  type: 'ProjectReleaseCreated',
  data: { projectId: ID, tagName, description, at: EARLIER },
});
const removed = (tagName: string): ProjectEvent => ({
  type: 'ProjectReleaseRemoved',
  data: { projectId: ID, tagName, at: EARLIER },
});
const deleted: ProjectEvent = { type: 'ProjectDeleted', data: { projectId: ID, namespaceId: 7, at: EARLIER } };
const releasesOf = (s: Project) => (s.exists ? s.releases : undefined);

describe('release notes of tags on the project stream', () => {
  describe('evolve', () => {
    it('keeps the tags that have notes: created, updated, removed; a deleted project keeps none', () => {
      const updated: ProjectEvent = {
        type: 'ProjectReleaseUpdated',
        data: { projectId: ID, tagName: 'v1', description: 'New', at: EARLIER },
      };
      expect(releasesOf(given(created))).toEqual([]);
      expect(releasesOf(given(created, released('v1'), released('v2'), updated, removed('v2')))).toEqual(['v1']);
      expect(given(created, released('v1'), deleted)).toEqual({ exists: false });
    });

    it('takes a tag called __proto__ like any other name', () => {
      const s = given(created);
      expect(() => updateRelease(s, { tagName: '__proto__', description: 'x' }, true, NOW)).toThrow(
        'Release does not exist',
      );
      expect(createRelease(s, { tagName: '__proto__', description: 'x' }, true, NOW)).toHaveLength(1);
    });
  });

  describe('createRelease (POST .../tags/:tag_name/release)', () => {
    it('records the notes of a tag without any', () => {
      expect(createRelease(given(created, released('v1')), { tagName: 'v2', description: 'Two' }, true, NOW)).toEqual([
        { type: 'ProjectReleaseCreated', data: { projectId: ID, tagName: 'v2', description: 'Two', at: AT } },
      ]);
    });

    it("409s GitLab's `Release already exists` for a tag with notes, even removed and made again once", () => {
      const clash = (s: Project) => () => createRelease(s, { tagName: 'v1', description: 'x' }, true, NOW);
      expect(clash(given(created, released('v1')))).toThrow(Conflict);
      expect(clash(given(created, released('v1')))).toThrow('Release already exists');
      expect(clash(given(created, released('v1'), removed('v1'), released('v1')))).toThrow(Conflict);
      expect(clash(given(created, released('v1'), removed('v1')))()).toHaveLength(1);
    });

    it("404s `Tag does not exist` (GitLab's sentence, not `404 Tag Not Found`) before looking at releases", () => {
      const missing = () =>
        createRelease(given(created, released('v1')), { tagName: 'v1', description: 'x' }, false, NOW);
      expect(missing).toThrow(ReleaseNotFound);
      expect(missing).toThrow(NotFound);
      expect(missing).toThrow(/^Tag does not exist$/);
    });

    it('records nothing for blank notes, which 10.x answers as made but never saves', () => {
      expect(createRelease(given(created), { tagName: 'v1', description: ' ' }, true, NOW)).toEqual([]);
    });

    it('404s a project that is gone', () => {
      expect(() => createRelease(given(created, deleted), { tagName: 'v1', description: 'x' }, true, NOW)).toThrow(
        '404 Project Not Found',
      );
    });
  });

  describe('updateRelease (PUT .../tags/:tag_name/release)', () => {
    it('replaces the notes of a tag that has them', () => {
      expect(updateRelease(given(created, released('v1')), { tagName: 'v1', description: 'New' }, true, NOW)).toEqual([
        { type: 'ProjectReleaseUpdated', data: { projectId: ID, tagName: 'v1', description: 'New', at: AT } },
      ]);
    });

    it('404s `Release does not exist` for a tag without notes and `Tag does not exist` for a missing tag', () => {
      const s = given(created, released('v1'), removed('v1'));
      expect(() => updateRelease(s, { tagName: 'v1', description: 'x' }, true, NOW)).toThrow(
        /^Release does not exist$/,
      );
      expect(() => updateRelease(s, { tagName: 'v1', description: 'x' }, false, NOW)).toThrow(/^Tag does not exist$/);
    });

    it('records nothing for blank notes', () => {
      expect(updateRelease(given(created, released('v1')), { tagName: 'v1', description: '' }, true, NOW)).toEqual([]);
    });
  });

  describe('removeTagRelease (the tag deletion endpoint)', () => {
    it('removes the notes of a tag that has them, and nothing otherwise', () => {
      const s = given(created, released('v1'));
      expect(removeTagRelease(s, 'v1', NOW)).toEqual([
        { type: 'ProjectReleaseRemoved', data: { projectId: ID, tagName: 'v1', at: AT } },
      ]);
      expect(removeTagRelease(s, 'v2', NOW)).toEqual([]);
    });
  });

  describe('publishRelease (POST /projects/:id/releases)', () => {
    const release = { tagName: 'v2', name: 'Two', description: null, releasedAt: null, authorId: 5 };

    it('records the release with its name and author, released when created unless a date is given', () => {
      expect(publishRelease(given(created), release, true, NOW)).toEqual([
        {
          type: 'ProjectReleaseCreated',
          data: { projectId: ID, tagName: 'v2', name: 'Two', description: null, releasedAt: AT, authorId: 5, at: AT },
        },
      ]);
      const later = '2030-01-01T00:00:00.000Z';
      const [e] = publishRelease(given(created), { ...release, releasedAt: later }, true, NOW);
      expect(e.data.releasedAt).toBe(later);
    });

    it('409s a tag with a release from either API, before asking for the tag', () => {
      expect(() => publishRelease(given(created, released('v2')), release, false, NOW)).toThrow(Conflict);
      expect(() => publishRelease(given(created), release, false, NOW)).toThrow(/^Tag does not exist$/);
    });
  });

  describe('changeRelease (PUT /projects/:id/releases/:tag_name)', () => {
    it('records what was given, also for notes 10.x made', () => {
      expect(changeRelease(given(created, released('v1')), 'v1', { name: 'One' }, true, NOW)).toEqual([
        { type: 'ProjectReleaseChanged', data: { projectId: ID, tagName: 'v1', changes: { name: 'One' }, at: AT } },
      ]);
    });

    it('404s `Tag does not exist` first, then `Release does not exist`', () => {
      expect(() => changeRelease(given(created), 'v1', { name: 'x' }, false, NOW)).toThrow(/^Tag does not exist$/);
      expect(() => changeRelease(given(created), 'v1', { name: 'x' }, true, NOW)).toThrow(/^Release does not exist$/);
    });

    it('keeps the tag among those with releases', () => {
      const [e] = changeRelease(given(created, released('v1')), 'v1', { name: 'One' }, true, NOW);
      expect(releasesOf(given(created, released('v1'), e))).toEqual(['v1']);
    });
  });

  describe('deleteRelease (DELETE /projects/:id/releases/:tag_name)', () => {
    it('removes the release, and 404s a missing tag or release', () => {
      expect(deleteRelease(given(created, released('v1')), 'v1', true, NOW)).toEqual([
        { type: 'ProjectReleaseRemoved', data: { projectId: ID, tagName: 'v1', at: AT } },
      ]);
      expect(() => deleteRelease(given(created, released('v1')), 'v1', false, NOW)).toThrow(/^Tag does not exist$/);
      expect(() => deleteRelease(given(created), 'v1', true, NOW)).toThrow(/^Release does not exist$/);
    });
  });
});
