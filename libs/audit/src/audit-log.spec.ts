import type { Recorded } from '@app/platform';
import { audited, describe as describeEvent, entityOf, type Recall, type Remembered } from './audit-log';

const event = (type: string, data: object, metadata: Recorded['metadata'] = { actorId: 1 }, streamId = 's-1') =>
  ({ type, data, metadata, streamId, streamVersion: 1, globalPosition: '1', recordedAt: new Date() }) as Recorded;

const memory: Record<string, Remembered> = {
  'User:1': { path: 'root', name: 'Administrator', state: {} },
  'User:2': { path: 'alice', name: 'Alice', state: {} },
  'Project:5': { path: 'alice/p', name: 'P', state: { visibility: 'private', members: { 2: 50, 3: 30 } } },
  'Token:9': { path: null, name: 'ci', state: {} },
  'Namespace:102': { path: 'alice', name: null, state: {} },
  'Group:10': { path: 'top/sub', name: 'Sub', state: {} },
};
const recall: Recall = async (type, id) => memory[`${type}:${id}`];

describe('the audit log', () => {
  it('audits writes with an actor, not jobs, activity or deliveries', () => {
    expect(audited(event('ProjectUpdated', {}))).toBe(true);
    expect(audited(event('ProjectUpdated', {}, {}))).toBe(false);
    expect(audited(event('ProjectUpdated', {}, { actorId: 1, origin: 'worker' }))).toBe(false);
    expect(audited(event('UserActivityRecorded', {}))).toBe(false);
    expect(audited(event('ProjectHookDelivered', {}))).toBe(false);
  });

  it('files an event under its project, group, user or stream', () => {
    expect(entityOf(event('ProjectMemberAdded', { projectId: 5, userId: 2 }))).toEqual({ type: 'Project', id: 5 });
    expect(entityOf(event('GroupMemberAdded', { groupId: 7, userId: 2 }))).toEqual({ type: 'Group', id: 7 });
    expect(entityOf(event('SshKeyAdded', { userId: 2 }))).toEqual({ type: 'User', id: 2 });
    expect(entityOf(event('Something', {}, {}, 'group-8'))).toEqual({ type: 'Group', id: 8 });
    expect(entityOf(event('SystemHookAdded', { hookId: 3 }, {}, 'system-hook-3'))).toBeUndefined();
  });

  it("names what a creation made by its parent's path and its own, asked with the author in one read", async () => {
    const asked: string[][] = [];
    const recallMany = async (keys: readonly (readonly [string, number])[]) => {
      asked.push(keys.map(([type, id]) => `${type}:${id}`));
      return keys.map(([type, id]) => memory[`${type}:${id}`]);
    };
    const pathOf = async (type: string, data: object) =>
      (await describeEvent(event(type, data), recall, recallMany))[0].details;
    expect(await pathOf('ProjectCreated', { projectId: 30, namespaceId: 102, path: 'new' })).toMatchObject({
      target_details: 'alice/new',
      entity_path: 'alice/new',
    });
    expect(asked.pop()).toEqual(['Project:30', 'User:1', 'Group:102', 'Namespace:102']);
    expect(await pathOf('ProjectForked', { projectId: 31, namespaceId: 10, path: 'fork' })).toMatchObject({
      entity_path: 'top/sub/fork',
    });
    expect(await pathOf('GroupCreated', { groupId: 11, parentId: 10, path: 'leaf' })).toMatchObject({
      entity_path: 'top/sub/leaf',
    });
    expect(await pathOf('GroupCreated', { groupId: 12, parentId: null, path: 'root-group' })).toMatchObject({
      entity_path: 'root-group',
    });
    // A namespace the log never heard of: the path it has.
    expect(await pathOf('ProjectCreated', { projectId: 32, namespaceId: 999, path: 'lost' })).toMatchObject({
      entity_path: 'lost',
    });
  });

  it('names the author, the token and the administrator behind a sudo', async () => {
    const [entry] = await describeEvent(
      event(
        'ProjectUpdated',
        { projectId: 5, changes: { visibility: 'public' } },
        { actorId: 2, tokenId: 9, sudoBy: 1, ipAddress: '192.0.2.1' },
      ),
      recall,
    );
    expect(entry).toEqual({
      authorId: 2,
      entityType: 'Project',
      entityId: 5,
      details: {
        change: 'visibility',
        from: 'Private',
        to: 'Public',
        author_name: 'Alice',
        target_id: 5,
        target_type: 'Project',
        target_details: 'alice/p',
        entity_path: 'alice/p',
        ip_address: '192.0.2.1',
        token_id: 9,
        token_name: 'ci',
        sudo_by_id: 1,
        sudo_by_username: 'root',
        sudo_by_name: 'Administrator',
      },
    });
  });

  it('shows members as GitLab names their levels, and a password change without a value', async () => {
    const [updated] = await describeEvent(
      event('ProjectMemberUpdated', { projectId: 5, userId: 3, accessLevel: 40 }, { actorId: 2 }),
      recall,
    );
    expect(updated.details).toMatchObject({
      change: 'access level',
      from: 'Developer',
      to: 'Maintainer',
      target_id: 3,
    });
    const entries = await describeEvent(
      event('UserUpdated', { userId: 2, changes: {}, passwordDigest: 'SECRET' }, { actorId: 2 }),
      recall,
    );
    expect(entries.map((e) => e.details.change)).toEqual(['password']);
    expect(JSON.stringify(entries)).not.toContain('SECRET');
  });

  it('gives a push its refs and, for one ref, the old and new commit', async () => {
    const [push] = await describeEvent(
      event('RepositoryPushed', {
        projectId: 5,
        userId: 2,
        updates: [{ ref: 'refs/heads/main', before: 'a', after: 'b' }],
      }),
      recall,
    );
    expect(push.details).toMatchObject({ change: 'push', from: 'a', to: 'b', target_details: 'refs/heads/main' });
  });
});
