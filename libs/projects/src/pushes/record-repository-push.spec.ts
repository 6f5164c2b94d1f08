import { NotFound } from '@app/platform';
import { AT, created, deleted, EARLIER, given, ID, NOW } from '../projects/project-decider.fixtures';
import type { ProjectEvent } from '../projects/project';
import { recordPush } from './record-repository-push.command';

describe('the record of a push', () => {
  describe('pushes', () => {
    const update = {
      ref: 'refs/heads/main',
      before: '0'.repeat(40),
      after: 'a'.repeat(40),
      checkoutSha: 'a'.repeat(40),
      commits: [],
      totalCommitsCount: 3,
      message: null,
    };
    const push = {
      userId: 5,
      updates: [update],
      defaultBranch: 'main',
      statistics: { commitCount: 3, repositorySize: 1000 },
    };

    it('records the push; the first one names the default branch, which later events keep', () => {
      const [e] = recordPush(given(created({ defaultBranch: null })), push, NOW, 0);
      expect(e).toEqual({ type: 'RepositoryPushed', data: { ...push, projectId: ID, at: AT } });
      const s = given(created({ defaultBranch: null }), e);
      expect(s).toMatchObject({ settings: { defaultBranch: 'main' } });
      expect(recordPush(s, { ...push, defaultBranch: 'other' }, NOW, 0)[0].data).toMatchObject({ defaultBranch: null });
    });

    it('does not replace a default branch the project has, records nothing for no ref update, and 404s a deleted project', () => {
      expect(recordPush(given(created({ defaultBranch: 'master' })), push, NOW, 2)[0].data).toMatchObject({
        defaultBranch: null,
      });
      expect(recordPush(given(created()), { ...push, updates: [] }, NOW, 2)).toEqual([]);
      expect(() => recordPush(given(created(), deleted()), push, NOW, 2)).toThrow(NotFound);
    });

    const protectedMain = (pushAccessLevel: number, mergeAccessLevel: number): ProjectEvent => ({
      type: 'ProtectedBranchCreated',
      data: { projectId: ID, name: 'main', pushAccessLevel, mergeAccessLevel, at: AT },
    });

    it.each([
      [1, 30, 40],
      [2, 40, 40],
      [3, 40, 30],
    ] as const)(
      'protects the default branch its first push creates, in the same decision (setting %i: push %i, merge %i)',
      (setting, pushLevel, mergeLevel) => {
        const events = recordPush(given(created({ defaultBranch: null })), push, NOW, setting);
        expect(events.map((e) => e.type)).toEqual(['RepositoryPushed', 'ProtectedBranchCreated']);
        expect(events[1]).toEqual(protectedMain(pushLevel, mergeLevel));
        expect(given(created({ defaultBranch: null }), ...events)).toMatchObject({
          protectedBranches: [{ name: 'main', pushAccessLevel: pushLevel, mergeAccessLevel: mergeLevel }],
        });
      },
    );

    it('protects nothing with setting 0, nor a branch other than the default, nor an update of an existing one', () => {
      expect(recordPush(given(created({ defaultBranch: null })), push, NOW, 0)).toHaveLength(1);
      const first = given(
        created({ defaultBranch: null }),
        ...recordPush(given(created({ defaultBranch: null })), push, NOW, 0),
      );
      const feature = { ...update, ref: 'refs/heads/feature' };
      expect(recordPush(first, { ...push, updates: [feature], defaultBranch: null }, NOW, 2)).toHaveLength(1);
      const fastForward = { ...update, before: 'a'.repeat(40), after: 'b'.repeat(40) };
      expect(recordPush(first, { ...push, updates: [fastForward], defaultBranch: null }, NOW, 2)).toHaveLength(1);
      const tag = { ...update, ref: 'refs/tags/main' };
      expect(recordPush(given(created({ defaultBranch: 'main' })), { ...push, updates: [tag] }, NOW, 2)).toHaveLength(
        1,
      );
    });

    it('protects a default branch set before its first push when a push creates it (GitLab `default_branch?`)', () => {
      const events = recordPush(given(created({ defaultBranch: 'main' })), push, NOW, 2);
      expect(events.map((e) => e.type)).toEqual(['RepositoryPushed', 'ProtectedBranchCreated']);
      expect(events[0].data).toMatchObject({ defaultBranch: null });
    });

    it('cannot protect a default branch whose name is longer than a rule may be (255), and still records the push', () => {
      const long = 'b'.repeat(256);
      const longPush = { ...push, updates: [{ ...update, ref: `refs/heads/${long}` }], defaultBranch: long };
      expect(recordPush(given(created({ defaultBranch: null })), longPush, NOW, 2).map((e) => e.type)).toEqual([
        'RepositoryPushed',
      ]);
    });

    it('leaves a default branch a rule already covers (an exact name or a wildcard) as it is', () => {
      const wildcard: ProjectEvent = {
        type: 'ProtectedBranchCreated',
        data: { projectId: ID, name: 'ma*', pushAccessLevel: 30, mergeAccessLevel: 30, at: EARLIER },
      };
      expect(recordPush(given(created({ defaultBranch: null }), wildcard), push, NOW, 2)).toHaveLength(1);
      expect(recordPush(given(created({ defaultBranch: null }), protectedMain(0, 0)), push, NOW, 2)).toHaveLength(1);
    });
  });
});
