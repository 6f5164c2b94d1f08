import type { ProjectRow, RefUpdate } from '@app/projects';
import {
  groupMemberPayload,
  groupPayload,
  humanAccess,
  keyPayload,
  projectPayload,
  repositoryUpdatePayload,
  systemPushPayload,
  teamMemberPayload,
  userPayload,
  xmlschema,
  type ProjectFacts,
} from './system-hook-payloads';

/* The payloads against GitLab 10.x's doc/system_hooks/system_hooks.md examples, field by field. */

const stamps = { createdAt: '2012-07-21T07:30:54.123Z', updatedAt: new Date('2012-07-21T07:38:22Z') };
const storeCloud: ProjectFacts = {
  ...stamps,
  id: 74,
  name: 'StoreCloud',
  path: 'storecloud',
  pathWithNamespace: 'jsmith/storecloud',
  ownerName: 'John Smith',
  ownerEmail: 'johnsmith@gmail.com',
  visibility: 'private',
};
const john = { id: 41, name: 'John Smith', username: 'johnsmith', email: 'johnsmith@gmail.com' };

describe('system hook payloads (GitLab 10.x)', () => {
  it('writes times as xmlschema: seconds and Z', () => {
    expect(xmlschema('2012-07-21T07:30:54.123Z')).toBe('2012-07-21T07:30:54Z');
    expect(xmlschema(new Date('2012-07-21T07:30:54Z'))).toBe('2012-07-21T07:30:54Z');
  });

  it('names access levels as 10.x did ("Master", not 11.0\'s "Maintainer")', () => {
    expect([10, 20, 30, 40, 50].map(humanAccess)).toEqual(['Guest', 'Reporter', 'Developer', 'Master', 'Owner']);
  });

  it('project_create, project_destroy and project_update carry the project and its owner', () => {
    for (const name of ['project_create', 'project_destroy', 'project_update'] as const)
      expect(projectPayload(name, storeCloud)).toEqual({
        event_name: name,
        created_at: '2012-07-21T07:30:54Z',
        updated_at: '2012-07-21T07:38:22Z',
        name: 'StoreCloud',
        path: 'storecloud',
        path_with_namespace: 'jsmith/storecloud',
        project_id: 74,
        owner_name: 'John Smith',
        owner_email: 'johnsmith@gmail.com',
        project_visibility: 'private',
      });
  });

  it('project_rename and project_transfer add old_path_with_namespace', () => {
    expect(projectPayload('project_rename', storeCloud, 'jsmith/overscore')).toMatchObject({
      event_name: 'project_rename',
      old_path_with_namespace: 'jsmith/overscore',
    });
    expect(projectPayload('project_transfer', storeCloud, 'scores/storecloud')).toMatchObject({
      event_name: 'project_transfer',
      old_path_with_namespace: 'scores/storecloud',
    });
  });

  it('user_add_to_team, user_remove_from_team, user_update_for_team', () => {
    for (const name of ['user_add_to_team', 'user_remove_from_team', 'user_update_for_team'] as const)
      expect(teamMemberPayload(name, { ...stamps, accessLevel: 40, user: john }, storeCloud)).toEqual({
        event_name: name,
        created_at: '2012-07-21T07:30:54Z',
        updated_at: '2012-07-21T07:38:22Z',
        project_name: 'StoreCloud',
        project_path: 'storecloud',
        project_path_with_namespace: 'jsmith/storecloud',
        project_id: 74,
        user_username: 'johnsmith',
        user_name: 'John Smith',
        user_email: 'johnsmith@gmail.com',
        user_id: 41,
        access_level: 'Master',
        project_visibility: 'private',
      });
  });

  it('user_create, user_destroy; user_rename adds old_username', () => {
    const js = { ...stamps, id: 41, name: 'John Smith', username: 'js', email: 'js@gitlabhq.com' };
    expect(userPayload('user_create', js)).toEqual({
      event_name: 'user_create',
      created_at: '2012-07-21T07:30:54Z',
      updated_at: '2012-07-21T07:38:22Z',
      name: 'John Smith',
      email: 'js@gitlabhq.com',
      user_id: 41,
      username: 'js',
    });
    expect(userPayload('user_destroy', js)).not.toHaveProperty('old_username');
    expect(userPayload('user_rename', js, 'old-js')).toMatchObject({
      event_name: 'user_rename',
      old_username: 'old-js',
    });
  });

  it('key_create and key_destroy: the key, its id and its owner', () => {
    expect(
      keyPayload('key_create', { ...stamps, id: 4, key: 'ssh-rsa AAAA john@localhost', username: 'root' }),
    ).toEqual({
      event_name: 'key_create',
      created_at: '2012-07-21T07:30:54Z',
      updated_at: '2012-07-21T07:38:22Z',
      key: 'ssh-rsa AAAA john@localhost',
      id: 4,
      username: 'root',
    });
    expect(keyPayload('key_destroy', { ...stamps, id: 4, key: 'k', username: null })).not.toHaveProperty('username');
  });

  const group = { ...stamps, id: 78, name: 'StoreCloud', path: 'storecloud', fullPath: 'parent/storecloud' };

  it('group_create and group_destroy: owner_name and owner_email are always null (gitlab-ce#39675)', () => {
    expect(groupPayload('group_create', group)).toEqual({
      event_name: 'group_create',
      created_at: '2012-07-21T07:30:54Z',
      updated_at: '2012-07-21T07:38:22Z',
      name: 'StoreCloud',
      path: 'storecloud',
      full_path: 'parent/storecloud',
      group_id: 78,
      owner_name: null,
      owner_email: null,
    });
    expect(groupPayload('group_destroy', group)).not.toHaveProperty('old_path');
  });

  it('group_rename adds old_path and old_full_path', () => {
    expect(groupPayload('group_rename', group, { path: 'old-name', fullPath: 'parent/old-name' })).toMatchObject({
      event_name: 'group_rename',
      old_path: 'old-name',
      old_full_path: 'parent/old-name',
    });
  });

  it('user_add_to_group, user_remove_from_group, user_update_for_group', () => {
    for (const name of ['user_add_to_group', 'user_remove_from_group', 'user_update_for_group'] as const)
      expect(groupMemberPayload(name, { ...stamps, accessLevel: 40, user: john }, group)).toEqual({
        event_name: name,
        created_at: '2012-07-21T07:30:54Z',
        updated_at: '2012-07-21T07:38:22Z',
        group_name: 'StoreCloud',
        group_path: 'storecloud',
        group_id: 78,
        user_username: 'johnsmith',
        user_name: 'John Smith',
        user_email: 'johnsmith@gmail.com',
        user_id: 41,
        group_access: 'Master',
      });
  });

  const row = {
    id: 15,
    name: 'Diaspora',
    path: 'diaspora',
    description: '',
    default_branch: 'master',
    ci_config_path: null,
    visibility: 'private',
    tag_list: [],
    avatar: null,
    ns_kind: 'user',
    ns_name: 'mike',
    ns_full_path: 'mike',
    ns_full_name: 'Mike',
    owner_name: 'Mike',
    created_at: new Date(0),
    last_activity_at: new Date(0),
  } as unknown as ProjectRow;
  const urls = { externalUrl: 'http://example.com', sshCloneBase: 'git@example.com:' };
  const pusher = { id: 4, name: 'John Smith', username: 'jsmith', email: 'john@example.com' };
  const update = (ref: string, before: string, after: string) =>
    ({
      ref,
      before,
      after,
      checkoutSha: after,
      message: null,
      commits: [
        {
          id: after,
          message: 'm',
          timestamp: '2013-05-13T18:18:08+00:00',
          author: { name: 'a', email: 'a@example.com' },
          added: [],
          modified: [],
          removed: [],
        },
      ],
      totalCommitsCount: 1,
    }) as unknown as RefUpdate;

  it('push and tag_push are the project hook payloads without commits ("we never display commits")', () => {
    const push = systemPushPayload(update('refs/heads/master', 'a'.repeat(40), 'b'.repeat(40)), row, pusher, urls);
    expect(push).toMatchObject({
      object_kind: 'push',
      event_name: 'push',
      ref: 'refs/heads/master',
      user_id: 4,
      project_id: 15,
      commits: [],
      total_commits_count: 0,
      project: { name: 'Diaspora', path_with_namespace: 'mike/diaspora', web_url: 'http://example.com/mike/diaspora' },
    });
    expect(systemPushPayload(update('refs/tags/v1', '0'.repeat(40), 'c'.repeat(40)), row, pusher, urls)).toMatchObject({
      event_name: 'tag_push',
      commits: [],
    });
  });

  it('repository_update: one per push, every change and ref', () => {
    const updates = [
      update('refs/heads/master', 'a'.repeat(40), 'b'.repeat(40)),
      update('refs/tags/v1', '0'.repeat(40), 'c'.repeat(40)),
    ];
    const payload = repositoryUpdatePayload(updates, row, pusher, urls);
    expect(payload).toEqual({
      event_name: 'repository_update',
      user_id: 4,
      user_name: 'John Smith',
      user_email: 'john@example.com',
      user_avatar: null,
      project_id: 15,
      project: systemPushPayload(updates[0], row, pusher, urls).project,
      changes: [
        { before: 'a'.repeat(40), after: 'b'.repeat(40), ref: 'refs/heads/master' },
        { before: '0'.repeat(40), after: 'c'.repeat(40), ref: 'refs/tags/v1' },
      ],
      refs: ['refs/heads/master', 'refs/tags/v1'],
    });
  });
});
