import { Invalid, NotFound } from '@app/platform';
import {
  add,
  disable,
  enable,
  evolve,
  initial,
  update,
  type DeployKey,
  type DeployKeyEvent,
  type NewDeployKey,
} from './deploy-key';

const NOW = new Date('2024-05-06T07:08:09.000Z');
const AT = NOW.toISOString();
const EARLIER = '2024-01-01T00:00:00.000Z';
const KEY = 9;
const A = 1;
const B = 2;
const C = 3;

const given = (...events: DeployKeyEvent[]): DeployKey => events.reduce(evolve, initial());

const newKey = (over: Partial<NewDeployKey> = {}): NewDeployKey => ({
  keyId: KEY,
  projectId: A,
  userId: 5,
  title: 'ci',
  key: 'ssh-ed25519 AAAA ci',
  keyType: 'ssh-ed25519',
  fingerprint: 'aa:bb',
  fingerprintSha256: 'SHA256:abc',
  canPush: false,
  ...over,
});
const added = (over: Partial<NewDeployKey> = {}): DeployKeyEvent => ({
  type: 'DeployKeyAdded',
  data: { ...newKey(over), at: EARLIER },
});
const enabled = (projectId: number, canPush = false): DeployKeyEvent => ({
  type: 'DeployKeyEnabled',
  data: { keyId: KEY, projectId, canPush, at: EARLIER },
});
const disabled = (projectId: number): DeployKeyEvent => ({
  type: 'DeployKeyDisabled',
  data: { keyId: KEY, projectId, at: EARLIER },
});

describe('deploy key decider', () => {
  describe('add', () => {
    it('adds the key with its first project and can_push', () => {
      expect(add(given(), newKey({ canPush: true }), NOW)).toEqual([
        { type: 'DeployKeyAdded', data: { ...newKey({ canPush: true }), at: AT } },
      ]);
    });

    it.each([
      ['', "can't be blank"],
      ['   ', "can't be blank"],
      ['x'.repeat(256), 'is too long (maximum is 255 characters)'],
    ])('refuses the title %j under GitLab nested field name', (title, message) => {
      expect(() => add(given(), newKey({ title }), NOW)).toThrow(new Invalid({ 'deploy_key.title': [message] }));
    });

    it('takes a title of exactly 255 characters', () => {
      expect(add(given(), newKey({ title: 'x'.repeat(255) }), NOW)).toHaveLength(1);
    });
  });

  describe('enable', () => {
    it('links the key to another project with its own can_push', () => {
      expect(enable(given(added()), B, true, NOW)).toEqual([
        { type: 'DeployKeyEnabled', data: { keyId: KEY, projectId: B, canPush: true, at: AT } },
      ]);
    });

    it('is no change on a project that has it already, can_push included', () => {
      expect(enable(given(added({ canPush: false })), A, true, NOW)).toEqual([]);
      expect(enable(given(added(), enabled(B)), B, false, NOW)).toEqual([]);
    });

    it('answers 404 Deploy Key Not Found for a removed key', () => {
      const removed = given(added(), disabled(A), { type: 'DeployKeyRemoved', data: { keyId: KEY, at: EARLIER } });
      expect(() => enable(removed, B, false, NOW)).toThrow(new NotFound('Deploy Key'));
    });
  });

  describe('update', () => {
    it('changes the title for the key and can_push for this project only', () => {
      const s = given(added(), enabled(B, false));
      const events = update(s, B, { title: 'deploy', canPush: true }, NOW);
      expect(events).toEqual([
        { type: 'DeployKeyUpdated', data: { keyId: KEY, projectId: B, title: 'deploy', canPush: true, at: AT } },
      ]);
      const after = events.reduce(evolve, s);
      expect(after).toEqual({
        exists: true,
        keyId: KEY,
        title: 'deploy',
        links: { [A]: { canPush: false }, [B]: { canPush: true } },
      });
    });

    it('records only what changes, and nothing when nothing does', () => {
      const s = given(added({ title: 'ci', canPush: true }));
      expect(update(s, A, { title: 'ci', canPush: false }, NOW)).toEqual([
        { type: 'DeployKeyUpdated', data: { keyId: KEY, projectId: A, canPush: false, at: AT } },
      ]);
      expect(update(s, A, { title: 'ci', canPush: true }, NOW)).toEqual([]);
    });

    it('answers ActiveRecord 404 Not found on a project without the key', () => {
      expect(() => update(given(added()), B, { canPush: true }, NOW)).toThrow(new NotFound());
      expect(() => update(given(), A, { canPush: true }, NOW)).toThrow(new NotFound());
    });

    it('refuses a blank title', () => {
      expect(() => update(given(added()), A, { title: '' }, NOW)).toThrow(
        new Invalid({ 'deploy_key.title': ["can't be blank"] }),
      );
    });
  });

  describe('disable', () => {
    it('removes the key from one project and leaves it on the others', () => {
      expect(disable(given(added(), enabled(B)), A, [], NOW)).toEqual([
        { type: 'DeployKeyDisabled', data: { keyId: KEY, projectId: A, at: AT } },
      ]);
    });

    it('removes the key itself with its last project', () => {
      expect(disable(given(added(), enabled(B), disabled(A)), B, [], NOW)).toEqual([
        { type: 'DeployKeyDisabled', data: { keyId: KEY, projectId: B, at: AT } },
        { type: 'DeployKeyRemoved', data: { keyId: KEY, at: AT } },
      ]);
    });

    it('counts projects deleted since as gone', () => {
      const s = given(added(), enabled(B), enabled(C));
      expect(disable(s, A, [B, C], NOW).map((e) => e.type)).toEqual(['DeployKeyDisabled', 'DeployKeyRemoved']);
      expect(disable(s, A, [B], NOW).map((e) => e.type)).toEqual(['DeployKeyDisabled']);
    });

    it('answers 404 Deploy Key Not Found on a project without the key', () => {
      expect(() => disable(given(added()), B, [], NOW)).toThrow(new NotFound('Deploy Key'));
      expect(() => disable(given(added(), disabled(A)), A, [], NOW)).toThrow(new NotFound('Deploy Key'));
    });
  });
});
