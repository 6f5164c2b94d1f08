import { LodeConfig } from '@app/platform';
import { createUser } from '../support/seed';
import { startTestApp, type TestApp } from '../support/test-app';

describe('LODE_GRAVATAR', () => {
  it('is on unless set to a false value', () => {
    expect(LodeConfig.fromEnv({}).gravatar).toBe(true);
    expect(LodeConfig.fromEnv({ LODE_GRAVATAR: 'true' }).gravatar).toBe(true);
    expect(LodeConfig.fromEnv({ LODE_GRAVATAR: 'false' }).gravatar).toBe(false);
    expect(LodeConfig.fromEnv({ LODE_GRAVATAR: '0' }).gravatar).toBe(false);
  });

  describe('off', () => {
    let t: TestApp;
    beforeAll(async () => (t = await startTestApp({ gravatar: false })));
    afterAll(() => t.close());

    it('answers avatar_url null for a user without an avatar, so no hash of the e-mail is shown', async () => {
      const owner = await createUser(t);
      const other = await createUser(t);
      const anonymous = await t.http().get(`/api/v4/users/${other.id}`);
      expect(anonymous.status).toBe(200);
      expect(anonymous.body.avatar_url).toBeNull();
      const self = await t.http().get('/api/v4/user').set('PRIVATE-TOKEN', other.token);
      expect(self.body.avatar_url).toBeNull();
      const list = await t.http().get(`/api/v4/users?username=${other.username}`).set('PRIVATE-TOKEN', owner.token);
      expect(list.body[0].avatar_url).toBeNull();
      const group = await t
        .http()
        .post('/api/v4/groups')
        .set('PRIVATE-TOKEN', owner.token)
        .send({ name: 'Quiet', path: `quiet-${owner.id}` });
      const members = await t.http().get(`/api/v4/groups/${group.body.id}/members`).set('PRIVATE-TOKEN', owner.token);
      expect(members.body[0].avatar_url).toBeNull();
      expect(JSON.stringify([anonymous.body, self.body, list.body, members.body])).not.toContain('gravatar');
    });
  });
});
