import { Conflict, NotFound } from '@app/platform';
import { AT, created, given, ID, NOW, NS, shared, thrown, unshared } from '../projects/project-decider.fixtures';
import { share, unshare } from './project-sharing';

describe('project sharing', () => {
  describe('sharing', () => {
    const link = { linkId: 11, groupId: 9, groupAccess: 20, expiresAt: '2031-02-03' };

    it('shares with another group', () => {
      expect(share(given(created()), link, [NS], NOW)).toEqual([
        {
          type: 'ProjectSharedWithGroup',
          data: { projectId: ID, linkId: 11, groupId: 9, groupAccess: 20, expiresAt: '2031-02-03', at: AT },
        },
      ]);
    });

    it('409 when shared with that group already', () => {
      expect(thrown(() => share(given(created(), shared(9)), link, [NS], NOW))).toEqual(
        new Conflict('Group already shared with this group'),
      );
    });

    it('409 for its own group or one of its ancestors', () => {
      const own = new Conflict('Project cannot be shared with the group it is in or one of its ancestors.');
      expect(thrown(() => share(given(created()), { ...link, groupId: NS }, [NS, 2, 1], NOW))).toEqual(own);
      expect(thrown(() => share(given(created()), { ...link, groupId: 1 }, [NS, 2, 1], NOW))).toEqual(own);
    });

    it('unshares a shared group; 404 Group Link Not Found otherwise', () => {
      expect(unshare(given(created(), shared(9)), 9, NOW)).toEqual([
        { type: 'ProjectUnsharedWithGroup', data: { projectId: ID, groupId: 9, at: AT } },
      ]);
      expect(thrown(() => unshare(given(created(), shared(9), unshared(9)), 9, NOW))).toEqual(
        new NotFound('Group Link'),
      );
    });

    it('may share again after unsharing', () => {
      expect(share(given(created(), shared(9), unshared(9)), link, [NS], NOW)).toHaveLength(1);
    });
  });
});
