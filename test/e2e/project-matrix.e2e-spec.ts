import type { Response } from 'supertest';
import { expectShape } from '../contract/shape';
import { client, createGroup, unique } from '../support/groups';
import { expectProject } from '../support/project-shape';
import { createUser, type SeededUser } from '../support/seed';
import { startTestApp, type TestApp } from '../support/test-app';

/*
 * The role × visibility matrix, generated: every role against projects of every visibility, each in
 * a group of the same or a more open visibility, for the main project operations. The expected
 * status comes from GitLab's rules, written once below; the bodies are checked for every cell.
 */

type Visibility = 'private' | 'internal' | 'public';
const VISIBILITIES: Visibility[] = ['private', 'internal', 'public'];
const RANK: Record<Visibility, number> = { private: 0, internal: 1, public: 2 };

const ROLES = ['anonymous', 'non-member', 'guest', 'reporter', 'developer', 'maintainer', 'owner', 'admin'] as const;
type Role = (typeof ROLES)[number];
/** Project members at these levels; `owner` owns the group; `admin` is root. */
const MEMBER_LEVEL: Partial<Record<Role, number>> = { guest: 10, reporter: 20, developer: 30, maintainer: 40 };
const LEVEL: Record<Role, number> = {
  anonymous: 0,
  'non-member': 0,
  guest: 10,
  reporter: 20,
  developer: 30,
  maintainer: 40,
  owner: 50,
  admin: Infinity,
};

const OPERATIONS = [
  'GET project',
  'PUT project',
  'POST archive',
  'DELETE project',
  'POST star',
  'GET members',
  'POST members',
] as const;
type Operation = (typeof OPERATIONS)[number];

/** Whether the role sees a project of this visibility (internal: any signed-in user; private: members). */
const sees = (role: Role, v: Visibility) =>
  role === 'admin' || LEVEL[role] > 0 || v === 'public' || (v === 'internal' && role !== 'anonymous');

/** GitLab's answer: 401 for anonymous writes, 404 for what one may not see, 403 below the level an operation needs. */
function expectedStatus(op: Operation, role: Role, v: Visibility): number {
  const read = sees(role, v) ? 200 : 404;
  if (op === 'GET project' || op === 'GET members') return read;
  if (role === 'anonymous') return 401;
  if (!sees(role, v)) return 404;
  const needs = (level: number, ok: number) => (LEVEL[role] >= level ? ok : 403);
  switch (op) {
    case 'PUT project':
      return needs(40, 200); // admin_project: maintainers
    case 'POST archive':
      return needs(50, 201); // archive_project: owners
    case 'DELETE project':
      return needs(50, 202); // remove_project: owners
    case 'POST star':
      return 201; // anyone who sees it
    case 'POST members':
      return needs(40, 201); // admin_project_member: maintainers
  }
}

/** Each visibility of project in a group of the same or a more open visibility. */
const COMBOS: [Visibility, Visibility][] = VISIBILITIES.flatMap((p) =>
  VISIBILITIES.filter((g) => RANK[g] >= RANK[p]).map((g) => [p, g] as [Visibility, Visibility]),
);

