import { ACCESS, type Visibility } from '@app/groups';
import { Forbidden } from '@app/platform';
import {
  DEPLOY_KEY_REFUSALS,
  ProjectAccessPolicy,
  type DeployKeyLink,
  type ProjectAccessFacts,
  type ProjectCaller,
} from './project-access-policy';

const LEVELS = [ACCESS.none, ACCESS.guest, ACCESS.reporter, ACCESS.developer, ACCESS.maintainer, ACCESS.owner];
const VISIBILITIES: Visibility[] = ['public', 'internal', 'private'];

type CallerKind = 'anonymous' | 'user' | 'external' | 'admin' | 'external admin';
const CALLERS: Record<CallerKind, ProjectCaller> = {
  anonymous: undefined,
  user: { isAdmin: false, external: false },
  external: { isAdmin: false, external: true },
  admin: { isAdmin: true, external: false },
  'external admin': { isAdmin: true, external: true },
};

/**
 * One answer per level of LEVELS (none, guest, reporter, developer, maintainer, owner): `y` allowed,
 * `-` refused. An anonymous caller has no level, so only its first answer counts.
 */
type Answers = Record<CallerKind, string>;
type Matrix = Record<Visibility, Answers>;

const READ: Matrix = {
  public: { anonymous: 'y', user: 'yyyyyy', external: 'yyyyyy', admin: 'yyyyyy', 'external admin': 'yyyyyy' },
  internal: { anonymous: '-', user: 'yyyyyy', external: '-yyyyy', admin: 'yyyyyy', 'external admin': 'yyyyyy' },
  private: { anonymous: '-', user: '-yyyyy', external: '-yyyyy', admin: 'yyyyyy', 'external admin': 'yyyyyy' },
};

// GitLab's download_code: internal_access lets every signed-in non-external user in; others need reporter.
const DOWNLOAD: Matrix = {
  public: { anonymous: 'y', user: 'yyyyyy', external: 'yyyyyy', admin: 'yyyyyy', 'external admin': 'yyyyyy' },
  internal: { anonymous: '-', user: 'yyyyyy', external: '--yyyy', admin: 'yyyyyy', 'external admin': 'yyyyyy' },
  private: { anonymous: '-', user: '--yyyy', external: '--yyyy', admin: 'yyyyyy', 'external admin': 'yyyyyy' },
};

const FORK: Matrix = {
  public: { anonymous: '-', user: 'yyyyyy', external: 'yyyyyy', admin: 'yyyyyy', 'external admin': 'yyyyyy' },
  internal: { anonymous: '-', user: 'yyyyyy', external: '--yyyy', admin: 'yyyyyy', 'external admin': 'yyyyyy' },
  private: { anonymous: '-', user: '--yyyy', external: '--yyyy', admin: 'yyyyyy', 'external admin': 'yyyyyy' },
};

const PUSH: Answers = {
  anonymous: '-',
  user: '---yyy',
  external: '---yyy',
  admin: 'yyyyyy',
  'external admin': 'yyyyyy',
};

const given = (visibility: Visibility, access: number, archived = false): ProjectAccessFacts => ({
  visibility,
  access,
  archived,
});

/** Every (visibility, caller, level, archived) case with the answer the table gives it. */
function cases(table: (v: Visibility) => Answers): [Visibility, CallerKind, number, boolean, boolean][] {
  const out: [Visibility, CallerKind, number, boolean, boolean][] = [];
  for (const v of VISIBILITIES)
    for (const caller of Object.keys(CALLERS) as CallerKind[]) {
      const answers = table(v)[caller];
      const levels = caller === 'anonymous' ? [ACCESS.none] : LEVELS;
      levels.forEach((level, i) => {
        for (const archived of [false, true]) out.push([v, caller, level, archived, answers[i] === 'y']);
      });
    }
  return out;
}

