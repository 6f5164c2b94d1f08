import { Conflict, NotFound, RecordInvalid } from '@app/platform';
import { settingsFrom } from '../projects/project-settings';
import { evolve, initial, type Project, type ProjectEvent } from '../projects/project';
import {
  defaultBranchLevels,
  PROTECTED_BRANCH_REFUSALS as REFUSED,
  protectBranch,
  protectBranchLegacy,
  ProtectedBranchPolicy,
  ruleMatches,
  unprotectBranch,
  unprotectBranchLegacy,
  updateProtectedBranch,
  type BranchCaller,
  type BranchChange,
  type ProtectedBranchRule,
} from './protected-branch';

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
const ruleCreated = (name: string, pushAccessLevel = 40, mergeAccessLevel = 40): ProjectEvent => ({
  type: 'ProtectedBranchCreated',
  data: { projectId: ID, name, pushAccessLevel, mergeAccessLevel, at: EARLIER },
});
const rulesOf = (s: Project) => (s.exists ? s.protectedBranches : undefined);

describe('protected branches on the project stream', () => {
  describe('evolve', () => {
    it('keeps rules in creation order, updates levels given and removes by exact name', () => {
      const s = given(
        created,
        ruleCreated('master'),
        ruleCreated('release-*', 30, 40),
        ruleCreated('x', 0, 0),
        {
          type: 'ProtectedBranchUpdated',
          data: { projectId: ID, name: 'release-*', mergeAccessLevel: 30, at: EARLIER },
        },
        { type: 'ProtectedBranchRemoved', data: { projectId: ID, name: 'x', at: EARLIER } },
      );
      expect(rulesOf(s)).toEqual([
        { name: 'master', pushAccessLevel: 40, mergeAccessLevel: 40 },
        { name: 'release-*', pushAccessLevel: 30, mergeAccessLevel: 30 },
      ]);
    });

    it('starts a project with no rules, and a deleted project keeps none', () => {
      expect(rulesOf(given(created))).toEqual([]);
      expect(
        given(created, ruleCreated('master'), {
          type: 'ProjectDeleted',
          data: { projectId: ID, namespaceId: 7, at: AT },
        }),
      ).toEqual({
        exists: false,
      });
    });
  });

  describe('protectBranch (POST /protected_branches)', () => {
    it('creates the rule with the given levels', () => {
      expect(
        protectBranch(given(created), { name: '*-stable', pushAccessLevel: 30, mergeAccessLevel: 0 }, NOW),
      ).toEqual([
        {
          type: 'ProtectedBranchCreated',
          data: { projectId: ID, name: '*-stable', pushAccessLevel: 30, mergeAccessLevel: 0, at: AT },
        },
      ]);
    });

    it("409s GitLab's message for a name that has a rule (a wildcard matching it is no clash)", () => {
      const s = given(created, ruleCreated('master'), ruleCreated('feat*'));
      const clash = () => protectBranch(s, { name: 'master', pushAccessLevel: 40, mergeAccessLevel: 40 }, NOW);
      expect(clash).toThrow(Conflict);
      expect(clash).toThrow("Protected branch 'master' already exists");
      expect(protectBranch(s, { name: 'feature', pushAccessLevel: 40, mergeAccessLevel: 40 }, NOW)).toHaveLength(1);
    });

    it("refuses a blank name as GitLab's model does (422), and a missing project", () => {
      const blank = () => protectBranch(given(created), { name: '  ', pushAccessLevel: 40, mergeAccessLevel: 40 }, NOW);
      expect(blank).toThrow(RecordInvalid);
      expect(blank).toThrow("Name can't be blank");
      const long = () =>
        protectBranch(given(created), { name: 'x'.repeat(256), pushAccessLevel: 40, mergeAccessLevel: 40 }, NOW);
      expect(long).toThrow('Name is too long (maximum is 255 characters)');
      expect(
        protectBranch(given(created), { name: 'x'.repeat(255), pushAccessLevel: 40, mergeAccessLevel: 40 }, NOW),
      ).toHaveLength(1);
      expect(() => protectBranch(initial(), { name: 'm', pushAccessLevel: 40, mergeAccessLevel: 40 }, NOW)).toThrow(
        NotFound,
      );
    });
  });

  describe('unprotectBranch (DELETE /protected_branches/:name)', () => {
    it('removes the rule of that exact name; another name is 404 Not found', () => {
      const s = given(created, ruleCreated('rel-*'));
      expect(unprotectBranch(s, 'rel-*', NOW)).toEqual([
        { type: 'ProtectedBranchRemoved', data: { projectId: ID, name: 'rel-*', at: AT } },
      ]);
      expect(() => unprotectBranch(s, 'rel-1', NOW)).toThrow(new NotFound());
    });
  });

  describe('protectBranchLegacy (PUT .../branches/:branch/protect)', () => {
    it('creates a rule: a flag true means developers, false or absent masters', () => {
      expect(protectBranchLegacy(given(created), 'dev', { developersCanPush: true }, NOW)).toEqual([
        {
          type: 'ProtectedBranchCreated',
          data: { projectId: ID, name: 'dev', pushAccessLevel: 30, mergeAccessLevel: 40, at: AT },
        },
      ]);
      expect(
        protectBranchLegacy(given(created), 'dev', { developersCanPush: false, developersCanMerge: true }, NOW),
      ).toEqual([
        {
          type: 'ProtectedBranchCreated',
          data: { projectId: ID, name: 'dev', pushAccessLevel: 40, mergeAccessLevel: 30, at: AT },
        },
      ]);
    });

    it('changes only the flags given on an existing rule, and records nothing when nothing changes', () => {
      const s = given(created, ruleCreated('dev', 0, 30));
      expect(protectBranchLegacy(s, 'dev', { developersCanPush: true }, NOW)).toEqual([
        { type: 'ProtectedBranchUpdated', data: { projectId: ID, name: 'dev', pushAccessLevel: 30, at: AT } },
      ]);
      expect(protectBranchLegacy(s, 'dev', {}, NOW)).toEqual([]);
      expect(protectBranchLegacy(s, 'dev', { developersCanMerge: true }, NOW)).toEqual([]);
      expect(protectBranchLegacy(s, 'dev', { developersCanMerge: false }, NOW)).toEqual([
        { type: 'ProtectedBranchUpdated', data: { projectId: ID, name: 'dev', mergeAccessLevel: 40, at: AT } },
      ]);
    });
  });

  describe('unprotectBranchLegacy (PUT .../branches/:branch/unprotect)', () => {
    it('removes the exact rule if any, and is no error without one (a wildcard stays)', () => {
      const s = given(created, ruleCreated('dev'), ruleCreated('d*'));
      expect(unprotectBranchLegacy(s, 'dev', NOW)).toEqual([
        { type: 'ProtectedBranchRemoved', data: { projectId: ID, name: 'dev', at: AT } },
      ]);
      expect(unprotectBranchLegacy(s, 'do', NOW)).toEqual([]);
    });
  });
});

