import { Conflict, NotFound } from '@app/platform';
import {
  AT,
  created,
  fieldsOf,
  given,
  ID,
  memberAdded,
  memberRemoved,
  NOW,
  thrown,
} from '../projects/project-decider.fixtures';
import { addMember, removeMember, updateMember } from './project-members';

describe('project members', () => {
  describe('members', () => {
    it('adds guests to maintainers', () => {
      for (const level of [10, 20, 30, 40]) {
        expect(addMember(given(created()), 5, level, '2030-01-01', NOW)).toEqual([
          {
            type: 'ProjectMemberAdded',
            data: { projectId: ID, userId: 5, accessLevel: level, expiresAt: '2030-01-01', at: AT },
          },
        ]);
      }
    });

    it('refuses owner and unknown levels on the access_level field', () => {
      for (const level of [0, 5, 50, 60]) {
        expect(fieldsOf(() => addMember(given(created()), 5, level, null, NOW))).toEqual({
          access_level: ['is not included in the list'],
        });
        expect(fieldsOf(() => updateMember(given(created(), memberAdded(5, 30)), 5, level, null, NOW))).toEqual({
          access_level: ['is not included in the list'],
        });
      }
    });

    it('409 Member already exists, before looking at the level', () => {
      const err = thrown(() => addMember(given(created(), memberAdded(5, 30)), 5, 50, null, NOW));
      expect(err).toEqual(new Conflict('Member already exists'));
    });

    it('updates and removes existing members only (404 Not found otherwise)', () => {
      const s = given(created(), memberAdded(5, 30));
      expect(updateMember(s, 5, 40, null, NOW)).toEqual([
        { type: 'ProjectMemberUpdated', data: { projectId: ID, userId: 5, accessLevel: 40, expiresAt: null, at: AT } },
      ]);
      expect(removeMember(s, 5, NOW)).toEqual([
        { type: 'ProjectMemberRemoved', data: { projectId: ID, userId: 5, at: AT } },
      ]);
      expect(thrown(() => updateMember(s, 6, 30, null, NOW))).toEqual(new NotFound());
      expect(thrown(() => removeMember(given(created(), memberAdded(5, 30), memberRemoved(5)), 5, NOW))).toEqual(
        new NotFound(),
      );
    });
  });
});
