import { Conflict, NotFound } from '@app/platform';
import {
  changeRelease,
  createRelease,
  deleteRelease,
  publishRelease,
  ReleaseNotFound,
  removeTagRelease,
  updateRelease,
} from './release';
import { evolve, initial, releaseStream, type Release, type ReleaseStreamEvent } from './release-stream';

const NOW = new Date('2024-05-06T07:08:09.000Z');
const AT = NOW.toISOString();
const EARLIER = '2024-01-01T00:00:00.000Z';
const ID = 42;

/** The state of one release's stream after `events` (every event of one stream names the same tag). */
const given = (...events: ReleaseStreamEvent[]): Release => events.reduce(evolve, initial());
const released = (tagName: string, description = 'Notes'): ReleaseStreamEvent => ({
  type: 'ProjectReleaseCreated',
  data: { projectId: ID, tagName, description, at: EARLIER },
});
const removed = (tagName: string): ReleaseStreamEvent => ({
  type: 'ProjectReleaseRemoved',
  data: { projectId: ID, tagName, at: EARLIER },
});

describe('release notes of tags on the release stream', () => {
  describe('releaseStream', () => {
    it('names one stream per project and tag, short whatever the tag is called', () => {
      const s = releaseStream(ID, 'v1.0');
      expect(s).toMatch(/^release-42-[0-9a-f]{24}$/);
      expect(releaseStream(ID, 'v1.0')).toBe(s);
      expect(releaseStream(43, 'v1.0')).not.toBe(s);
      expect(releaseStream(ID, 'v1.1')).not.toBe(s);
      expect(releaseStream(ID, `release/${'x'.repeat(300)}`)).toMatch(/^release-42-[0-9a-f]{24}$/);
    });
  });

  describe('evolve', () => {
    it('knows whether the tag has notes: created, updated, changed, removed, made again', () => {
      const updated: ReleaseStreamEvent = {
        type: 'ProjectReleaseUpdated',
        data: { projectId: ID, tagName: 'v1', description: 'New', at: EARLIER },
      };
      expect(given().released).toBe(false);
      expect(given(released('v1')).released).toBe(true);
      expect(given(released('v1'), updated).released).toBe(true);
      expect(given(released('v1'), updated, removed('v1')).released).toBe(false);
      expect(given(released('v1'), removed('v1'), released('v1')).released).toBe(true);
    });

    it('takes a tag called __proto__ like any other name', () => {
      const s = given();
      expect(() => updateRelease(ID, s, { tagName: '__proto__', description: 'x' }, true, NOW)).toThrow(
        'Release does not exist',
      );
      expect(createRelease(ID, s, { tagName: '__proto__', description: 'x' }, true, NOW)).toHaveLength(1);
    });
  });

  describe('createRelease (POST .../tags/:tag_name/release)', () => {
    it('records the notes of a tag without any', () => {
      expect(createRelease(ID, given(), { tagName: 'v2', description: 'Two' }, true, NOW)).toEqual([
        { type: 'ProjectReleaseCreated', data: { projectId: ID, tagName: 'v2', description: 'Two', at: AT } },
      ]);
    });

    it("409s GitLab's `Release already exists` for a tag with notes, even removed and made again once", () => {
      const clash = (s: Release) => () => createRelease(ID, s, { tagName: 'v1', description: 'x' }, true, NOW);
      expect(clash(given(released('v1')))).toThrow(Conflict);
      expect(clash(given(released('v1')))).toThrow('Release already exists');
      expect(clash(given(released('v1'), removed('v1'), released('v1')))).toThrow(Conflict);
      expect(clash(given(released('v1'), removed('v1')))()).toHaveLength(1);
    });

    it("404s `Tag does not exist` (GitLab's sentence, not `404 Tag Not Found`) before looking at releases", () => {
      const missing = () => createRelease(ID, given(released('v1')), { tagName: 'v1', description: 'x' }, false, NOW);
      expect(missing).toThrow(ReleaseNotFound);
      expect(missing).toThrow(NotFound);
      expect(missing).toThrow(/^Tag does not exist$/);
    });

    it('records nothing for blank notes, which 10.x answers as made but never saves', () => {
      expect(createRelease(ID, given(), { tagName: 'v1', description: ' ' }, true, NOW)).toEqual([]);
    });
  });

  describe('updateRelease (PUT .../tags/:tag_name/release)', () => {
    it('replaces the notes of a tag that has them', () => {
      expect(updateRelease(ID, given(released('v1')), { tagName: 'v1', description: 'New' }, true, NOW)).toEqual([
        { type: 'ProjectReleaseUpdated', data: { projectId: ID, tagName: 'v1', description: 'New', at: AT } },
      ]);
    });

    it('404s `Release does not exist` for a tag without notes and `Tag does not exist` for a missing tag', () => {
      const s = given(released('v1'), removed('v1'));
      expect(() => updateRelease(ID, s, { tagName: 'v1', description: 'x' }, true, NOW)).toThrow(
        /^Release does not exist$/,
      );
      expect(() => updateRelease(ID, s, { tagName: 'v1', description: 'x' }, false, NOW)).toThrow(
        /^Tag does not exist$/,
      );
    });

    it('records nothing for blank notes', () => {
      expect(updateRelease(ID, given(released('v1')), { tagName: 'v1', description: '' }, true, NOW)).toEqual([]);
    });
  });

  describe('removeTagRelease (the tag deletion endpoint)', () => {
    it('removes the notes of a tag that has them, and nothing otherwise', () => {
      expect(removeTagRelease(ID, given(released('v1')), 'v1', NOW)).toEqual([
        { type: 'ProjectReleaseRemoved', data: { projectId: ID, tagName: 'v1', at: AT } },
      ]);
      expect(removeTagRelease(ID, given(), 'v2', NOW)).toEqual([]);
      expect(removeTagRelease(ID, given(released('v1'), removed('v1')), 'v1', NOW)).toEqual([]);
    });
  });

  describe('publishRelease (POST /projects/:id/releases)', () => {
    const release = { tagName: 'v2', name: 'Two', description: null, releasedAt: null, authorId: 5 };

    it('records the release with its name and author, released when created unless a date is given', () => {
      expect(publishRelease(ID, given(), release, true, NOW)).toEqual([
        {
          type: 'ProjectReleaseCreated',
          data: { projectId: ID, tagName: 'v2', name: 'Two', description: null, releasedAt: AT, authorId: 5, at: AT },
        },
      ]);
      const later = '2030-01-01T00:00:00.000Z';
      const [e] = publishRelease(ID, given(), { ...release, releasedAt: later }, true, NOW);
      expect(e.data.releasedAt).toBe(later);
    });

    it('409s a tag with a release from either API, before asking for the tag', () => {
      expect(() => publishRelease(ID, given(released('v2')), release, false, NOW)).toThrow(Conflict);
      expect(() => publishRelease(ID, given(), release, false, NOW)).toThrow(/^Tag does not exist$/);
    });
  });

  describe('changeRelease (PUT /projects/:id/releases/:tag_name)', () => {
    it('records what was given, also for notes 10.x made', () => {
      expect(changeRelease(ID, given(released('v1')), 'v1', { name: 'One' }, true, NOW)).toEqual([
        { type: 'ProjectReleaseChanged', data: { projectId: ID, tagName: 'v1', changes: { name: 'One' }, at: AT } },
      ]);
    });

    it('404s `Tag does not exist` first, then `Release does not exist`', () => {
      expect(() => changeRelease(ID, given(), 'v1', { name: 'x' }, false, NOW)).toThrow(/^Tag does not exist$/);
      expect(() => changeRelease(ID, given(), 'v1', { name: 'x' }, true, NOW)).toThrow(/^Release does not exist$/);
    });

    it('keeps the release', () => {
      const [e] = changeRelease(ID, given(released('v1')), 'v1', { name: 'One' }, true, NOW);
      expect(given(released('v1'), e).released).toBe(true);
    });
  });

  describe('deleteRelease (DELETE /projects/:id/releases/:tag_name)', () => {
    it('removes the release, and 404s a missing tag or release', () => {
      expect(deleteRelease(ID, given(released('v1')), 'v1', true, NOW)).toEqual([
        { type: 'ProjectReleaseRemoved', data: { projectId: ID, tagName: 'v1', at: AT } },
      ]);
      expect(() => deleteRelease(ID, given(released('v1')), 'v1', false, NOW)).toThrow(/^Tag does not exist$/);
      expect(() => deleteRelease(ID, given(), 'v1', true, NOW)).toThrow(/^Release does not exist$/);
    });
  });
});
