import { Invalid } from '@app/platform';
import { evolve, initial, type Project, type ProjectEvent, type ProjectSettings } from './project';
import { settingsFrom } from './project-settings';

/* Given-events fixtures for the specs of the project's decisions (projects/, members/, sharing/, forks/, pushes/). */

export const NOW = new Date('2024-05-06T07:08:09.000Z');
export const AT = NOW.toISOString();
export const EARLIER = '2024-01-01T00:00:00.000Z';
export const ID = 42;
export const NS = 7;
export const OWNER = 3;

export const given = (...events: ProjectEvent[]): Project => events.reduce(evolve, initial());

export const settings = (over: Partial<ProjectSettings> = {}): ProjectSettings => ({
  ...settingsFrom({ name: 'Foo Project', path: 'foo-project' }),
  ...over,
});

export const created = (over: Partial<ProjectSettings> = {}): ProjectEvent => ({
  type: 'ProjectCreated',
  data: { projectId: ID, namespaceId: NS, ...settings(over), creatorId: OWNER, runnersToken: 'secret', at: EARLIER },
});
export const archived = (): ProjectEvent => ({ type: 'ProjectArchived', data: { projectId: ID, at: EARLIER } });
export const unarchived = (): ProjectEvent => ({ type: 'ProjectUnarchived', data: { projectId: ID, at: EARLIER } });
export const deleted = (): ProjectEvent => ({
  type: 'ProjectDeleted',
  data: { projectId: ID, namespaceId: NS, at: EARLIER },
});
export const memberAdded = (userId: number, accessLevel: number): ProjectEvent => ({
  type: 'ProjectMemberAdded',
  data: { projectId: ID, userId, accessLevel, expiresAt: null, at: EARLIER },
});
export const memberRemoved = (userId: number): ProjectEvent => ({
  type: 'ProjectMemberRemoved',
  data: { projectId: ID, userId, at: EARLIER },
});
export const shared = (groupId: number, groupAccess = 30): ProjectEvent => ({
  type: 'ProjectSharedWithGroup',
  data: { projectId: ID, linkId: 1, groupId, groupAccess, expiresAt: null, at: EARLIER },
});
export const unshared = (groupId: number): ProjectEvent => ({
  type: 'ProjectUnsharedWithGroup',
  data: { projectId: ID, groupId, at: EARLIER },
});
export const attributeSet = (key: string, value: string): ProjectEvent => ({
  type: 'ProjectCustomAttributeSet',
  data: { projectId: ID, key, value, at: EARLIER },
});
export const transferred = (namespaceId: number): ProjectEvent => ({
  type: 'ProjectTransferred',
  data: { projectId: ID, fromNamespaceId: NS, namespaceId, at: EARLIER },
});

/** Runs a decision and returns what it threw. */
export const thrown = (decide: () => unknown): unknown => {
  try {
    decide();
  } catch (err) {
    return err;
  }
  throw new Error('expected the decision to throw');
};
export const fieldsOf = (decide: () => unknown) => {
  const err = thrown(decide);
  if (!(err instanceof Invalid)) throw new Error(`expected a 400, got ${String(err)}`);
  return err.fields;
};
