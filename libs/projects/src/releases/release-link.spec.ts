import { ApiError, NotFound } from '@app/platform';
import { settingsFrom } from '../projects/project-settings';
import { evolve, initial, type Project, type ProjectEvent } from '../projects/project';
import {
  addLinksOfNewRelease,
  addReleaseLink,
  changeReleaseLink,
  linkErrors,
  removeReleaseLink,
  type ReleaseLinkValues,
} from './release-link';

const NOW = new Date('2024-05-06T07:08:09.000Z');
const AT = NOW.toISOString();
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
    at: AT,
  },
};
const released = (tagName: string): ProjectEvent => ({
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
const added = (tagName: string, linkId: number, values = link()): ProjectEvent => ({
  type: 'ProjectReleaseLinkAdded',
  data: { projectId: ID, tagName, linkId, ...values, at: AT },
});
const linksOf = (s: Project) => (s.exists ? s.releaseLinks : undefined);

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

describe('release asset links on the project stream', () => {
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
      expect(addReleaseLink(given(created, released('v1')), 'v1', 9, link(), NOW)).toEqual([
        { type: 'ProjectReleaseLinkAdded', data: { projectId: ID, tagName: 'v1', linkId: 9, ...link(), at: AT } },
      ]);
    });

    it('404s a release that does not exist, and 400s a duplicate with the list of messages', () => {
      expect(() => addReleaseLink(given(created), 'v1', 9, link(), NOW)).toThrow(NotFound);
      const s = given(created, released('v1'), added('v1', 1));
      expect(refusal(() => addReleaseLink(s, 'v1', 9, link({ url: 'https://example.com/other' }), NOW))).toEqual({
        status: 400,
        body: ['Name has already been taken'],
      });
    });

    it("checks against the release's own links only", () => {
      const s = given(created, released('v1'), released('v2'), added('v1', 1));
      expect(addReleaseLink(s, 'v2', 9, link(), NOW)).toHaveLength(1);
    });
  });

  describe('addLinksOfNewRelease', () => {
    it('records each link in order, and refuses two alike with one 400 sentence', () => {
      const s = given(created);
      const events = addLinksOfNewRelease(s, 'v1', [link(), link({ name: 'b', url: 'https://b' })], [3, 4], NOW);
      expect(events.map((e) => [e.data.linkId, e.data.name])).toEqual([
        [3, 'app.dmg'],
        [4, 'b'],
      ]);
      expect(refusal(() => addLinksOfNewRelease(s, 'v1', [link(), link()], [3, 4], NOW))).toEqual({
        status: 400,
        body: 'Validation failed: Links url has already been taken, Links name has already been taken',
      });
    });
  });

  describe('changeReleaseLink', () => {
    it('applies what was given over the stored values, the link type kept when none is given', () => {
      const s = given(created, released('v1'), added('v1', 1, link({ linkType: 'package' })));
      expect(changeReleaseLink(s, 'v1', 1, { name: 'new' }, NOW)).toEqual([
        {
          type: 'ProjectReleaseLinkChanged',
          data: { projectId: ID, tagName: 'v1', linkId: 1, ...link({ name: 'new', linkType: 'package' }), at: AT },
        },
      ]);
    });

    it('may keep its own name; may not take another link of the release', () => {
      const s = given(created, released('v1'), added('v1', 1), added('v1', 2, link({ name: 'b', url: 'https://b' })));
      expect(changeReleaseLink(s, 'v1', 1, { name: 'app.dmg' }, NOW)).toHaveLength(1);
      expect(refusal(() => changeReleaseLink(s, 'v1', 1, { name: 'b' }, NOW)).body).toEqual([
        'Name has already been taken',
      ]);
      expect(() => changeReleaseLink(s, 'v1', 3, { name: 'c' }, NOW)).toThrow(NotFound);
      expect(() => changeReleaseLink(s, 'v2', 1, { name: 'c' }, NOW)).toThrow(NotFound);
    });
  });

  describe('removeReleaseLink and evolve', () => {
    it("removes a link, and the release's removal takes its links", () => {
      const s = given(created, released('v1'), released('v2'), added('v1', 1), added('v2', 2));
      const [gone] = removeReleaseLink(s, 'v1', 1, NOW);
      expect(gone).toEqual({
        type: 'ProjectReleaseLinkRemoved',
        data: { projectId: ID, tagName: 'v1', linkId: 1, at: AT },
      });
      expect(linksOf(evolve(s, gone))?.map((l) => l.linkId)).toEqual([2]);
      const releaseGone: ProjectEvent = {
        type: 'ProjectReleaseRemoved',
        data: { projectId: ID, tagName: 'v2', at: AT },
      };
      expect(linksOf(evolve(s, releaseGone))?.map((l) => l.linkId)).toEqual([1]);
      expect(() => removeReleaseLink(s, 'v1', 2, NOW)).toThrow(NotFound);
    });
  });
});
