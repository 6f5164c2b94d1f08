import { ApiError, NotFound } from '@app/platform';
import {
  addLinksOfNewRelease,
  addReleaseLink,
  changeReleaseLink,
  linkErrors,
  removeReleaseLink,
  type ReleaseLinkValues,
} from './release-link';
import { evolve, initial, type Release, type ReleaseStreamEvent } from './release-stream';

const NOW = new Date('2024-05-06T07:08:09.000Z');
const AT = NOW.toISOString();
const ID = 42;

/** The state of one release's stream (the release of `v1`) after `events`. */
const given = (...events: ReleaseStreamEvent[]): Release => events.reduce(evolve, initial());
const released = (tagName = 'v1'): ReleaseStreamEvent => ({
  type: 'ProjectReleaseCreated',
  data: { projectId: ID, tagName, description: 'Notes', at: AT },
});
const link = (over: Partial<ReleaseLinkValues> = {}): ReleaseLinkValues => ({
  name: 'app.dmg',
  url: 'https://example.com/app.dmg',
  filepath: null,
  linkType: 'other',
  ...over,
});
const added = (linkId: number, values = link()): ReleaseStreamEvent => ({
  type: 'ProjectReleaseLinkAdded',
  data: { projectId: ID, tagName: 'v1', linkId, ...values, at: AT },
});
const linkIdsOf = (s: Release) => s.links.map((l) => l.linkId);

/** The body of a refusal: GitLab's `render_api_error!` message. */
function refusal(f: () => unknown): { status: number; body: unknown } {
  try {
    f();
  } catch (e) {
    if (e instanceof ApiError) return { status: e.status, body: e.body };
    throw e;
  }
  throw new Error('expected a refusal');
}

describe('release asset links on the release stream', () => {
  describe('linkErrors (the model validations)', () => {
    it('accepts http, https and ftp URLs and a file path of path segments after a slash', () => {
      expect(linkErrors(link({ url: 'ftp://example.com/a', filepath: '/bin/app-1.0.tar.gz' }), [])).toEqual([]);
      expect(linkErrors(link({ url: 'http://example.com' }), [])).toEqual([]);
    });

    it("words each failure as the model's full messages, in its order", () => {
      expect(linkErrors(link({ url: '', name: ' ' }), [])).toEqual(["Url can't be blank", "Name can't be blank"]);
      expect(linkErrors(link({ url: 'javascript:alert(1)' }), [])).toEqual([
        'Url is blocked: Only allowed schemes are http, https, ftp',
      ]);
      expect(linkErrors(link({ url: 'not a url' }), [])).toHaveLength(1);
      expect(linkErrors(link({ filepath: 'bin/app' }), [])).toEqual(['Filepath is in an invalid format']);
      expect(linkErrors(link({ filepath: '/bin/app/' }), [])).toEqual(['Filepath is in an invalid format']);
      expect(linkErrors(link({ filepath: `/${'a'.repeat(128)}` }), [])).toEqual([
        'Filepath is too long (maximum is 128 characters)',
      ]);
    });

    it('refuses a name, URL or file path another link of the release has', () => {
      const other = { tagName: 'v1', linkId: 1, ...link({ filepath: '/bin/app' }) };
      expect(linkErrors(link({ filepath: '/bin/app' }), [other])).toEqual([
        'Url has already been taken',
        'Name has already been taken',
        'Filepath has already been taken',
      ]);
    });
  });

  describe('addReleaseLink', () => {
    it("records the link on the release's tag", () => {
      expect(addReleaseLink(ID, given(released()), 'v1', 9, link(), NOW)).toEqual([
        { type: 'ProjectReleaseLinkAdded', data: { projectId: ID, tagName: 'v1', linkId: 9, ...link(), at: AT } },
      ]);
    });

    it('404s a release that does not exist, and 400s a duplicate with the list of messages', () => {
      expect(() => addReleaseLink(ID, given(), 'v1', 9, link(), NOW)).toThrow(NotFound);
      const s = given(released(), added(1));
      expect(refusal(() => addReleaseLink(ID, s, 'v1', 9, link({ url: 'https://example.com/other' }), NOW))).toEqual({
        status: 400,
        body: ['Name has already been taken'],
      });
    });

    it('checks against the links the release has now: a removed release took its links, one made again has none', () => {
      const gone: ReleaseStreamEvent = {
        type: 'ProjectReleaseRemoved',
        data: { projectId: ID, tagName: 'v1', at: AT },
      };
      const s = given(released(), added(1), gone, released());
      expect(s.links).toEqual([]);
      expect(addReleaseLink(ID, s, 'v1', 9, link(), NOW)).toHaveLength(1);
    });
  });

  describe('addLinksOfNewRelease', () => {
    it('records each link in order, and refuses two alike with one 400 sentence', () => {
      const events = addLinksOfNewRelease(ID, 'v1', [link(), link({ name: 'b', url: 'https://b' })], [3, 4], NOW);
      expect(events.map((e) => [e.data.linkId, e.data.name])).toEqual([
        [3, 'app.dmg'],
        [4, 'b'],
      ]);
      expect(refusal(() => addLinksOfNewRelease(ID, 'v1', [link(), link()], [3, 4], NOW))).toEqual({
        status: 400,
        body: 'Validation failed: Links url has already been taken, Links name has already been taken',
      });
    });
  });

  describe('changeReleaseLink', () => {
    it('applies what was given over the stored values, the link type kept when none is given', () => {
      const s = given(released(), added(1, link({ linkType: 'package' })));
      expect(changeReleaseLink(ID, s, 'v1', 1, { name: 'new' }, NOW)).toEqual([
        {
          type: 'ProjectReleaseLinkChanged',
          data: { projectId: ID, tagName: 'v1', linkId: 1, ...link({ name: 'new', linkType: 'package' }), at: AT },
        },
      ]);
    });

    it('may keep its own name; may not take another link of the release', () => {
      const s = given(released(), added(1), added(2, link({ name: 'b', url: 'https://b' })));
      expect(changeReleaseLink(ID, s, 'v1', 1, { name: 'app.dmg' }, NOW)).toHaveLength(1);
      expect(refusal(() => changeReleaseLink(ID, s, 'v1', 1, { name: 'b' }, NOW)).body).toEqual([
        'Name has already been taken',
      ]);
      expect(() => changeReleaseLink(ID, s, 'v1', 3, { name: 'c' }, NOW)).toThrow(NotFound);
      expect(() => changeReleaseLink(ID, given(), 'v1', 1, { name: 'c' }, NOW)).toThrow(NotFound);
    });
  });

  describe('removeReleaseLink and evolve', () => {
    it("removes a link, and the release's removal takes its links", () => {
      const s = given(released(), added(1), added(2, link({ name: 'b', url: 'https://b' })));
      const [gone] = removeReleaseLink(ID, s, 'v1', 1, NOW);
      expect(gone).toEqual({
        type: 'ProjectReleaseLinkRemoved',
        data: { projectId: ID, tagName: 'v1', linkId: 1, at: AT },
      });
      expect(linkIdsOf(evolve(s, gone))).toEqual([2]);
      const releaseGone: ReleaseStreamEvent = {
        type: 'ProjectReleaseRemoved',
        data: { projectId: ID, tagName: 'v1', at: AT },
      };
      expect(evolve(s, releaseGone)).toEqual({ released: false, links: [] });
      expect(() => removeReleaseLink(ID, evolve(s, gone), 'v1', 1, NOW)).toThrow(NotFound);
    });
  });
});
