import type { Recorded } from '@app/platform';
import { ALL_PUBLIC_PROJECTS, publicProjectInvalidationRoute, publicProjectKey } from './public-project-answers';

const event = (type: string, data: Record<string, unknown>): Recorded =>
  ({
    type,
    data,
    streamId: 'x-1',
    streamVersion: 1,
    globalPosition: '1',
    metadata: {},
    recordedAt: new Date(),
  }) as Recorded;
const keys = (type: string, data: Record<string, unknown>) => {
  const out = publicProjectInvalidationRoute(event(type, data));
  return out === undefined ? [] : Array.isArray(out) ? out : [out];
};

describe('publicProjectInvalidationRoute', () => {
  it.each([
    'ProjectUpdated',
    'ProjectAvatarChanged',
    'ProjectArchived',
    'ProjectUnarchived',
    'ProjectTransferred',
    'ProjectStarred',
    'ProjectUnstarred',
    'RepositoryPushed',
    'ProjectImportStatusChanged',
    'ProjectMemberAdded',
    // An event no one has written yet that names a project: stale all the same.
    'ProjectSomethingNew',
  ])('stales the project a %s names', (type) => {
    expect(keys(type, { projectId: 7, at: 'now' })).toEqual([publicProjectKey(7)]);
  });

  it.each(['ProjectForked', 'ProjectForkRelationCreated', 'ProjectForkRelationRemoved'])(
    "stales the fork and its source's count on %s",
    (type) => {
      expect(keys(type, { projectId: 7, forkedFromId: 3 })).toEqual([publicProjectKey(7), publicProjectKey(3)]);
    },
  );

  it.each(['ProjectDeleted', 'GroupUpdated', 'GroupTransferred', 'GroupDeleted', 'UserUpdated', 'UserDeleted'])(
    'stales every answer on %s (a fork source, or a namespace shown in many answers)',
    (type) => {
      expect(keys(type, { projectId: 7, groupId: 2, userId: 4 })).toEqual([ALL_PUBLIC_PROJECTS]);
    },
  );

  it('leaves answers alone for events that name no project and change no namespace', () => {
    for (const type of ['UserActivityRecorded', 'AccessTokenCreated', 'GroupMemberAdded', 'SshKeyAdded', 'UserCreated'])
      expect(keys(type, { userId: 4, groupId: 2 })).toEqual([]);
  });
});