describe('role × visibility matrix', () => {
  let t: TestApp;
  const people: Partial<Record<Role, SeededUser>> = {};
  const as = (role: Role) =>
    client(t, role === 'anonymous' ? undefined : role === 'admin' ? t.rootToken : people[role]!.token);

  beforeAll(async () => {
    t = await startTestApp();
    for (const role of ROLES)
      if (role !== 'anonymous' && role !== 'admin')
        people[role] = await createUser(t, { username: `${role.replace('-', '')}${unique()}` });
  });
  afterAll(async () => {
    await t?.close();
  });

  /** A project of visibility `v` in a new group of visibility `g` owned by `owner`, with the member roles. */
  const setUp = async (v: Visibility, g: Visibility) => {
    const group = await createGroup(t, { visibility: g }, people.owner!.token);
    const res = await as('owner')
      .post('/projects')
      .send({ name: `Matrix ${v} in ${g} ${unique()}`, namespace_id: group.id, visibility: v });
    if (res.status !== 201) throw new Error(`setUp: ${res.status} ${JSON.stringify(res.body)}`);
    const id = res.body.id as number;
    await Promise.all(
      Object.entries(MEMBER_LEVEL).map(async ([role, level]) => {
        const added = await as('owner')
          .post(`/projects/${id}/members`)
          .send({ user_id: people[role as Role]!.id, access_level: level });
        if (added.status !== 201) throw new Error(`setUp member: ${added.status} ${JSON.stringify(added.body)}`);
      }),
    );
    return id;
  };

  /** The body that goes with the status (every cell is checked, success or not). */
  const checkBody = (op: Operation, role: Role, res: Response) => {
    if (res.status === 401) return expect(res.body).toEqual({ message: '401 Unauthorized' });
    if (res.status === 403) return expect(res.body).toEqual({ message: '403 Forbidden' });
    if (res.status === 404) return expect(res.body).toEqual({ message: '404 Project Not Found' });
    const administers = LEVEL[role] >= 40;
    switch (op) {
      case 'GET project':
        if (role === 'anonymous') return expectShape(res.body, 'project-simple');
        expectProject(res.body, 'project', { owner: false, adminFields: administers });
        return expect(res.body.permissions.project_access).toEqual(
          MEMBER_LEVEL[role] ? { access_level: MEMBER_LEVEL[role], notification_level: 3 } : null,
        );
      case 'PUT project':
        expectProject(res.body, 'project-in-group', { owner: false, adminFields: administers });
        return expect(res.body.description).toBe(`edited by ${role}`);
      case 'POST archive':
        expectProject(res.body, 'project-in-group', { owner: false, adminFields: false });
        return expect(res.body.archived).toBe(true);
      case 'DELETE project':
        return expect(res.body).toEqual({ message: '202 Accepted' });
      case 'POST star':
        return expectProject(res.body, 'project-in-group', { owner: false, adminFields: false });
      case 'GET members':
        expect(res.body).toHaveLength(4);
        for (const m of res.body) expectShape(m, 'member');
        return;
      case 'POST members':
        expectShape(res.body, 'member');
        return expect(res.body.access_level).toBe(10);
    }
  };

  describe.each(COMBOS)('project %s, group %s', (v, g) => {
    let projectId: number;
    let candidate: SeededUser; // whom POST members adds; removed again after each success

    beforeAll(async () => {
      projectId = await setUp(v, g);
      candidate = await createUser(t);
    });

    it.each(OPERATIONS)('%s', async (op) => {
      const actual: Partial<Record<Role, number>> = {};
      const expected: Partial<Record<Role, number>> = {};
      // Fresh projects for DELETE, made up front, one per role.
      const doomed = op === 'DELETE project' ? await Promise.all(ROLES.map(() => setUp(v, g))) : [];
      for (const [i, role] of ROLES.entries()) {
        const c = as(role);
        let res: Response;
        switch (op) {
          case 'GET project':
            res = await c.get(`/projects/${projectId}`);
            break;
          case 'PUT project':
            res = await c.put(`/projects/${projectId}`).send({ description: `edited by ${role}` });
            break;
          case 'POST archive':
            res = await c.post(`/projects/${projectId}/archive`);
            break;
          case 'DELETE project':
            res = await c.delete(`/projects/${doomed[i]}`);
            break;
          case 'POST star':
            res = await c.post(`/projects/${projectId}/star`);
            break;
          case 'GET members':
            res = await c.get(`/projects/${projectId}/members`);
            break;
          case 'POST members':
            res = await c.post(`/projects/${projectId}/members`).send({ user_id: candidate.id, access_level: 10 });
            break;
        }
        actual[role] = res.status;
        expected[role] = expectedStatus(op, role, v);
        if (res.status === expected[role]) checkBody(op, role, res);
        // Put things back for the next role.
        if (op === 'POST archive' && res.status === 201)
          expect((await as('admin').post(`/projects/${projectId}/unarchive`)).status).toBe(201);
        if (op === 'POST members' && res.status === 201)
          expect((await as('admin').delete(`/projects/${projectId}/members/${candidate.id}`)).status).toBe(204);
        if (op === 'DELETE project' && res.status === 202)
          expect((await as('admin').get(`/projects/${doomed[i]}`)).status).toBe(404);
        if (op === 'DELETE project' && res.status !== 202)
          expect((await as('admin').get(`/projects/${doomed[i]}`)).status).toBe(200);
      }
      expect(actual).toEqual(expected);
      if (op === 'POST star') {
        const stars = ROLES.filter((r) => expected[r] === 201).length;
        expect((await as('admin').get(`/projects/${projectId}`)).body.star_count).toBe(stars);
      }
    });
  });

  it('covers every cell', () => {
    expect(COMBOS).toEqual([
      ['private', 'private'],
      ['private', 'internal'],
      ['private', 'public'],
      ['internal', 'internal'],
      ['internal', 'public'],
      ['public', 'public'],
    ]);
    expect(COMBOS.length * ROLES.length * OPERATIONS.length).toBe(336);
  });
});
