import { startTestApp, type TestApp } from '../support/test-app';

describe('smoke', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers GET /user for root with the administrator view', async () => {
    const res = await t.http().get('/api/v4/user').set('PRIVATE-TOKEN', t.rootToken);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.body).toMatchObject({ id: 1, username: 'root', is_admin: true, email: 'admin@example.com' });
  });
});
