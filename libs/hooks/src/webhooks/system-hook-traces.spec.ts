import type { Decider, DomainEvent } from '@app/platform';
import { groupTraceDecider, projectTraceDecider, userTraceDecider, valueBefore } from './system-hook-traces';

/* Given a stream's events, the trace keeps what a system hook payload needs after the row is gone. */

const fold = <S>(d: Decider<S, DomainEvent>, events: { type: string; data: unknown }[]) =>
  events.reduce((s, e) => d.evolve(s, e as DomainEvent), d.initial());

describe('system hook traces', () => {
  it('a project: its name, path history, namespace and members (removed ones kept)', () => {
    const t = fold(projectTraceDecider, [
      {
        type: 'ProjectCreated',
        data: { projectId: 1, namespaceId: 2, name: 'A', path: 'a', visibility: 'private', at: 't1' },
      },
      { type: 'ProjectMemberAdded', data: { projectId: 1, userId: 7, accessLevel: 20, expiresAt: null, at: 't2' } },
      { type: 'ProjectUpdated', data: { projectId: 1, changes: { path: 'b', name: 'B' }, at: 't3' } },
      { type: 'ProjectMemberUpdated', data: { projectId: 1, userId: 7, accessLevel: 30, expiresAt: null, at: 't4' } },
      { type: 'ProjectMemberRemoved', data: { projectId: 1, userId: 7, at: 't5' } },
      { type: 'ProjectTransferred', data: { projectId: 1, fromNamespaceId: 2, namespaceId: 3, at: 't6' } },
      { type: 'ProjectDeleted', data: { projectId: 1, namespaceId: 3, at: 't7' } },
    ])!;
    expect(t).toMatchObject({
      name: 'B',
      path: 'b',
      namespaceId: 3,
      visibility: 'private',
      createdAt: 't1',
      transferredAt: 't6',
      deleted: true,
    });
    expect(t.members[7]).toEqual({ level: 30, since: 't2', changedAt: 't4', gone: true });
    expect(valueBefore(t.paths, 't3', 'b')).toBe('a');
    expect(valueBefore(t.paths, 't1', 'a')).toBeUndefined();
  });

  it('a group: name, path history, parent and members', () => {
    const t = fold(groupTraceDecider, [
      { type: 'GroupCreated', data: { groupId: 5, parentId: null, name: 'G', path: 'g', creatorId: 1, at: 't1' } },
      { type: 'GroupMemberAdded', data: { groupId: 5, userId: 1, accessLevel: 50, expiresAt: null, at: 't1' } },
      { type: 'GroupUpdated', data: { groupId: 5, changes: { path: 'h' }, at: 't2' } },
      { type: 'GroupTransferred', data: { groupId: 5, parentId: 9, at: 't3' } },
    ])!;
    expect(t).toMatchObject({ name: 'G', path: 'h', parentId: 9, updatedAt: 't3' });
    expect(t.deleted).toBeUndefined();
    expect(t.members[1].level).toBe(50);
    expect(valueBefore(t.paths, 't2', 'h')).toBe('g');
  });

  it("a user: name, e-mail, username history and SSH keys' text", () => {
    const t = fold(userTraceDecider, [
      { type: 'UserCreated', data: { userId: 3, namespaceId: 4, name: 'U', username: 'u', email: 'u@x', at: 't1' } },
      { type: 'SshKeyAdded', data: { userId: 3, keyId: 8, key: 'ssh-ed25519 AAAA', title: 'k', at: 't2' } },
      { type: 'UserUpdated', data: { userId: 3, changes: { username: 'v', email: 'v@x' }, at: 't3' } },
      { type: 'SshKeyRemoved', data: { userId: 3, keyId: 8, at: 't4' } },
    ])!;
    expect(t).toMatchObject({
      namespaceId: 4,
      name: 'U',
      username: 'v',
      email: 'v@x',
      createdAt: 't1',
      updatedAt: 't3',
    });
    expect(t.keys[8]).toEqual({ key: 'ssh-ed25519 AAAA', createdAt: 't2' });
    expect(valueBefore(t.usernames, 't3', 'v')).toBe('u');
  });

  it('a stream without its creation yields nothing', () => {
    expect(fold(userTraceDecider, [{ type: 'UserUpdated', data: { userId: 3, changes: {}, at: 't' } }])).toBeNull();
  });
});