describe('default branch protection levels (GitLab PROTECTION_*)', () => {
  it.each([
    [0, undefined],
    [1, { pushAccessLevel: 30, mergeAccessLevel: 40 }],
    [2, { pushAccessLevel: 40, mergeAccessLevel: 40 }],
    [3, { pushAccessLevel: 40, mergeAccessLevel: 30 }],
  ] as const)('%i → %j', (setting, levels) => {
    expect(defaultBranchLevels(setting)).toEqual(levels);
  });
});

describe('ruleMatches (ProtectedRefMatcher)', () => {
  it.each([
    ['master', 'master', true],
    ['master', 'master2', false],
    ['master', 'Master', false],
    ['release-*', 'release-1.0', true],
    ['release-*', 'release-', true],
    ['release-*', 'release', false],
    ['release-*', 'xrelease-1', false],
    ['*-stable', '10-0-stable', true],
    ['*-stable', '10-0-stable-x', false],
    ['feature/*', 'feature/a/b', true],
    ['*', 'anything/at/all', true],
    ['v*.*', 'v1.2', true],
    ['v*.*', 'v12', false],
    ['a.c', 'abc', false],
    ['(x)+', '(x)+', true],
    ['(x)+*', 'xx', false],
    ['', '', false],
  ])('%j covers %j: %s', (rule, branch, expected) => {
    expect(ruleMatches(rule, branch)).toBe(expected);
  });
});

