import { ACCESS, type Visibility } from '@app/groups';
import { Forbidden } from '@app/platform';
import { ProjectAccessPolicy, type ProjectAccessFacts, type ProjectCaller } from './project-access-policy';

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
});
