import { ProjectionRebuilder } from '@app/platform';
import { ProtectedBranchPolicy, ProtectedBranchQueries } from '@app/projects';
import { writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { expectShape } from '../contract/shape';
import { gitOk, tempDirs } from '../support/git';
import { createUser, type SeededUser } from '../support/seed';
import { startTestApp, type TestApp } from '../support/test-app';

const api = (path: string) => `/api/v4${path}`;
const FORBIDDEN = { message: '403 Forbidden' };
const PROJECT_NOT_FOUND = { message: '404 Project Not Found' };
const NOT_FOUND = { message: '404 Not found' };
const BRANCH_NOT_FOUND = { message: '404 Branch Not Found' };

const masters = [{ access_level: 40, access_level_description: 'Masters' }];
const developers = [{ access_level: 30, access_level_description: 'Developers + Masters' }];
const noOne = [{ access_level: 0, access_level_description: 'No one' }];
const rule = (name: string, push = masters, merge = masters) => ({
  name,
  push_access_levels: push,
  merge_access_levels: merge,
  allow_force_push: false,
});

/** Every protected branch answer is GitLab 10.x's entity, its levels included. */
function expectRuleShape(body: unknown): void {
  expectShape(body, 'protected-branch');
  const r = body as { push_access_levels: unknown[]; merge_access_levels: unknown[] };
  for (const level of [...r.push_access_levels, ...r.merge_access_levels]) expectShape(level, 'protected-ref-access');
}

function expectBranchShape(body: unknown): void {
  expectShape(body, 'branch');
  expectShape((body as { commit: unknown }).commit, 'commit');
}

/** Starts Lode listening on a port, for the stock git client. */
async function listening(overrides: Parameters<typeof startTestApp>[0] = {}): Promise<{ t: TestApp; base: string }> {
  const t = await startTestApp(overrides);
  await t.app.listen(0, '127.0.0.1');
  return { t, base: `127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}` };
}

describe('protected branches', () => {
  let t: TestApp;
  let base: string;
  let owner: SeededUser;
  let maintainer: SeededUser;
  let developer: SeededUser;
  let reporter: SeededUser;
  let guest: SeededUser;
  let stranger: SeededUser;
  /** Private, owned by `owner`, every role a member; pushed with master, feature, topic/x, release-1.0 and release-2.0. */
  let project: number;
  let projectPath: string;
  /** Public, owned by `owner`, nobody else a member. */
  let publicProject: number;
  const tmp = tempDirs();

  const as = (token: string) => ({
    get: (path: string) => t.http().get(api(path)).set('PRIVATE-TOKEN', token),
    post: (path: string, body: object = {}) => t.http().post(api(path)).set('PRIVATE-TOKEN', token).send(body),
    put: (path: string, body: object = {}) => t.http().put(api(path)).set('PRIVATE-TOKEN', token).send(body),
    delete: (path: string) => t.http().delete(api(path)).set('PRIVATE-TOKEN', token),
  });
  const root = () => as(t.rootToken);
  const anonymous = {
    get: (path: string) => t.http().get(api(path)),
    post: (path: string, body: object = {}) => t.http().post(api(path)).send(body),
    put: (path: string, body: object = {}) => t.http().put(api(path)).send(body),
    delete: (path: string) => t.http().delete(api(path)),
  };

  async function newProject(name: string, visibility = 'private'): Promise<{ id: number; path: string }> {
    const res = await as(owner.token).post('/projects', { name, visibility });
    expect(res.status).toBe(201);
    return { id: res.body.id, path: res.body.path_with_namespace };
  }

  /** Pushes `branches` (all on one new commit, the first one checked out) with the stock git client over HTTP. */
  async function push(path: string, token: string, branches: string[], server = base): Promise<void> {
    const dir = tmp.make();
    await gitOk(['init', '-q', '-b', branches[0], dir]);
    writeFileSync(join(dir, 'README.md'), '# hello\n');
    await gitOk(['add', '.'], dir);
    await gitOk(['commit', '-q', '-m', 'first'], dir);
    for (const b of branches.slice(1)) await gitOk(['branch', b], dir);
    await gitOk(['push', '-q', `http://git:${token}@${server}/${path}.git`, ...branches], dir);
  }

  const rulesOf = async (id: number) => (await root().get(`/projects/${id}/protected_branches`)).body as unknown[];

  beforeAll(async () => {
    ({ t, base } = await listening());
    [owner, maintainer, developer, reporter, guest, stranger] = await Promise.all(
      Array.from({ length: 6 }, () => createUser(t)),
    );
    const p = await newProject('guarded');
    project = p.id;
    projectPath = p.path;
    for (const [user, level] of [
      [maintainer, 40],
      [developer, 30],
      [reporter, 20],
      [guest, 10],
    ] as const) {
      const res = await as(owner.token).post(`/projects/${project}/members`, { user_id: user.id, access_level: level });
      expect(res.status).toBe(201);
    }
    await push(projectPath, owner.token, ['master', 'feature', 'topic/x', 'release-1.0', 'release-2.0']);
    publicProject = (await newProject('open', 'public')).id;
  });
  afterAll(async () => {
    tmp.removeAll();
    await t.close();
  });

  describe('the default branch, protected by the first push over HTTP (LODE_DEFAULT_BRANCH_PROTECTION 2 by default)', () => {
    it('protects master for maintainers only, recorded with the push in one append by the pusher', async () => {
      const list = await root().get(`/projects/${project}/protected_branches`);
      expect(list.status).toBe(200);
      expect(list.body).toEqual([rule('master')]);
      expectRuleShape(list.body[0]);

      const events = (await t.db.query(
        `select type, stream_version, metadata, data from events where stream_id = $1
          and type in ('RepositoryPushed', 'ProtectedBranchCreated') order by stream_version`,
        [`project-${project}`],
      )) as { type: string; stream_version: number; metadata: { actorId?: number }; data: { name?: string } }[];
      expect(events.map((e) => e.type)).toEqual(['RepositoryPushed', 'ProtectedBranchCreated']);
      expect(events[1].stream_version).toBe(events[0].stream_version + 1);
      expect(events[1].metadata.actorId).toBe(owner.id);
      expect(events[1].data).toMatchObject({ name: 'master', pushAccessLevel: 40, mergeAccessLevel: 40 });
    });

    it('does not protect it again on later pushes, nor other branches', async () => {
      await push(projectPath, owner.token, ['later']);
      expect(await rulesOf(project)).toEqual([rule('master')]);
    });

    it('leaves a default branch a rule made before the first push covers as that rule says', async () => {
      const p = await newProject('pre-protected');
      expect(
        (await as(owner.token).post(`/projects/${p.id}/protected_branches`, { name: 'mas*', push_access_level: 30 }))
          .status,
      ).toBe(201);
      await push(p.path, owner.token, ['master']);
      expect(await rulesOf(p.id)).toEqual([rule('mas*', developers)]);
    });

    it.each([
      [0, []],
      [1, [rule('master', developers, masters)]],
      [3, [rule('master', masters, developers)]],
    ] as const)('LODE_DEFAULT_BRANCH_PROTECTION=%i protects it accordingly', async (setting, expected) => {
      const other = await listening({ defaultBranchProtection: setting });
      try {
        const user = await createUser(other.t);
        const res = await other.t
          .http()
          .post(api('/projects'))
          .set('PRIVATE-TOKEN', user.token)
          .send({ name: `setting ${setting}` });
        expect(res.status).toBe(201);
        await push(res.body.path_with_namespace, user.token, ['master'], other.base);
        const list = await other.t
          .http()
          .get(api(`/projects/${res.body.id}/protected_branches`))
          .set('PRIVATE-TOKEN', user.token);
        expect(list.body).toEqual(expected);
      } finally {
        await other.t.close();
      }
    });
  });

  describe('who may call them', () => {
    it('maintainers, owners and administrators: every endpoint', async () => {
      for (const [i, token] of [owner.token, maintainer.token, t.rootToken].entries()) {
        expect((await as(token).get(`/projects/${project}/protected_branches`)).status).toBe(200);
        expect((await as(token).get(`/projects/${project}/protected_branches/master`)).status).toBe(200);
        const name = `role-${i}`;
        expect((await as(token).post(`/projects/${project}/protected_branches`, { name })).status).toBe(201);
        expect((await as(token).delete(`/projects/${project}/protected_branches/${name}`)).status).toBe(204);
        const protect = await as(token).put(`/projects/${project}/repository/branches/feature/protect`);
        expect(protect.status).toBe(200);
        expect((await as(token).put(`/projects/${project}/repository/branches/feature/unprotect`)).status).toBe(200);
      }
    });

    it('developers, reporters and guests 403, strangers and anonymous callers of a private project 404, all before the body is read', async () => {
      for (const token of [developer.token, reporter.token, guest.token]) {
        expect((await as(token).get(`/projects/${project}/protected_branches`)).body).toEqual(FORBIDDEN);
        expect((await as(token).get(`/projects/${project}/protected_branches/master`)).body).toEqual(FORBIDDEN);
        const bad = await as(token).post(`/projects/${project}/protected_branches`, { push_access_level: 'x' });
        expect([bad.status, bad.body]).toEqual([403, FORBIDDEN]);
        expect((await as(token).delete(`/projects/${project}/protected_branches/master`)).status).toBe(403);
        const protect = await as(token).put(`/projects/${project}/repository/branches/feature/protect`);
        expect([protect.status, protect.body]).toEqual([403, FORBIDDEN]);
        expect((await as(token).put(`/projects/${project}/repository/branches/master/unprotect`)).status).toBe(403);
      }
      for (const caller of [as(stranger.token), anonymous]) {
        for (const res of [
          await caller.get(`/projects/${project}/protected_branches`),
          await caller.get(`/projects/${project}/protected_branches/master`),
          await caller.post(`/projects/${project}/protected_branches`, { name: 'x' }),
          await caller.delete(`/projects/${project}/protected_branches/master`),
          await caller.put(`/projects/${project}/repository/branches/master/protect`),
          await caller.put(`/projects/${project}/repository/branches/master/unprotect`),
        ])
          expect([res.status, res.body]).toEqual([404, PROJECT_NOT_FOUND]);
      }
      expect(await rulesOf(project)).toEqual([rule('master')]);
    });

    it('on a public project, users who are no members and anonymous callers get 403 (authorize_admin_project)', async () => {
      for (const caller of [as(stranger.token), anonymous]) {
        expect((await caller.get(`/projects/${publicProject}/protected_branches`)).body).toEqual(FORBIDDEN);
        expect((await caller.post(`/projects/${publicProject}/protected_branches`, { name: 'x' })).status).toBe(403);
        expect((await caller.delete(`/projects/${publicProject}/protected_branches/x`)).status).toBe(403);
      }
      // The branch routes ask download_code first: an empty public repository has no branch for them.
      expect((await anonymous.put(`/projects/${publicProject}/repository/branches/master/protect`)).status).toBe(403);
    });
  });

  describe('POST, GET and DELETE /projects/:id/protected_branches', () => {
    it('creates with masters by default, answers 201 with the rule, and lists in creation order with pagination headers', async () => {
      const p = (await newProject('ordered')).id;
      const made = await as(owner.token).post(`/projects/${p}/protected_branches`, { name: 'zeta' });
      expect(made.status).toBe(201);
      expect(made.body).toEqual(rule('zeta'));
      expectRuleShape(made.body);
      const wild = await as(owner.token).post(
        `/projects/${p}/protected_branches?name=*-stable&push_access_level=30&merge_access_level=30`,
      );
      expect(wild.body).toEqual(rule('*-stable', developers, developers));
      const none = await as(owner.token).post(`/projects/${p}/protected_branches`, {
        name: 'alpha',
        push_access_level: 0,
        merge_access_level: '0',
      });
      expect(none.body).toEqual(rule('alpha', noOne, noOne));
      const list = await as(owner.token).get(`/projects/${p}/protected_branches`);
      expect(list.body.map((r: { name: string }) => r.name)).toEqual(['zeta', '*-stable', 'alpha']);
      expect(list.headers['x-total']).toBe('3');
      const page = await as(owner.token).get(`/projects/${p}/protected_branches?per_page=1&page=2`);
      expect(page.body).toEqual([rule('*-stable', developers, developers)]);
      expect(page.headers['x-next-page']).toBe('3');
    });

    it('gets a rule by its exact name: wildcards as written, a slash encoded; a name without a rule is 404 Not found', async () => {
      expect(
        (await as(owner.token).post(`/projects/${project}/protected_branches`, { name: 'release-*' })).status,
      ).toBe(201);
      expect(
        (await as(owner.token).post(`/projects/${project}/protected_branches`, { name: 'feature/*' })).status,
      ).toBe(201);
      const wild = await as(owner.token).get(`/projects/${project}/protected_branches/release-*`);
      expect([wild.status, wild.body]).toEqual([200, rule('release-*')]);
      expectRuleShape(wild.body);
      expect((await as(owner.token).get(`/projects/${project}/protected_branches/feature%2F*`)).body).toEqual(
        rule('feature/*'),
      );
      // A branch a wildcard covers is no rule of its own.
      const covered = await as(owner.token).get(`/projects/${project}/protected_branches/release-1.0`);
      expect([covered.status, covered.body]).toEqual([404, NOT_FOUND]);
      await as(owner.token).delete(`/projects/${project}/protected_branches/release-*`);
      await as(owner.token).delete(`/projects/${project}/protected_branches/feature%2F*`);
    });

    it("409s a name that has a rule with GitLab's message", async () => {
      const res = await as(owner.token).post(`/projects/${project}/protected_branches`, { name: 'master' });
      expect([res.status, res.body]).toEqual([409, { message: "Protected branch 'master' already exists" }]);
    });

    it('words bad parameters as Grape and a blank name as the model (422)', async () => {
      const post = (body: object) => as(owner.token).post(`/projects/${project}/protected_branches`, body);
      expect((await post({})).body).toEqual({ error: 'name is missing' });
      expect((await post({ name: 'x', push_access_level: 20 })).body).toEqual({
        error: 'push_access_level does not have a valid value',
      });
      expect((await post({ name: 'x', merge_access_level: 50 })).body).toEqual({
        error: 'merge_access_level does not have a valid value',
      });
      const notInt = await post({ name: 'x', push_access_level: 'masters' });
      expect([notInt.status, notInt.body]).toEqual([400, { error: 'push_access_level is invalid' }]);
      expect((await post({ name: ['a', 'b'] })).status).toBe(400);
      const long = await post({ name: `${'x'.repeat(5000)}*` });
      expect([long.status, long.body]).toEqual([422, { message: ['Name is too long (maximum is 255 characters)'] }]);
      const longGet = await as(owner.token).get(`/projects/${project}/protected_branches/${'x'.repeat(5000)}`);
      expect([longGet.status, longGet.body]).toEqual([404, NOT_FOUND]);
      const blank = await post({ name: ' ' });
      expect([blank.status, blank.body]).toEqual([422, { message: ["Name can't be blank"] }]);
      expect(await rulesOf(project)).toEqual([rule('master')]);
    });

    it('deletes a rule (204) and then 404s it', async () => {
      expect(
        (await as(maintainer.token).post(`/projects/${project}/protected_branches`, { name: 'tmp-*' })).status,
      ).toBe(201);
      const gone = await as(maintainer.token).delete(`/projects/${project}/protected_branches/tmp-*`);
      expect([gone.status, gone.text]).toEqual([204, '']);
      const again = await as(maintainer.token).delete(`/projects/${project}/protected_branches/tmp-*`);
      expect([again.status, again.body]).toEqual([404, NOT_FOUND]);
      expect(await rulesOf(project)).toEqual([rule('master')]);
    });

    it('a project id that is not a project is 404 Project Not Found', async () => {
      expect((await root().get('/projects/999999/protected_branches')).body).toEqual(PROJECT_NOT_FOUND);
    });
  });

  describe('PUT /projects/:id/repository/branches/:branch/protect and unprotect', () => {
    const branchPath = (b: string, action: string) => `/projects/${project}/repository/branches/${b}/${action}`;

    it('protects an existing branch for masters, answering the Branch with its new flags', async () => {
      const res = await as(owner.token).put(branchPath('feature', 'protect'));
      expect(res.status).toBe(200);
      expectBranchShape(res.body);
      expect(res.body).toMatchObject({
        name: 'feature',
        protected: true,
        developers_can_push: false,
        developers_can_merge: false,
        default: false,
      });
      expect(await rulesOf(project)).toEqual([rule('master'), rule('feature')]);
    });

    it('on an existing rule changes only the flags given; the protected branches API shows the levels', async () => {
      const push = await as(owner.token).put(branchPath('feature', 'protect'), { developers_can_push: true });
      expect(push.body).toMatchObject({ protected: true, developers_can_push: true, developers_can_merge: false });
      const merge = await as(owner.token).put(`${branchPath('feature', 'protect')}?developers_can_merge=true`);
      expect(merge.body).toMatchObject({ protected: true, developers_can_push: true, developers_can_merge: true });
      expect((await root().get(`/projects/${project}/protected_branches/feature`)).body).toEqual(
        rule('feature', developers, developers),
      );
      const back = await as(owner.token).put(branchPath('feature', 'protect'), { developers_can_push: 'false' });
      expect(back.body).toMatchObject({ developers_can_push: false, developers_can_merge: true });
    });

    it('unprotects: the rule of that name goes; unprotecting again is still 200', async () => {
      const res = await as(owner.token).put(branchPath('feature', 'unprotect'));
      expect(res.status).toBe(200);
      expectBranchShape(res.body);
      expect(res.body).toMatchObject({ name: 'feature', protected: false, developers_can_push: false });
      expect((await as(owner.token).put(branchPath('feature', 'unprotect'))).status).toBe(200);
      expect(await rulesOf(project)).toEqual([rule('master')]);
    });

    it('a branch a wildcard covers stays protected after unprotect, as GitLab answers', async () => {
      await as(owner.token).post(`/projects/${project}/protected_branches`, {
        name: 'release-*',
        push_access_level: 30,
      });
      const shown = await as(owner.token).put(branchPath('release-1.0', 'unprotect'));
      expect(shown.body).toMatchObject({ name: 'release-1.0', protected: true, developers_can_push: true });
      // protect adds an exact rule beside the wildcard.
      await as(owner.token).put(branchPath('release-2.0', 'protect'));
      expect(await rulesOf(project)).toEqual([rule('master'), rule('release-*', developers), rule('release-2.0')]);
      await as(owner.token).delete(`/projects/${project}/protected_branches/release-*`);
      await as(owner.token).delete(`/projects/${project}/protected_branches/release-2.0`);
    });

    it('takes a branch name with a slash encoded, and answers the default branch as default', async () => {
      const slash = await as(owner.token).put(branchPath('topic%2Fx', 'protect'));
      expect(slash.body).toMatchObject({ name: 'topic/x', protected: true });
      await as(owner.token).put(branchPath('topic%2Fx', 'unprotect'));
      const main = await as(owner.token).put(branchPath('master', 'protect'));
      expect(main.body).toMatchObject({ name: 'master', default: true, protected: true, developers_can_push: false });
    });

    it('404 Branch Not Found for a branch the repository lacks (and no rule is made), 400 for a flag that is no boolean', async () => {
      const missing = await as(owner.token).put(branchPath('nope', 'protect'));
      expect([missing.status, missing.body]).toEqual([404, BRANCH_NOT_FOUND]);
      expect((await as(owner.token).put(branchPath('nope', 'unprotect'))).body).toEqual(BRANCH_NOT_FOUND);
      const bad = await as(owner.token).put(branchPath('feature', 'protect'), { developers_can_push: 'maybe' });
      expect([bad.status, bad.body]).toEqual([400, { error: 'developers_can_push is invalid' }]);
      expect(await rulesOf(project)).toEqual([rule('master')]);
    });

    it('a guest, who may not read the code, is 403 before the parameters; a developer 403 after them', async () => {
      const guestBad = await as(guest.token).put(branchPath('feature', 'protect'), { developers_can_push: 'maybe' });
      expect([guestBad.status, guestBad.body]).toEqual([403, FORBIDDEN]);
      const devBad = await as(developer.token).put(branchPath('feature', 'protect'), { developers_can_push: 'maybe' });
      expect([devBad.status, devBad.body]).toEqual([400, { error: 'developers_can_push is invalid' }]);
    });
  });

  describe('what the gate and the branch serializer are given', () => {
    it('ProtectedBranchQueries.forProject answers the rules in creation order; the policy matches wildcards', async () => {
      await as(owner.token).post(`/projects/${project}/protected_branches`, {
        name: 'release-*',
        push_access_level: 30,
      });
      const rules = await t.app.get(ProtectedBranchQueries).forProject(project);
      expect(rules).toEqual([
        { name: 'master', pushAccessLevel: 40, mergeAccessLevel: 40, allowForcePush: false },
        { name: 'release-*', pushAccessLevel: 30, mergeAccessLevel: 40, allowForcePush: false },
      ]);
      expect(ProtectedBranchPolicy.branchFlags(rules, 'release-1.0')).toEqual({
        protected: true,
        developers_can_push: true,
        developers_can_merge: false,
      });
      const change = { branch: 'master', creation: false, deletion: false, forced: false };
      expect(ProtectedBranchPolicy.refusal(rules, change, { accessLevel: 30, isAdmin: false })).toBe(
        'You are not allowed to push code to protected branches on this project.',
      );
      await as(owner.token).delete(`/projects/${project}/protected_branches/release-*`);
    });

    it("forProject is one statement on the table's primary key", async () => {
      const runner = t.db.createQueryRunner();
      try {
        // A handful of rows would be read sequentially anyway; the plan a large table gets is the question.
        await runner.query('set enable_seqscan = off');
        const plan = (await runner.query(
          `explain select name from protected_branches where project_id = $1 order by position`,
          [project],
        )) as { 'QUERY PLAN': string }[];
        expect(plan.map((r) => r['QUERY PLAN']).join('\n')).toContain('protected_branches_pkey');
      } finally {
        await runner.query('reset enable_seqscan');
        await runner.release();
      }
    });

    it('rebuilds the read model from the events to the same rules, and a deleted project takes its rules along', async () => {
      const p = await newProject('doomed');
      await as(owner.token).post(`/projects/${p.id}/protected_branches`, { name: 'x*', push_access_level: 0 });
      const live = await t.db.query(`select * from protected_branches order by project_id, position`);
      await t.app.get(ProjectionRebuilder).rebuild();
      expect(await t.db.query(`select * from protected_branches order by project_id, position`)).toEqual(live);
      expect((await as(owner.token).delete(`/projects/${p.id}`)).status).toBe(202);
      expect(await t.db.query(`select 1 from protected_branches where project_id = $1`, [p.id])).toEqual([]);
    });
  });
});
