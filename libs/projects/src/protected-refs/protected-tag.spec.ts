import { Conflict, NotFound, RecordInvalid } from '@app/platform';
import { settingsFrom } from '../projects/project-settings';
import { evolve, initial, type Project, type ProjectEvent } from '../projects/project';
import type { BranchCaller } from './protected-branch';
import {
  PROTECTED_TAG_REFUSALS as REFUSED,
  protectTag,
  ProtectedTagPolicy,
  unprotectTag,
  type ProtectedTagRule,
  type TagChange,
} from './protected-tag';

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
const ruleCreated = (name: string, createAccessLevel = 40): ProjectEvent => ({
  type: 'ProtectedTagCreated',
  data: { projectId: ID, name, createAccessLevel, at: EARLIER },
});
const rulesOf = (s: Project) => (s.exists ? s.protectedTags : undefined);

describe('protected tags on the project stream', () => {
  it('keeps rules in creation order and removes by exact name', () => {
    const s = given(created, ruleCreated('v*'), ruleCreated('release', 30), ruleCreated('x', 0), {
      type: 'ProtectedTagRemoved',
      data: { projectId: ID, name: 'x', at: EARLIER },
    });
    expect(rulesOf(s)).toEqual([
      { name: 'v*', createAccessLevel: 40 },
      { name: 'release', createAccessLevel: 30 },
    ]);
  });

  it('protects a tag name or wildcard once (409 for the same exact name), and refuses a blank or long name', () => {
    const s = given(created, ruleCreated('v*'));
    expect(protectTag(s, { name: 'v1.*', createAccessLevel: 30 }, NOW)).toEqual([
      { type: 'ProtectedTagCreated', data: { projectId: ID, name: 'v1.*', createAccessLevel: 30, at: AT } },
    ]);
    expect(() => protectTag(s, { name: 'v*', createAccessLevel: 30 }, NOW)).toThrow(
      new Conflict("Protected tag 'v*' already exists"),
    );
    expect(() => protectTag(s, { name: ' ', createAccessLevel: 40 }, NOW)).toThrow(RecordInvalid);
    expect(() => protectTag(s, { name: 'x'.repeat(256), createAccessLevel: 40 }, NOW)).toThrow(RecordInvalid);
    expect(() => protectTag(given(), { name: 'v*', createAccessLevel: 40 }, NOW)).toThrow(NotFound);
  });

  it('unprotects only a rule of that exact name', () => {
    const s = given(created, ruleCreated('v*'));
    expect(unprotectTag(s, 'v*', NOW)).toEqual([
      { type: 'ProtectedTagRemoved', data: { projectId: ID, name: 'v*', at: AT } },
    ]);
    expect(() => unprotectTag(s, 'v1', NOW)).toThrow(new NotFound());
  });
});

describe('ProtectedTagPolicy.refusal', () => {
  const rules: ProtectedTagRule[] = [
    { name: 'v*', createAccessLevel: 40 },
    { name: 'dev-*', createAccessLevel: 30 },
    { name: 'frozen', createAccessLevel: 0 },
  ];
  const creating = (tag: string): TagChange => ({ tag, creation: true, deletion: false });
  const developer: BranchCaller = { accessLevel: 30, isAdmin: false };
  const maintainer: BranchCaller = { accessLevel: 40, isAdmin: false };
  const admin: BranchCaller = { accessLevel: 0, isAdmin: true };
  const refusal = (change: TagChange, caller: BranchCaller) => ProtectedTagPolicy.refusal(rules, change, caller);

  it('lets anything through on a tag no rule matches', () => {
    expect(refusal(creating('other'), developer)).toBeUndefined();
    expect(refusal({ tag: 'other', creation: false, deletion: true }, developer)).toBeUndefined();
    expect(refusal({ tag: 'other', creation: false, deletion: false }, developer)).toBeUndefined();
  });

  it('creates a protected tag for whoever the level admits, administrators unless it is "No one"', () => {
    expect(refusal(creating('v1.0'), developer)).toBe(REFUSED.create);
    expect(refusal(creating('v1.0'), maintainer)).toBeUndefined();
    expect(refusal(creating('v1.0'), admin)).toBeUndefined();
    expect(refusal(creating('dev-1'), developer)).toBeUndefined();
    expect(refusal(creating('frozen'), maintainer)).toBe(REFUSED.create);
    expect(refusal(creating('frozen'), admin)).toBe(REFUSED.create);
  });

  it('never moves or deletes a protected tag, not even for administrators', () => {
    expect(refusal({ tag: 'v1.0', creation: false, deletion: false }, admin)).toBe(REFUSED.update);
    expect(refusal({ tag: 'v1.0', creation: false, deletion: true }, admin)).toBe(REFUSED.delete);
    expect(refusal({ tag: 'dev-1', creation: false, deletion: true }, maintainer)).toBe(REFUSED.delete);
  });

  it('skips every tag rule for a deploy key, as GitLab skips its change checks', () => {
    expect(refusal(creating('frozen'), { deployKey: true })).toBeUndefined();
    expect(refusal({ tag: 'v1.0', creation: false, deletion: true }, { deployKey: true })).toBeUndefined();
  });
});