describe('ProjectAccessPolicy', () => {
  describe('mayRead: the project is visible (archived or not)', () => {
    it.each(cases((v) => READ[v]))('%s project, %s caller, level %i, archived %s: %s', (v, c, level, archived, ok) => {
      expect(ProjectAccessPolicy.mayRead(given(v, level, archived), CALLERS[c])).toBe(ok);
    });
  });

  describe('mayDownloadCode: public to all, internal to non-external users, else reporter; admins always', () => {
    it.each(cases((v) => DOWNLOAD[v]))(
      '%s project, %s caller, level %i, archived %s: %s',
      (v, c, level, archived, ok) => {
        expect(ProjectAccessPolicy.mayDownloadCode(given(v, level, archived), CALLERS[c])).toBe(ok);
      },
    );

    it('never grants more than mayRead', () => {
      for (const [v, c, level, archived] of cases((v) => DOWNLOAD[v]))
        if (ProjectAccessPolicy.mayDownloadCode(given(v, level, archived), CALLERS[c]))
          expect(ProjectAccessPolicy.mayRead(given(v, level, archived), CALLERS[c])).toBe(true);
    });
  });

  describe('requireDownloadCode', () => {
    it('passes where mayDownloadCode does', () => {
      expect(() =>
        ProjectAccessPolicy.requireDownloadCode(given('private', ACCESS.reporter), CALLERS.user),
      ).not.toThrow();
    });

    it('throws a bare Forbidden (the API answers 403 {"message":"403 Forbidden"})', () => {
      const refuse = () => ProjectAccessPolicy.requireDownloadCode(given('internal', ACCESS.guest), CALLERS.external);
      expect(refuse).toThrow(Forbidden);
      expect(refuse).toThrow('403 Forbidden');
    });
  });

  describe('mayFork: download_code, signed in', () => {
    it.each(cases((v) => FORK[v]))('%s project, %s caller, level %i, archived %s: %s', (v, c, level, archived, ok) => {
      expect(ProjectAccessPolicy.mayFork(given(v, level, archived), CALLERS[c])).toBe(ok);
    });
  });

  describe('mayPushCode: developer or more, whatever the visibility, never into an archived project', () => {
    it.each(cases(() => PUSH).filter(([, , , archived]) => !archived))(
      '%s project, %s caller, level %i, archived %s: %s',
      (v, c, level, archived, ok) => {
        expect(ProjectAccessPolicy.mayPushCode(given(v, level, archived), CALLERS[c])).toBe(ok);
      },
    );

    it.each(cases(() => PUSH).filter(([, , , archived]) => archived))(
      '%s project, %s caller, level %i, archived %s: refused',
      (v, c, level, archived) => {
        expect(ProjectAccessPolicy.mayPushCode(given(v, level, archived), CALLERS[c])).toBe(false);
      },
    );
  });

  describe('pushCodeRefusal: says why', () => {
    it('is undefined for a developer of a live project', () => {
      expect(ProjectAccessPolicy.pushCodeRefusal(given('private', ACCESS.developer), CALLERS.user)).toBeUndefined();
    });

    it('is access below developer, archived or not (GitLab checks the level first)', () => {
      expect(ProjectAccessPolicy.pushCodeRefusal(given('public', ACCESS.reporter), CALLERS.user)).toBe('access');
      expect(ProjectAccessPolicy.pushCodeRefusal(given('public', ACCESS.reporter, true), CALLERS.user)).toBe('access');
      expect(ProjectAccessPolicy.pushCodeRefusal(given('public', ACCESS.none), undefined)).toBe('access');
    });

    it('is archived for a developer or an administrator of an archived project', () => {
      expect(ProjectAccessPolicy.pushCodeRefusal(given('private', ACCESS.maintainer, true), CALLERS.user)).toBe(
        'archived',
      );
      expect(ProjectAccessPolicy.pushCodeRefusal(given('private', ACCESS.none, true), CALLERS.admin)).toBe('archived');
    });
  });

  describe('deploy keys: the link to the project decides, not a level', () => {
    type LinkKind = 'not enabled' | 'read-only' | 'can push';
    const LINKS: Record<LinkKind, DeployKeyLink> = {
      'not enabled': undefined,
      'read-only': { canPush: false },
      'can push': { canPush: true },
    };
    // One answer per visibility (public, internal, private) for each link, live and archived projects.
    const DOWNLOAD_BY_KEY: Record<LinkKind, string> = { 'not enabled': 'y--', 'read-only': 'yyy', 'can push': 'yyy' };
    const PUSH_BY_KEY: Record<LinkKind, [string, string, string]> = {
      'not enabled': ['read-only', 'not-found', 'not-found'],
      'read-only': ['read-only', 'read-only', 'read-only'],
      'can push': ['ok', 'ok', 'ok'],
    };
    const keyCases = (Object.keys(LINKS) as LinkKind[]).flatMap((link) =>
      VISIBILITIES.flatMap((v, i) => [false, true].map((archived) => [link, v, archived, i] as const)),
    );

    it.each(keyCases)('may download: key %s, %s project, archived %s', (link, v, archived, i) => {
      expect(ProjectAccessPolicy.deployKeyMayDownloadCode(given(v, ACCESS.none, archived), LINKS[link])).toBe(
        DOWNLOAD_BY_KEY[link][i] === 'y',
      );
    });

    it.each(keyCases)('push: key %s, %s project, archived %s', (link, v, archived, i) => {
      const refusal = ProjectAccessPolicy.deployKeyPushRefusal(given(v, ACCESS.none, archived), LINKS[link]);
      const expected = PUSH_BY_KEY[link][i];
      // An archived project refuses a key that could push there; the other refusals come first.
      if (expected === 'ok') expect(refusal).toBe(archived ? 'archived' : undefined);
      else expect(refusal).toBe(expected);
    });

    it('ignores the level a user would have: a key is no member', () => {
      expect(ProjectAccessPolicy.deployKeyMayDownloadCode(given('private', ACCESS.owner), undefined)).toBe(false);
      expect(ProjectAccessPolicy.deployKeyPushRefusal(given('private', ACCESS.owner), { canPush: false })).toBe(
        'read-only',
      );
    });

    it("words the refusals as GitLab's git_access", () => {
      expect(DEPLOY_KEY_REFUSALS['read-only']).toBe('This deploy key does not have write access to this project.');
      expect(DEPLOY_KEY_REFUSALS['not-found']).toBe('The project you were looking for could not be found.');
    });
  });
});
