import { NotModified } from '@app/platform';
import { AT, EARLIER, ID, NOW } from '../projects/project-decider.fixtures';
import { star, starDecider, unstar, type StarEvent } from './star';

describe('project stars', () => {
  describe('stars', () => {
    const starState = (...events: StarEvent[]) => events.reduce(starDecider.evolve, starDecider.initial());
    const starred: StarEvent = { type: 'ProjectStarred', data: { projectId: ID, userId: 5, at: EARLIER } };
    const unstarred: StarEvent = { type: 'ProjectUnstarred', data: { projectId: ID, userId: 5, at: EARLIER } };

    it('stars and unstars', () => {
      expect(star(starState(), ID, 5, NOW)).toEqual([
        { type: 'ProjectStarred', data: { projectId: ID, userId: 5, at: AT } },
      ]);
      expect(unstar(starState(starred), ID, 5, NOW)).toEqual([
        { type: 'ProjectUnstarred', data: { projectId: ID, userId: 5, at: AT } },
      ]);
      expect(star(starState(starred, unstarred), ID, 5, NOW)).toHaveLength(1);
    });

    it('304 when nothing would change', () => {
      expect(() => star(starState(starred), ID, 5, NOW)).toThrow(NotModified);
      expect(() => unstar(starState(), ID, 5, NOW)).toThrow(NotModified);
      expect(() => unstar(starState(starred, unstarred), ID, 5, NOW)).toThrow(NotModified);
    });
  });
});
