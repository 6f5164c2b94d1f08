import { expectShape } from '../contract/shape';
import { addGroupMember, client, createGroup, type CreatedGroup } from '../support/groups';
import { createUser, type SeededUser } from '../support/seed';
import { startTestApp, type TestApp } from '../support/test-app';

/*
 * The role × visibility matrix of the group endpoints, generated from GitLab 10.x's rules rather than
 * written out case by case:
 * - reading: public groups for everybody, internal ones for signed-in users who are not external,
 *   private ones for members (direct or through an ancestor) and administrators;
 * - the members API authenticates every request (401 for anonymous callers, even on public groups);
 * - writes need a token (401), then a visible group (404, never 403 for what one may not see), then
 *   owner rights, direct or inherited, or an administrator (403 otherwise).
 */

const VISIBILITIES = ['private', 'internal', 'public'] as const;
type Visibility = (typeof VISIBILITIES)[number];

/** Members of the group itself. */
const DIRECT = { guest: 10, reporter: 20, developer: 30, maintainer: 40, owner: 50 } as const;
/** Members of the group's parent only. */
const INHERITED = { 'inherited developer': 30, 'inherited owner': 50 } as const;
const ROLES = [
  'anonymous',
  'non-member',
  'external non-member',
  ...Object.keys(DIRECT),
  ...Object.keys(INHERITED),
  'admin',
] as const;
type Role = (typeof ROLES)[number];

const OPERATIONS = [
  'GET /groups/:id',
  'GET /groups/:id/members',
  'PUT /groups/:id',
  'DELETE /groups/:id',
  'POST /groups/:id/members',
] as const;
type Operation = (typeof OPERATIONS)[number];

const level = (role: Role): number =>
  (DIRECT as Record<string, number>)[role] ?? (INHERITED as Record<string, number>)[role] ?? 0;

function sees(role: Role, visibility: Visibility): boolean {
  if (role === 'admin' || level(role) > 0) return true;
  if (role === 'anonymous' || role === 'external non-member') return visibility === 'public';
  return visibility !== 'private';
}

function expectedStatus(role: Role, visibility: Visibility, op: Operation): number {
  if (role === 'anonymous' && op !== 'GET /groups/:id') return 401;
  if (!sees(role, visibility)) return 404;
  if (op.startsWith('GET')) return 200;
  if (role !== 'admin' && level(role) < 50) return 403;
  return op === 'PUT /groups/:id' ? 200 : op === 'DELETE /groups/:id' ? 204 : 201;
}

const CASES = VISIBILITIES.flatMap((visibility) =>
  OPERATIONS.flatMap((op) =>
    ROLES.map((role) => ({ visibility, op, role, status: expectedStatus(role, visibility, op) })),
  ),
);