describe('ProtectedBranchPolicy.branchFlags (the Branch entity)', () => {
  const rules: ProtectedBranchRule[] = [
    { name: 'master', pushAccessLevel: 40, mergeAccessLevel: 40 },
    { name: 'dev*', pushAccessLevel: 30, mergeAccessLevel: 40 },
    { name: 'develop', pushAccessLevel: 0, mergeAccessLevel: 30 },
  ];
  it('protected when a rule matches; developers_can_* when a matching rule says developers', () => {
    expect(ProtectedBranchPolicy.branchFlags(rules, 'master')).toEqual({
      protected: true,
      developers_can_push: false,
      developers_can_merge: false,
    });
    expect(ProtectedBranchPolicy.branchFlags(rules, 'develop')).toEqual({
      protected: true,
      developers_can_push: true,
      developers_can_merge: true,
    });
    expect(ProtectedBranchPolicy.branchFlags(rules, 'devx')).toEqual({
      protected: true,
      developers_can_push: true,
      developers_can_merge: false,
    });
    expect(ProtectedBranchPolicy.branchFlags(rules, 'feature')).toEqual({
      protected: false,
      developers_can_push: false,
      developers_can_merge: false,
    });
  });
});

describe('updateProtectedBranch (PATCH)', () => {
  it('sets allow_force_push on the rule of that exact name, nothing when unchanged, 404 without one', () => {
    const s = given(created, ruleCreated('master'));
    const allowed: ProjectEvent = {
      type: 'ProtectedBranchUpdated',
      data: { projectId: ID, name: 'master', allowForcePush: true, at: AT },
    };
    expect(updateProtectedBranch(s, 'master', { allowForcePush: true }, NOW)).toEqual([allowed]);
    expect(updateProtectedBranch(s, 'master', { allowForcePush: false }, NOW)).toEqual([]);
    expect(updateProtectedBranch(s, 'master', {}, NOW)).toEqual([]);
    expect(rulesOf(given(created, ruleCreated('master'), allowed))).toEqual([
      { name: 'master', pushAccessLevel: 40, mergeAccessLevel: 40, allowForcePush: true },
    ]);
    expect(
      updateProtectedBranch(given(created, ruleCreated('master'), allowed), 'master', { allowForcePush: true }, NOW),
    ).toEqual([]);
    expect(() => updateProtectedBranch(s, 'mas*', { allowForcePush: true }, NOW)).toThrow(new NotFound());
  });
});

