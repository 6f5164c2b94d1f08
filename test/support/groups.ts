import { randomBytes } from 'node:crypto';
import type { TestApp } from './test-app';

/** Requests as a token holder, or anonymously when the token is undefined. */
export function client(t: TestApp, token?: string) {
  const auth = <R extends { set: (k: string, v: string) => R }>(r: R) => (token ? r.set('PRIVATE-TOKEN', token) : r);
  return {
    get: (path: string) => auth(t.http().get(`/api/v4${path}`)),
    post: (path: string) => auth(t.http().post(`/api/v4${path}`)),
    put: (path: string) => auth(t.http().put(`/api/v4${path}`)),
    delete: (path: string) => auth(t.http().delete(`/api/v4${path}`)),
  };
}

let seq = 0;
/** A short suffix that keeps paths and names unique across a file. */
export const unique = () => `${(seq += 1)}${randomBytes(3).toString('hex')}`;

export interface CreatedGroup {
  id: number;
  path: string;
  full_path: string;
  name: string;
  visibility: string;
}

/** A group made through the API by `token` (root when not given); fails the test on anything but 201. */
export async function createGroup(
  t: TestApp,
  attrs: Record<string, unknown> = {},
  token = t.rootToken,
): Promise<CreatedGroup> {
  const s = unique();
  const res = await client(t, token)
    .post('/groups')
    .send({ name: `Group ${s}`, path: `group-${s}`, ...attrs });
  if (res.status !== 201) throw new Error(`createGroup: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** A project made through the API by `token` in a namespace; fails on anything but 201. */
export async function createProject(
  t: TestApp,
  attrs: Record<string, unknown> = {},
  token = t.rootToken,
): Promise<{ id: number; path_with_namespace: string; name: string; path: string }> {
  const s = unique();
  const res = await client(t, token)
    .post('/projects')
    .send({ name: `Project ${s}`, path: `project-${s}`, ...attrs });
  if (res.status !== 201) throw new Error(`createProject: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Adds a group member as root; fails on anything but 201. */
export async function addGroupMember(
  t: TestApp,
  groupId: number,
  userId: number,
  accessLevel: number,
  expiresAt?: string,
): Promise<void> {
  const res = await client(t, t.rootToken)
    .post(`/groups/${groupId}/members`)
    .send({ user_id: userId, access_level: accessLevel, ...(expiresAt ? { expires_at: expiresAt } : {}) });
  if (res.status !== 201) throw new Error(`addGroupMember: ${res.status} ${JSON.stringify(res.body)}`);
}