describe('group role × visibility matrix', () => {
  let t: TestApp;
  let creator: SeededUser;
  const users = {} as Record<Role, SeededUser | undefined>;
  /** One user per role, for that role to add as a member (so successful adds never collide). */
  const targets = {} as Record<Role, SeededUser>;
  /** The group each visibility's read, update and member cases run against. */
  const shared = {} as Record<Visibility, CreatedGroup>;
  /** A fresh group per visibility and role for the DELETE cases. */
  const doomed = {} as Record<string, CreatedGroup>;

  const tokenOf = (role: Role) => (role === 'admin' ? t.rootToken : users[role]?.token);

  /** A subgroup of `parent` holding the direct roles (all of them, or just `only`). */
  async function groupWithRoles(parent: CreatedGroup, visibility: Visibility, only?: Role): Promise<CreatedGroup> {
    const g = await createGroup(t, { visibility, parent_id: parent.id }, creator.token);
    for (const [role, lvl] of Object.entries(DIRECT) as [Role, number][]) {
      if (!only || only === role) await addGroupMember(t, g.id, users[role]!.id, lvl);
    }
    return g;
  }

  beforeAll(async () => {
    t = await startTestApp();
    creator = await createUser(t);
    const signedIn = ROLES.filter((r) => r !== 'anonymous' && r !== 'admin');
    await Promise.all([
      ...signedIn.map(async (role) => {
        users[role] = await createUser(t, { name: `Role ${role}`, external: role === 'external non-member' });
      }),
      ...ROLES.map(async (role) => {
        targets[role] = await createUser(t);
      }),
    ]);
    // A token's first use records today's activity; keep that out of the cases.
    await Promise.all([creator, ...signedIn.map((r) => users[r]!)].map((u) => client(t, u.token).get('/user')));
    // The parent is public, so that every visibility is allowed below it.
    const parent = await createGroup(t, { visibility: 'public' }, creator.token);
    for (const [role, lvl] of Object.entries(INHERITED) as [Role, number][])
      await addGroupMember(t, parent.id, users[role]!.id, lvl);
    await Promise.all(
      VISIBILITIES.map(async (visibility) => {
        shared[visibility] = await groupWithRoles(parent, visibility);
        for (const role of ROLES) doomed[`${visibility}/${role}`] = await groupWithRoles(parent, visibility, role);
      }),
    );
  });
  afterAll(async () => {
    await t?.close();
  });

  it('covers every role, visibility and operation', () => {
    expect(CASES).toHaveLength(ROLES.length * VISIBILITIES.length * OPERATIONS.length);
    // Spot checks of the generator against GitLab's documented answers.
    expect(expectedStatus('anonymous', 'public', 'GET /groups/:id')).toBe(200);
    expect(expectedStatus('anonymous', 'public', 'GET /groups/:id/members')).toBe(401);
    expect(expectedStatus('non-member', 'private', 'PUT /groups/:id')).toBe(404);
    expect(expectedStatus('non-member', 'internal', 'PUT /groups/:id')).toBe(403);
    expect(expectedStatus('maintainer', 'private', 'DELETE /groups/:id')).toBe(403);
    expect(expectedStatus('inherited owner', 'private', 'POST /groups/:id/members')).toBe(201);
    expect(expectedStatus('external non-member', 'internal', 'GET /groups/:id')).toBe(404);
  });

  it.each(CASES)('$op by $role on a $visibility group → $status', async ({ visibility, op, role, status }) => {
    const http = client(t, tokenOf(role));
    const group = op === 'DELETE /groups/:id' ? doomed[`${visibility}/${role}`] : shared[visibility];
    let res;
    switch (op) {
      case 'GET /groups/:id':
        res = await http.get(`/groups/${group.id}`);
        break;
      case 'GET /groups/:id/members':
        res = await http.get(`/groups/${group.id}/members`);
        break;
      case 'PUT /groups/:id':
        res = await http.put(`/groups/${group.id}`).send({ description: `set by ${role}` });
        break;
      case 'DELETE /groups/:id':
        res = await http.delete(`/groups/${group.id}`);
        break;
      case 'POST /groups/:id/members':
        res = await http.post(`/groups/${group.id}/members`).send({ user_id: targets[role].id, access_level: 10 });
        break;
    }
    expect({ status: res.status, body: res.body }).toMatchObject({ status });
    const admin = client(t, t.rootToken);

    if (status === 401) expect(res.body).toEqual({ message: '401 Unauthorized' });
    if (status === 403) expect(res.body).toEqual({ message: '403 Forbidden' });
    if (status === 404) expect(res.body).toEqual({ message: '404 Group Not Found' });
    if (status >= 400) {
      // Nothing changed.
      const after = await admin.get(`/groups/${group.id}`);
      expect(after.status).toBe(200);
      expect(after.body.description).not.toBe(`set by ${role}`);
      const member = await admin.get(`/groups/${group.id}/members/${targets[role].id}`);
      expect(member.status).toBe(404);
      return;
    }

    switch (op) {
      case 'GET /groups/:id':
        expectShape(res.body, 'group-detail');
        expect(res.body).toMatchObject({ id: group.id, visibility });
        break;
      case 'GET /groups/:id/members':
        for (const m of res.body) expectShape(m, 'member');
        expect(res.body.map((m: { id: number }) => m.id)).toEqual(
          expect.arrayContaining([creator.id, users.owner!.id, users.guest!.id]),
        );
        break;
      case 'PUT /groups/:id':
        expect(res.body).toMatchObject({ id: group.id, description: `set by ${role}` });
        break;
      case 'DELETE /groups/:id':
        expect(res.text).toBe('');
        expect((await admin.get(`/groups/${group.id}`)).status).toBe(404);
        break;
      case 'POST /groups/:id/members':
        expectShape(res.body, 'member');
        expect(res.body).toMatchObject({ id: targets[role].id, access_level: 10 });
        break;
    }
  });
});