describe('ProtectedBranchPolicy.refusal (the pre-receive gate)', () => {
  const rules: ProtectedBranchRule[] = [
    { name: 'master', pushAccessLevel: 40, mergeAccessLevel: 40 },
    { name: 'release-*', pushAccessLevel: 30, mergeAccessLevel: 40 },
    { name: 'frozen', pushAccessLevel: 0, mergeAccessLevel: 0 },
  ];
  const push = (branch: string, over: Partial<BranchChange> = {}): BranchChange => ({
    branch,
    creation: false,
    deletion: false,
    forced: false,
    ...over,
  });
  const developer: BranchCaller = { accessLevel: 30, isAdmin: false };
  const maintainer: BranchCaller = { accessLevel: 40, isAdmin: false };
  const owner: BranchCaller = { accessLevel: 50, isAdmin: false };
  const admin: BranchCaller = { accessLevel: 0, isAdmin: true };
  const refusal = ProtectedBranchPolicy.refusal;

  it('lets everyone through on a branch no rule covers: force pushes and deletions too', () => {
    for (const caller of [developer, maintainer, admin])
      for (const change of [push('feature'), push('feature', { forced: true }), push('feature', { deletion: true })])
        expect(refusal(rules, change, caller)).toBeUndefined();
    expect(refusal([], push('master', { forced: true }), developer)).toBeUndefined();
  });

  it('pushes to a protected branch need its push level: masters and owners on 40, developers on 30', () => {
    expect(refusal(rules, push('master'), developer)).toBe(REFUSED.push);
    expect(refusal(rules, push('master'), { accessLevel: 20, isAdmin: false })).toBe(REFUSED.push);
    expect(refusal(rules, push('master'), maintainer)).toBeUndefined();
    expect(refusal(rules, push('master'), owner)).toBeUndefined();
    expect(refusal(rules, push('release-1.0'), developer)).toBeUndefined();
    expect(refusal(rules, push('release-1.0'), { accessLevel: 20, isAdmin: false })).toBe(REFUSED.push);
  });

  it('creating a protected branch is a push to it (10.x has no rule of its own)', () => {
    expect(refusal(rules, push('release-2', { creation: true }), developer)).toBeUndefined();
    expect(refusal(rules, push('master', { creation: true }), developer)).toBe(REFUSED.push);
    expect(refusal(rules, push('master', { creation: true }), maintainer)).toBeUndefined();
  });

  it('"No one" (0) lets nobody push, administrators included', () => {
    for (const caller of [developer, maintainer, owner, admin])
      expect(refusal(rules, push('frozen'), caller)).toBe(REFUSED.push);
  });

  it('administrators push wherever a rule lets anyone push', () => {
    expect(refusal(rules, push('master'), admin)).toBeUndefined();
    expect(refusal(rules, push('release-9'), admin)).toBeUndefined();
  });

  it('any matching rule that lets the caller push is enough', () => {
    const overlapping = [...rules, { name: 'mas*', pushAccessLevel: 30, mergeAccessLevel: 40 }];
    expect(refusal(overlapping, push('master'), developer)).toBeUndefined();
    expect(
      refusal([...rules, { name: 'fro*', pushAccessLevel: 40, mergeAccessLevel: 40 }], push('frozen'), maintainer),
    ).toBeUndefined();
  });

  it('refuses a force push of a protected branch to everyone, administrators and owners included', () => {
    for (const caller of [developer, maintainer, owner, admin]) {
      expect(refusal(rules, push('master', { forced: true }), caller)).toBe(REFUSED.forcePush);
      expect(refusal(rules, push('release-3', { forced: true }), caller)).toBe(REFUSED.forcePush);
    }
  });

  it('lets a force push through where a matching rule allows force pushes, still held to the push level', () => {
    const forcing = [{ name: 'master', pushAccessLevel: 40, mergeAccessLevel: 40, allowForcePush: true }];
    expect(refusal(forcing, push('master', { forced: true }), maintainer)).toBeUndefined();
    expect(refusal(forcing, push('master', { forced: true }), developer)).toBe(REFUSED.push);
    // Another matching rule that allows it is enough (`ProtectedBranch.allow_force_push?` asks any).
    const either = [...rules, { name: 'release-*', pushAccessLevel: 30, mergeAccessLevel: 40, allowForcePush: true }];
    expect(refusal(either.slice(1), push('release-3', { forced: true }), developer)).toBeUndefined();
  });

  it('refuses deleting a protected branch over git: below master with the master wording, masters and admins as web-only', () => {
    expect(refusal(rules, push('release-1', { deletion: true }), developer)).toBe(REFUSED.delete);
    expect(REFUSED.delete).toMatch(/^You are not allowed to delete protected branches from this project\./);
    for (const caller of [maintainer, owner, admin])
      expect(refusal(rules, push('release-1', { deletion: true }), caller)).toBe(REFUSED.deleteOutsideApi);
  });

  it('lets masters, owners and administrators delete a protected branch through the API, not developers', () => {
    const viaApi = push('release-1', { deletion: true, viaApi: true });
    expect(refusal(rules, viaApi, developer)).toBe(REFUSED.delete);
    for (const caller of [maintainer, owner, admin]) expect(refusal(rules, viaApi, caller)).toBeUndefined();
  });

  it('refuses deleting the default branch to everyone when the repository facts are given, protected or not', () => {
    const facts = { defaultBranch: 'main', empty: false, defaultBranchProtection: 2 as const };
    for (const caller of [developer, owner, admin])
      expect(refusal([], push('main', { deletion: true }), caller, facts)).toBe(REFUSED.deleteDefaultBranch);
    expect(refusal([], push('main', { deletion: true }), owner)).toBeUndefined();
    expect(refusal([], push('other', { deletion: true }), developer, facts)).toBeUndefined();
  });

  describe('an empty repository (GitLab protected? and user_can_push_to_empty_repo?)', () => {
    const empty = (defaultBranchProtection: 0 | 1 | 2 | 3) => ({
      defaultBranch: null,
      empty: true,
      defaultBranchProtection,
    });

    it('settings 2 and 3 protect every branch: only members above developer make the first push', () => {
      for (const setting of [2, 3] as const) {
        expect(refusal([], push('main', { creation: true }), developer, empty(setting))).toBe(REFUSED.push);
        expect(refusal([], push('main', { creation: true }), maintainer, empty(setting))).toBeUndefined();
        expect(refusal([], push('main', { creation: true }), owner, empty(setting))).toBeUndefined();
        // An administrator who is no member is refused too: there is no rule for their exemption to apply to.
        expect(refusal([], push('main', { creation: true }), admin, empty(setting))).toBe(REFUSED.push);
      }
    });

    it('settings 0 and 1 let whoever may push code make the first push, a rule for that name notwithstanding', () => {
      for (const setting of [0, 1] as const) {
        expect(refusal([], push('main', { creation: true }), developer, empty(setting))).toBeUndefined();
        expect(refusal(rules, push('master', { creation: true }), developer, empty(setting))).toBeUndefined();
      }
    });

    it('a repository that is not empty is judged by its rules alone', () => {
      const facts = { defaultBranch: 'main', empty: false, defaultBranchProtection: 2 as const };
      expect(refusal([], push('feature', { creation: true }), developer, facts)).toBeUndefined();
      expect(refusal(rules, push('master'), developer, facts)).toBe(REFUSED.push);
    });
  });

  it('never refuses a deploy key that may push (10.x skips every change check for one)', () => {
    const facts = { defaultBranch: 'master', empty: false, defaultBranchProtection: 2 as const };
    for (const change of [
      push('master'),
      push('frozen'),
      push('master', { forced: true }),
      push('release-1', { deletion: true }),
      push('master', { deletion: true }),
    ])
      expect(refusal(rules, change, { deployKey: true }, facts)).toBeUndefined();
  });

  it("words every refusal as GitLab 10.x's change_access.rb", () => {
    expect(REFUSED).toEqual({
      deleteDefaultBranch: 'The default branch of a project cannot be deleted.',
      forcePush: 'You are not allowed to force push code to a protected branch on this project.',
      delete:
        'You are not allowed to delete protected branches from this project. Only a project master or owner can delete a protected branch.',
      deleteOutsideApi: 'You can only delete protected branches using the web interface.',
      push: 'You are not allowed to push code to protected branches on this project.',
    });
  });
});
