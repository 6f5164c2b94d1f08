import { randomBytes } from 'node:crypto';
import type { TestApp } from './test-app';

export interface SeededUser {
  id: number;
  username: string;
  email: string;
  token: string;
}

let counter = 0;

/** A user made through the API (as root), with a personal access token made the way the CLI does. */
export async function createUser(
  t: TestApp,
  attrs: Record<string, unknown> = {},
  scopes = ['api'],
): Promise<SeededUser> {
  counter += 1;
  const suffix = `${counter}${randomBytes(3).toString('hex')}`;
  const body = {
    username: `user${suffix}`,
    email: `user${suffix}@example.com`,
    name: `User ${suffix}`,
    password: 'secret-password',
    ...attrs,
  };
  const res = await t.http().post('/api/v4/users').set('PRIVATE-TOKEN', t.rootToken).send(body);
  if (res.status !== 201) throw new Error(`createUser: ${res.status} ${JSON.stringify(res.body)}`);
  const token = await createToken(t, res.body.id, scopes);
  return { id: res.body.id, username: res.body.username, email: res.body.email, token };
}

/** An impersonation token for a user, made by root through the API. */
export async function createToken(t: TestApp, userId: number, scopes = ['api'], expiresAt?: string): Promise<string> {
  const res = await t
    .http()
    .post(`/api/v4/users/${userId}/impersonation_tokens`)
    .set('PRIVATE-TOKEN', t.rootToken)
    .send({ name: 'test', scopes, ...(expiresAt ? { expires_at: expiresAt } : {}) });
  if (res.status !== 201) throw new Error(`createToken: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.token;
}
