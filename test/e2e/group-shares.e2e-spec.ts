import type { Gitlab } from '@gitbeaker/rest' with { 'resolution-mode': 'import' };
import type { Response } from 'supertest';
import { expectShape } from '../contract/shape';
import { addGroupMember, client, createGroup, createProject, unique, type CreatedGroup } from '../support/groups';
import { runPython } from '../support/python-gitlab';
import { createUser, type SeededUser } from '../support/seed';
import { freePort, startTestApp, type TestApp } from '../support/test-app';

/*
 * Groups shared with groups (POST/DELETE /groups/:id/share, `shared_with_groups`), the access a share
 * gives (the lower of the member's level and the share's, on the group, its subgroups and their
 * projects), descendant groups, inherited members (`members/all`), `user_ids[]`, and the group settings
 * clients write and read back; through python-gitlab 3.12, gitbeaker and plain HTTP, and the calls
 * Terraform's gitlab_group_share_group and gitlab_group make.
 */

const GROUP_NOT_FOUND = { message: '404 Group Not Found' };
const FORBIDDEN = { message: '403 Forbidden' };

const PYTHON_SHARES = `
import json, sys, warnings
import gitlab
warnings.simplefilter("ignore")
url, token, group_id, other_id, project_id, user_id = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
gl = gitlab.Gitlab(url, private_token=token)
group = gl.groups.get(group_id)
out = {}
group.share(other_id, gitlab.const.DEVELOPER_ACCESS)
out["after_share"] = [[l["group_id"], l["group_access_level"], l["expires_at"]] for l in group.shared_with_groups]
out["reread"] = [l["group_id"] for l in gl.groups.get(group_id).shared_with_groups]
try:
    group.share(other_id, gitlab.const.DEVELOPER_ACCESS)
    out["again"] = None
except gitlab.exceptions.GitlabCreateError as e:
    out["again"] = [e.response_code, e.error_message]
out["descendants"] = sorted(g.full_path for g in group.descendant_groups.list(get_all=True))
out["members_all"] = sorted([m.id, m.access_level] for m in group.members_all.list(get_all=True))
out["member_all"] = group.members_all.get(user_id).access_level
project = gl.projects.get(project_id)
out["project_members_all"] = sorted([m.id, m.access_level] for m in project.members_all.list(get_all=True))
try:
    project.members_all.get(999999)
    out["missing"] = None
except gitlab.exceptions.GitlabGetError as e:
    out["missing"] = e.response_code
group.unshare(other_id)
out["after_unshare"] = gl.groups.get(group_id).shared_with_groups
try:
    group.unshare(other_id)
    out["unshare_again"] = None
except gitlab.exceptions.GitlabDeleteError as e:
    out["unshare_again"] = [e.response_code, e.error_message]
print(json.dumps(out))
`;

describe('groups: shares, descendants, inherited members, settings', () => {
  let t: TestApp;
  let host: string;
  let owner: SeededUser; // owns A
  let aMaintainer: SeededUser; // maintainer of A, not owner
  let bOwner: SeededUser; // owns B
  let bMaintainer: SeededUser; // maintainer of B
  let bGuest: SeededUser; // guest of B
  let outsider: SeededUser;
  let a: CreatedGroup;
  let aSub: CreatedGroup;
  let aDeeper: CreatedGroup;
  let b: CreatedGroup;
  let project: { id: number; path_with_namespace: string };

  const as = (u: SeededUser) => client(t, u.token);
  const admin = () => client(t, t.rootToken);
  const eventCount = async () => Number((await t.db.query('select count(*)::int as n from events'))[0].n);
  const ids = (res: Response) => (res.body as { id: number }[]).map((g) => g.id);
  const levels = (res: Response) =>
    (res.body as { id: number; access_level: number }[]).map((m) => [m.id, m.access_level]);

  beforeAll(async () => {
    const port = await freePort();
    host = `http://127.0.0.1:${port}`;
    t = await startTestApp({ externalUrl: host });
    await t.app.listen(port, '127.0.0.1');
    [owner, aMaintainer, bOwner, bMaintainer, bGuest, outsider] = await Promise.all(
      Array.from({ length: 6 }, () => createUser(t)),
    );
    // A token's first use records the day's activity (an event): outside the counted writes.
    await Promise.all([owner, aMaintainer, bOwner, bMaintainer, bGuest, outsider].map((u) => as(u).get('/user')));
    a = await createGroup(t, { visibility: 'private' }, owner.token);
    aSub = await createGroup(t, { visibility: 'private', parent_id: a.id }, owner.token);
    aDeeper = await createGroup(t, { visibility: 'private', parent_id: aSub.id }, owner.token);
    // Internal: the owner of A may see it, which sharing with it asks (GitLab's `read_group`).
    b = await createGroup(t, { visibility: 'internal' }, bOwner.token);
    await addGroupMember(t, a.id, aMaintainer.id, 40);
    await addGroupMember(t, b.id, bMaintainer.id, 40);
    await addGroupMember(t, b.id, bGuest.id, 10);
    project = await createProject(t, { namespace_id: aSub.id, visibility: 'private' }, owner.token);
    // One commit, so that reading code (reporter) and making a branch (developer) can be asked.
    const commit = await as(owner)
      .post(`/projects/${project.id}/repository/commits`)
      .send({
        branch: 'master',
        commit_message: 'first',
        actions: [{ action: 'create', file_path: 'README.md', content: 'hi\n' }],
      });
    expect(commit.status).toBe(201);
  });
  afterAll(async () => {
    await t?.close();
  });

  describe('POST and DELETE /groups/:id/share', () => {
    afterEach(async () => {
      // Each case starts unshared.
      await as(owner).delete(`/groups/${a.id}/share/${b.id}`);
    });

    it('shares: 201 with the GroupDetail listing the link; the invited group’s members see the group and what is below', async () => {
      expect((await as(bMaintainer).get(`/groups/${a.id}`)).status).toBe(404);
      expect((await as(bMaintainer).get(`/projects/${project.id}`)).status).toBe(404);
      const res = await as(owner)
        .post(`/groups/${a.id}/share`)
        .send({ group_id: b.id, group_access: 30, expires_at: '2099-01-31' });
      expect(res.status).toBe(201);
      expectShape(res.body, 'group-detail');
      expect(res.body.id).toBe(a.id);
      expect(res.body.shared_with_groups).toEqual([
        {
          group_id: b.id,
          group_name: b.name,
          group_full_path: b.full_path,
          group_access_level: 30,
          expires_at: '2099-01-31',
        },
      ]);
      expect((await as(owner).get(`/groups/${a.id}`)).body.shared_with_groups).toEqual(res.body.shared_with_groups);
      for (const path of [`/groups/${a.id}`, `/groups/${aSub.id}`, `/groups/${aDeeper.id}`, `/projects/${project.id}`])
        expect([path, (await as(bMaintainer).get(path)).status]).toEqual([path, 200]);
      // The invited group's own page does not list the link (it is A's), and an outsider still sees nothing.
      expect((await as(bOwner).get(`/groups/${b.id}`)).body.shared_with_groups).toEqual([]);
      expect((await as(outsider).get(`/groups/${a.id}`)).status).toBe(404);
      // Groups lists: the shared group is one of the invited member's groups.
      expect(ids(await as(bMaintainer).get('/groups'))).toEqual(
        expect.arrayContaining([a.id, aSub.id, aDeeper.id, b.id]),
      );
    });

    it('gives the lower of the member’s level and the share’s, on the group’s projects too', async () => {
      await as(owner).post(`/groups/${a.id}/share`).send({ group_id: b.id, group_access: 30 });
      // bMaintainer (40 in B) gets developer: makes a branch, may not change the project (maintainer).
      const branch = await as(bMaintainer)
        .post(`/projects/${project.id}/repository/branches`)
        .send({ branch: `topic-${unique()}`, ref: 'master' });
      expect(branch.status).toBe(201);
      const put = await as(bMaintainer).put(`/projects/${project.id}`).send({ description: 'not mine' });
      expect(put.status).toBe(403);
      // bGuest (10 in B) stays a guest: sees the project, not its code.
      expect((await as(bGuest).get(`/projects/${project.id}`)).status).toBe(200);
      expect((await as(bGuest).get(`/projects/${project.id}/repository/tree`)).status).toBe(403);
      expect((await as(bMaintainer).get(`/projects/${project.id}/repository/tree`)).status).toBe(200);
      // A share does not make anyone an owner of A: sharing on is the owners' (404 to others).
      const reshare = await as(bMaintainer).post(`/groups/${a.id}/share`).send({ group_id: b.id, group_access: 10 });
      expect(reshare.status).toBe(404);
    });

    it('ignores an expired share', async () => {
      await as(owner)
        .post(`/groups/${a.id}/share`)
        .send({ group_id: b.id, group_access: 40, expires_at: '2001-01-01' });
      expect((await as(owner).get(`/groups/${a.id}`)).body.shared_with_groups[0]).toMatchObject({
        group_id: b.id,
        expires_at: '2001-01-01',
      });
      expect((await as(bMaintainer).get(`/groups/${a.id}`)).status).toBe(404);
      expect((await as(bMaintainer).get(`/projects/${project.id}`)).status).toBe(404);
    });

    it('treats expires_at "" and null as no expiry (Terraform and python-gitlab send them)', async () => {
      const empty = await as(owner)
        .post(`/groups/${a.id}/share`)
        .send({ group_id: b.id, group_access: 20, expires_at: '' });
      expect(empty.status).toBe(201);
      expect(empty.body.shared_with_groups[0].expires_at).toBeNull();
      await as(owner).delete(`/groups/${a.id}/share/${b.id}`);
      const nul = await as(owner)
        .post(`/groups/${a.id}/share`)
        .send({ group_id: b.id, group_access: 20, expires_at: null });
      expect(nul.status).toBe(201);
      expect(nul.body.shared_with_groups[0].expires_at).toBeNull();
    });

    it('answers as GitLab to bad input, strangers and duplicates', async () => {
      const missing = await as(owner).post(`/groups/${a.id}/share`).send({ group_access: 30 });
      expect([missing.status, missing.body]).toEqual([400, { error: 'group_id is missing' }]);
      const noAccess = await as(owner).post(`/groups/${a.id}/share`).send({ group_id: b.id });
      expect([noAccess.status, noAccess.body]).toEqual([400, { error: 'group_access is missing' }]);
      const badLevel = await as(owner).post(`/groups/${a.id}/share`).send({ group_id: b.id, group_access: 35 });
      expect([badLevel.status, badLevel.body]).toEqual([400, { error: 'group_access does not have a valid value' }]);
      const badDate = await as(owner)
        .post(`/groups/${a.id}/share`)
        .send({ group_id: b.id, group_access: 30, expires_at: 'soon' });
      expect(badDate.status).toBe(400);
      const unknown = await as(owner).post(`/groups/${a.id}/share`).send({ group_id: 99999999, group_access: 30 });
      expect([unknown.status, unknown.body]).toEqual([404, GROUP_NOT_FOUND]);
      // A private group the owner of A cannot see is "not found" as any group would be.
      const hiddenOther = await createGroup(t, { visibility: 'private' }, outsider.token);
      const privateOther = await as(owner)
        .post(`/groups/${a.id}/share`)
        .send({ group_id: hiddenOther.id, group_access: 30 });
      expect([privateOther.status, privateOther.body]).toEqual([404, GROUP_NOT_FOUND]);
      // A maintainer of A, who sees both groups: GitLab's CreateService answers a bare Not Found.
      const maintainer = await as(aMaintainer).post(`/groups/${a.id}/share`).send({ group_id: b.id, group_access: 30 });
      expect([maintainer.status, maintainer.body]).toEqual([404, { message: 'Not Found' }]);
      const hidden = await as(outsider).post(`/groups/${a.id}/share`).send({ group_id: b.id, group_access: 30 });
      expect([hidden.status, hidden.body]).toEqual([404, GROUP_NOT_FOUND]);
      const anonymous = await client(t).post(`/groups/${a.id}/share`).send({ group_id: b.id, group_access: 30 });
      expect(anonymous.status).toBe(401);
      expect((await as(owner).post(`/groups/${a.id}/share`).send({ group_id: b.id, group_access: 30 })).status).toBe(
        201,
      );
      const before = await eventCount();
      const twice = await as(owner).post(`/groups/${a.id}/share`).send({ group_id: b.id, group_access: 40 });
      expect([twice.status, twice.body]).toEqual([
        409,
        { message: 'Shared group The group has already been shared with this group' },
      ]);
      expect(await eventCount()).toBe(before);
    });

    it('unshares: 204 for an owner, 403 for others who see the group, 404 without the link, 400 for a non-integer', async () => {
      await as(owner).post(`/groups/${a.id}/share`).send({ group_id: b.id, group_access: 30 });
      const maintainer = await as(aMaintainer).delete(`/groups/${a.id}/share/${b.id}`);
      expect([maintainer.status, maintainer.body]).toEqual([403, FORBIDDEN]);
      const hidden = await as(outsider).delete(`/groups/${a.id}/share/${b.id}`);
      expect([hidden.status, hidden.body]).toEqual([404, GROUP_NOT_FOUND]);
      const res = await as(owner).delete(`/groups/${a.id}/share/${b.id}`);
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expect((await as(owner).get(`/groups/${a.id}`)).body.shared_with_groups).toEqual([]);
      expect((await as(bMaintainer).get(`/projects/${project.id}`)).status).toBe(404);
      const again = await as(owner).delete(`/groups/${a.id}/share/${b.id}`);
      expect([again.status, again.body]).toEqual([404, { message: '404 Group Link Not Found' }]);
      const bad = await as(owner).delete(`/groups/${a.id}/share/foo`);
      expect(bad.status).toBe(400);
    });

    it('a link goes with the invited group when it is deleted', async () => {
      const c = await createGroup(t, { visibility: 'public' }, bOwner.token);
      await as(owner).post(`/groups/${a.id}/share`).send({ group_id: c.id, group_access: 30 });
      expect(
        (await as(owner).get(`/groups/${a.id}`)).body.shared_with_groups.map((l: { group_id: number }) => l.group_id),
      ).toEqual([c.id]);
      expect((await as(bOwner).delete(`/groups/${c.id}`)).status).toBe(204);
      expect((await as(owner).get(`/groups/${a.id}`)).body.shared_with_groups).toEqual([]);
      expect((await as(owner).delete(`/groups/${a.id}/share/${c.id}`)).status).toBe(404);
    });
  });

  describe('a Terraform gitlab_group_share_group, applied twice', () => {
    /** The provider's read: GET /groups/:id, the link whose group_id matches, or gone. */
    const read = async () => {
      const res = await as(owner).get(`/groups/${a.id}`);
      expect(res.status).toBe(200);
      const link = (res.body.shared_with_groups as { group_id: number }[]).find((l) => l.group_id === b.id);
      return link ?? null;
    };

    it('creates (expires_at ""), reads back the same state twice, deletes with 204, then reads nothing', async () => {
      const created = await as(owner)
        .post(`/groups/${a.id}/share`)
        .type('form')
        .send({ group_id: String(b.id), group_access: '30', expires_at: '' });
      expect(created.status).toBe(201);
      const first = await read();
      expect(first).toEqual({
        group_id: b.id,
        group_name: b.name,
        group_full_path: b.full_path,
        group_access_level: 30,
        expires_at: null,
      });
      const before = await eventCount();
      expect(await read()).toEqual(first);
      expect(await eventCount()).toBe(before);
      expect((await as(owner).delete(`/groups/${a.id}/share/${b.id}`)).status).toBe(204);
      expect(await read()).toBeNull();
    });
  });

  describe('access through a share of an ancestor, and shares do not chain', () => {
    it('a share of A reaches A/sub; the groups B is shared with pass nothing on', async () => {
      const c = await createGroup(t, { visibility: 'internal' }, outsider.token);
      // C is shared into B; B into A: C's members get B, not A.
      expect((await as(bOwner).post(`/groups/${b.id}/share`).send({ group_id: c.id, group_access: 30 })).status).toBe(
        201,
      );
      expect((await as(owner).post(`/groups/${a.id}/share`).send({ group_id: b.id, group_access: 40 })).status).toBe(
        201,
      );
      const ofB = await as(bOwner)
        .get(`/groups/${b.id}/members/all`)
        .query({ user_ids: [outsider.id] });
      expect(levels(ofB)).toEqual([[outsider.id, 30]]);
      expect((await as(outsider).get(`/groups/${a.id}`)).status).toBe(404);
      expect((await as(outsider).get(`/projects/${project.id}`)).status).toBe(404);
      const members = await as(owner).get(`/groups/${aSub.id}/members/all`);
      expect(levels(members)).toEqual(
        [
          [owner.id, 50],
          [aMaintainer.id, 40],
          [bOwner.id, 40],
          [bMaintainer.id, 40],
          [bGuest.id, 10],
        ].sort((x, y) => x[0] - y[0]),
      );
      await as(owner).delete(`/groups/${a.id}/share/${b.id}`);
      await as(bOwner).delete(`/groups/${b.id}/share/${c.id}`);
    });
  });

  describe('GET /groups/:id/descendant_groups', () => {
    it('lists every group below, at any depth, that the caller sees; the list’s parameters apply', async () => {
      const res = await as(owner).get(`/groups/${a.id}/descendant_groups`);
      expect(res.status).toBe(200);
      for (const g of res.body) expectShape(g, 'group');
      expect(ids(res).sort()).toEqual([aSub.id, aDeeper.id].sort());
      expect(res.headers['x-total']).toBe('2');
      expect(
        ids(
          await as(owner)
            .get(`/groups/${a.id}/descendant_groups`)
            .query({ skip_groups: [aSub.id] }),
        ),
      ).toEqual([aDeeper.id]);
      expect(ids(await as(owner).get(`/groups/${a.id}/descendant_groups`).query({ search: aDeeper.path }))).toEqual([
        aDeeper.id,
      ]);
      expect(ids(await as(owner).get(`/groups/${aDeeper.id}/descendant_groups`))).toEqual([]);
      expect((await as(outsider).get(`/groups/${a.id}/descendant_groups`)).status).toBe(404);
      expect((await client(t).get(`/groups/${a.id}/descendant_groups`)).status).toBe(404);
    });
  });

  describe('GET /groups/:id/members/all and /projects/:id/members/all', () => {
    it('lists each member once with the highest level, from the group and its ancestors; `all` is no user id', async () => {
      const both = await createUser(t);
      await addGroupMember(t, a.id, both.id, 30);
      await addGroupMember(t, aSub.id, both.id, 40);
      const res = await as(aMaintainer).get(`/groups/${aDeeper.id}/members/all`);
      expect(res.status).toBe(200);
      for (const m of res.body) expectShape(m, 'member');
      expect(levels(res)).toEqual(
        [
          [owner.id, 50],
          [aMaintainer.id, 40],
          [both.id, 40],
        ].sort((x, y) => x[0] - y[0]),
      );
      expect(res.headers['x-total']).toBe('3');
      // The direct list of the deepest group has only its creator.
      expect(levels(await as(owner).get(`/groups/${aDeeper.id}/members`))).toEqual([[owner.id, 50]]);
      const one = await as(owner).get(`/groups/${aDeeper.id}/members/all/${both.id}`);
      expect([one.status, one.body.id, one.body.access_level]).toEqual([200, both.id, 40]);
      const none = await as(owner).get(`/groups/${aDeeper.id}/members/all/${outsider.id}`);
      expect([none.status, none.body]).toEqual([404, { message: '404 Not found' }]);
      expect((await as(owner).get(`/groups/${aDeeper.id}/members/all/x`)).status).toBe(400);
      expect((await as(outsider).get(`/groups/${aDeeper.id}/members/all`)).status).toBe(404);
      await admin().delete(`/groups/${a.id}/members/${both.id}`);
      await admin().delete(`/groups/${aSub.id}/members/${both.id}`);
    });

    it('a project’s: its members, its groups’ and the shares’, capped by each share', async () => {
      const projectMember = await createUser(t);
      expect(
        (await as(owner).post(`/projects/${project.id}/members`).send({ user_id: projectMember.id, access_level: 20 }))
          .status,
      ).toBe(201);
      const linked = await createGroup(t, { visibility: 'internal' }, outsider.token);
      expect(
        (await as(owner).post(`/projects/${project.id}/share`).send({ group_id: linked.id, group_access: 20 })).status,
      ).toBe(201);
      await as(owner).post(`/groups/${a.id}/share`).send({ group_id: b.id, group_access: 30 });
      const res = await as(owner).get(`/projects/${project.id}/members/all`);
      expect(res.status).toBe(200);
      expect(levels(res)).toEqual(
        [
          [owner.id, 50],
          [aMaintainer.id, 40],
          [bOwner.id, 30],
          [bMaintainer.id, 30],
          [bGuest.id, 10],
          [outsider.id, 20],
          [projectMember.id, 20],
        ].sort((x, y) => x[0] - y[0]),
      );
      // The direct list is the project's own members only.
      expect(levels(await as(owner).get(`/projects/${project.id}/members`))).toEqual([[projectMember.id, 20]]);
      const one = await as(owner).get(`/projects/${project.id}/members/all/${bMaintainer.id}`);
      expect([one.status, one.body.access_level]).toEqual([200, 30]);
      expect((await as(owner).get(`/projects/${project.id}/members/all/999999`)).status).toBe(404);
      const filtered = await as(owner)
        .get(`/projects/${project.id}/members/all`)
        .query(`user_ids[]=${bGuest.id}&user_ids[]=${projectMember.id}`);
      expect(levels(filtered)).toEqual(
        [
          [bGuest.id, 10],
          [projectMember.id, 20],
        ].sort((x, y) => x[0] - y[0]),
      );
      await as(owner).delete(`/groups/${a.id}/share/${b.id}`);
      await as(owner).delete(`/projects/${project.id}/share/${linked.id}`);
      await as(owner).delete(`/projects/${project.id}/members/${projectMember.id}`);
    });

    it('filters direct lists with user_ids[] (a JSON array and a comma list too); a non-integer is 400', async () => {
      const q = (query: string | object) => as(owner).get(`/groups/${a.id}/members`).query(query);
      expect(levels(await q(`user_ids[]=${aMaintainer.id}`))).toEqual([[aMaintainer.id, 40]]);
      expect(levels(await q({ user_ids: `${aMaintainer.id},${owner.id}` })).sort()).toEqual(
        [
          [owner.id, 50],
          [aMaintainer.id, 40],
        ].sort(),
      );
      expect(levels(await q(`user_ids[]=${outsider.id}`))).toEqual([]);
      const bad = await q('user_ids[]=x');
      expect([bad.status, bad.body]).toEqual([400, { error: 'user_ids is invalid' }]);
    });
  });

  describe('group settings clients write and read back', () => {
    const SETTINGS = {
      project_creation_level: 'developer',
      subgroup_creation_level: 'maintainer',
      default_branch_protection: 1,
      require_two_factor_authentication: true,
      two_factor_grace_period: 24,
      auto_devops_enabled: true,
      emails_disabled: true,
      mentions_disabled: true,
      share_with_group_lock: true,
      prevent_forking_outside_group: true,
    };

    it('POST stores them and answers them; GET and the list show them', async () => {
      const s = unique();
      const res = await as(owner)
        .post('/groups')
        .send({ name: `Set ${s}`, path: `set-${s}`, ...SETTINGS });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject(SETTINGS);
      expect((await as(owner).get(`/groups/${res.body.id}`)).body).toMatchObject(SETTINGS);
      const listed = (
        await as(owner)
          .get('/groups')
          .query({ search: `set-${s}` })
      ).body;
      expect(listed).toHaveLength(1);
      expectShape(listed[0], 'group');
      expect(listed[0]).toMatchObject(SETTINGS);
    });

    it('refuses values outside GitLab’s lists with Grape’s words', async () => {
      const res = await as(owner)
        .put(`/groups/${a.id}`)
        .send({ project_creation_level: 'anyone', default_branch_protection: 9 });
      expect([res.status, res.body]).toEqual([
        400,
        {
          error:
            'project_creation_level does not have a valid value, default_branch_protection does not have a valid value',
        },
      ]);
    });

    it('a Terraform gitlab_group create, then an update of project_creation_level applied twice: no drift, no second event', async () => {
      const s = unique();
      // The provider's create (go-gitlab sends JSON): the schema's defaults are always sent.
      const created = await as(owner)
        .post('/groups')
        .send({
          name: `Tf ${s}`,
          path: `tf-${s}`,
          lfs_enabled: true,
          request_access_enabled: false,
          visibility: 'private',
          share_with_group_lock: false,
          two_factor_grace_period: 48,
          project_creation_level: 'maintainer',
          subgroup_creation_level: 'owner',
          default_branch_protection: 2,
          require_two_factor_authentication: false,
          auto_devops_enabled: false,
          emails_disabled: false,
          mentions_disabled: false,
        });
      expect(created.status).toBe(201);
      const id = created.body.id as number;
      const state = (g: Record<string, unknown>) => ({
        project_creation_level: g.project_creation_level,
        subgroup_creation_level: g.subgroup_creation_level,
        default_branch_protection: g.default_branch_protection,
        require_two_factor_authentication: g.require_two_factor_authentication,
        two_factor_grace_period: g.two_factor_grace_period,
        auto_devops_enabled: g.auto_devops_enabled,
        emails_disabled: g.emails_disabled,
        mentions_disabled: g.mentions_disabled,
        share_with_group_lock: g.share_with_group_lock,
        lfs_enabled: g.lfs_enabled,
        request_access_enabled: g.request_access_enabled,
        visibility: g.visibility,
        parent_id: g.parent_id,
      });
      const read = async () => state((await as(owner).get(`/groups/${id}`)).body);
      expect(await read()).toEqual({
        project_creation_level: 'maintainer',
        subgroup_creation_level: 'owner',
        default_branch_protection: 2,
        require_two_factor_authentication: false,
        two_factor_grace_period: 48,
        auto_devops_enabled: false,
        emails_disabled: false,
        mentions_disabled: false,
        share_with_group_lock: false,
        lfs_enabled: true,
        request_access_enabled: false,
        visibility: 'private',
        parent_id: null,
      });
      // The update: the changed field, and `visibility` always (the provider's workaround for gitlab-ce#38459).
      const update = () =>
        as(owner).put(`/groups/${id}`).send({ visibility: 'private', project_creation_level: 'developer' });
      const first = await update();
      expect(first.status).toBe(200);
      const afterFirst = await read();
      expect(afterFirst.project_creation_level).toBe('developer');
      const before = await eventCount();
      const second = await update();
      expect(second.status).toBe(200);
      expect(state(second.body)).toEqual(afterFirst);
      expect(await read()).toEqual(afterFirst);
      expect(await eventCount()).toBe(before);
    });

    it('enforces project_creation_level and subgroup_creation_level', async () => {
      const g = await createGroup(t, { visibility: 'private' }, owner.token);
      const developer = await createUser(t);
      await addGroupMember(t, g.id, developer.id, 30);
      await addGroupMember(t, g.id, aMaintainer.id, 40);
      const newProject = (u: SeededUser) =>
        as(u)
          .post('/projects')
          .send({ name: `P ${unique()}`, namespace_id: g.id });
      const newSubgroup = (u: SeededUser) =>
        as(u)
          .post('/groups')
          .send({ name: `S ${unique()}`, path: `s-${unique()}`, parent_id: g.id });
      // Defaults: maintainers create projects, owners subgroups.
      expect((await newProject(developer)).status).toBe(400);
      expect((await newProject(aMaintainer)).status).toBe(201);
      expect((await newSubgroup(aMaintainer)).status).toBe(403);
      await as(owner)
        .put(`/groups/${g.id}`)
        .send({ project_creation_level: 'developer', subgroup_creation_level: 'maintainer' });
      expect((await newProject(developer)).status).toBe(201);
      expect((await newSubgroup(aMaintainer)).status).toBe(201);
      expect((await newSubgroup(developer)).status).toBe(403);
      await as(owner).put(`/groups/${g.id}`).send({ project_creation_level: 'noone' });
      const refused = await newProject(owner);
      expect([refused.status, refused.body]).toEqual([400, { message: { namespace: ['is not valid'] } }]);
      expect(
        (
          await admin()
            .post('/projects')
            .send({ name: `P ${unique()}`, namespace_id: g.id })
        ).status,
      ).toBe(201);
    });
  });

  describe('POST /groups/:id/transfer', () => {
    it('moves a group with what it holds under a new parent and to the top level; paths follow', async () => {
      const from = await createGroup(t, { visibility: 'private' }, owner.token);
      const to = await createGroup(t, { visibility: 'private' }, owner.token);
      const moving = await createGroup(t, { visibility: 'private', parent_id: from.id }, owner.token);
      const inner = await createGroup(t, { visibility: 'private', parent_id: moving.id }, owner.token);
      const p = await createProject(t, { namespace_id: inner.id, visibility: 'private' }, owner.token);
      const res = await as(owner).post(`/groups/${moving.id}/transfer`).send({ group_id: to.id });
      expect(res.status).toBe(201);
      expectShape(res.body, 'group-detail');
      expect(res.body).toMatchObject({
        id: moving.id,
        parent_id: to.id,
        full_path: `${to.full_path}/${moving.path}`,
        web_url: `${host}/groups/${to.full_path}/${moving.path}`,
      });
      expect((await as(owner).get(`/groups/${inner.id}`)).body.full_path).toBe(
        `${to.full_path}/${moving.path}/${inner.path}`,
      );
      expect((await as(owner).get(`/projects/${p.id}`)).body.path_with_namespace).toBe(
        `${to.full_path}/${moving.path}/${inner.path}/${p.path}`,
      );
      expect(ids(await as(owner).get(`/groups/${to.id}/descendant_groups`)).sort()).toEqual(
        [moving.id, inner.id].sort(),
      );
      expect(ids(await as(owner).get(`/groups/${from.id}/descendant_groups`))).toEqual([]);
      // Membership now comes from the new ancestors: a member of `to` reaches the project, one of `from` no longer.
      const fromMember = await createUser(t);
      const toMember = await createUser(t);
      await addGroupMember(t, from.id, fromMember.id, 30);
      await addGroupMember(t, to.id, toMember.id, 30);
      expect((await as(fromMember).get(`/projects/${p.id}`)).status).toBe(404);
      expect((await as(toMember).get(`/projects/${p.id}`)).status).toBe(200);
      // To the top level (no group_id).
      const top = await as(owner).post(`/groups/${moving.id}/transfer`);
      expect(top.status).toBe(201);
      expect(top.body).toMatchObject({ parent_id: null, full_path: moving.path });
      expect((await as(owner).get(`/projects/${p.id}`)).body.path_with_namespace).toBe(
        `${moving.path}/${inner.path}/${p.path}`,
      );
      expect((await as(toMember).get(`/projects/${p.id}`)).status).toBe(404);
    });

    it('refuses as GitLab: 400 Transfer failed with its reasons, 403 for non-owners, 404 for what is unseen', async () => {
      const root = await createGroup(t, { visibility: 'private' }, owner.token);
      const child = await createGroup(t, { visibility: 'private', parent_id: root.id }, owner.token);
      const grandchild = await createGroup(t, { visibility: 'private', parent_id: child.id }, owner.token);
      const failed = async (id: number, body: object, reason: string) => {
        const res = await as(owner).post(`/groups/${id}/transfer`).send(body);
        expect([res.status, res.body]).toEqual([400, { message: `Transfer failed: ${reason}` }]);
      };
      await failed(root.id, {}, 'Group is already a root group.');
      await failed(child.id, { group_id: root.id }, 'Group is already associated to the parent group.');
      await failed(root.id, { group_id: grandchild.id }, 'Cannot transfer group to one of its subgroup.');
      // A sibling with the same path under the target, and a project with it.
      const target = await createGroup(t, { visibility: 'private' }, owner.token);
      await as(owner).post('/groups').send({ name: 'Clash', path: child.path, parent_id: target.id });
      await failed(
        child.id,
        { group_id: target.id },
        'The parent group already has a subgroup or a project with the same path.',
      );
      const other = await createGroup(t, { visibility: 'private' }, owner.token);
      await createProject(t, { namespace_id: other.id, path: grandchild.path, name: grandchild.path }, owner.token);
      await failed(
        grandchild.id,
        { group_id: other.id },
        'The parent group already has a subgroup or a project with the same path.',
      );
      // A public group into a private one: GitLab lowers it, Lode refuses (see the README).
      const open = await createGroup(t, { visibility: 'public' }, owner.token);
      await failed(
        open.id,
        { group_id: target.id },
        'public is not allowed since the parent group has a private visibility.',
      );
      // Permissions: a maintainer of the group 403; the caller's rights in the target.
      await addGroupMember(t, child.id, aMaintainer.id, 40);
      const maintainer = await as(aMaintainer).post(`/groups/${child.id}/transfer`).send({ group_id: target.id });
      expect([maintainer.status, maintainer.body]).toEqual([403, FORBIDDEN]);
      const mine = await createGroup(t, { visibility: 'private' }, aMaintainer.token);
      const notThere = await as(aMaintainer).post(`/groups/${mine.id}/transfer`).send({ group_id: root.id });
      expect([notThere.status, notThere.body]).toEqual([
        400,
        { message: "Transfer failed: You don't have enough permissions." },
      ]);
      const privateOne = await createGroup(t, { visibility: 'private' }, outsider.token);
      const unseen = await as(aMaintainer).post(`/groups/${mine.id}/transfer`).send({ group_id: privateOne.id });
      expect([unseen.status, unseen.body]).toEqual([404, GROUP_NOT_FOUND]);
      expect((await as(outsider).post(`/groups/${child.id}/transfer`).send({})).status).toBe(404);
      expect((await as(owner).post(`/groups/${child.id}/transfer`).send({ group_id: 'x' })).status).toBe(400);
      // Nothing moved.
      expect((await as(owner).get(`/groups/${grandchild.id}`)).body.full_path).toBe(
        `${root.path}/${child.path}/${grandchild.path}`,
      );
    });

    it('python-gitlab group.transfer and gitbeaker Groups.transfer', async () => {
      const parent = await createGroup(t, { visibility: 'private' }, owner.token);
      const g = await createGroup(t, { visibility: 'private' }, owner.token);
      await runPython(
        `
import sys, warnings
import gitlab
warnings.simplefilter("ignore")
gl = gitlab.Gitlab(sys.argv[1], private_token=sys.argv[2])
gl.groups.get(int(sys.argv[3])).transfer(int(sys.argv[4]))
`,
        [host, owner.token, String(g.id), String(parent.id)],
      );
      expect((await as(owner).get(`/groups/${g.id}`)).body.parent_id).toBe(parent.id);
      const gb = await import('@gitbeaker/rest');
      await new gb.Gitlab({ host, token: owner.token }).Groups.transfer(g.id);
      expect((await as(owner).get(`/groups/${g.id}`)).body).toMatchObject({ parent_id: null, full_path: g.path });
    });
  });

  describe('GET /projects/:id/groups', () => {
    it('lists the project’s group and its ancestors; with_shared adds its shares; the filters apply', async () => {
      const withLinks = await createProject(t, { namespace_id: aDeeper.id, visibility: 'private' }, owner.token);
      const dev = await createGroup(t, { visibility: 'private' }, owner.token);
      const guests = await createGroup(t, { visibility: 'private' }, outsider.token);
      await as(owner).post(`/projects/${withLinks.id}/share`).send({ group_id: dev.id, group_access: 30 });
      await as(outsider).post(`/groups/${guests.id}/members`).send({ user_id: owner.id, access_level: 10 });
      await as(owner).post(`/projects/${withLinks.id}/share`).send({ group_id: guests.id, group_access: 10 });
      await as(outsider).delete(`/groups/${guests.id}/members/${owner.id}`);
      const list = (query: object, who = owner) => as(who).get(`/projects/${withLinks.id}/groups`).query(query);
      const res = await list({});
      expect(res.status).toBe(200);
      for (const g of res.body) expectShape(g, 'public-group-details');
      expect(res.body[0]).toEqual({
        id: a.id,
        web_url: `${host}/groups/${a.full_path}`,
        name: a.name,
        avatar_url: null,
        full_name: a.name,
        full_path: a.full_path,
      });
      expect(ids(res)).toEqual([a.id, aSub.id, aDeeper.id]);
      expect(res.headers['x-total']).toBe('3');
      expect(ids(await list({ with_shared: true }))).toEqual([a.id, aSub.id, aDeeper.id, dev.id, guests.id]);
      expect(ids(await list({ with_shared: true, shared_min_access_level: 30 }))).toEqual([
        a.id,
        aSub.id,
        aDeeper.id,
        dev.id,
      ]);
      // The owner no longer sees `guests`: only the shared groups the caller sees.
      expect(ids(await list({ with_shared: true, shared_visible_only: true }))).toEqual([
        a.id,
        aSub.id,
        aDeeper.id,
        dev.id,
      ]);
      expect(ids(await list({ with_shared: true, skip_groups: [aSub.id, dev.id] }))).toEqual([
        a.id,
        aDeeper.id,
        guests.id,
      ]);
      expect(ids(await list({ search: aDeeper.path }))).toEqual([aDeeper.id]);
      expect((await list({ shared_min_access_level: 35 })).status).toBe(400);
      expect((await list({}, await createUser(t))).status).toBe(404);
      // A personal project has no groups.
      const personal = await createProject(t, {}, outsider.token);
      expect((await as(outsider).get(`/projects/${personal.id}/groups`)).body).toEqual([]);
      const py = await runPython(
        `
import json, sys, warnings
import gitlab
warnings.simplefilter("ignore")
gl = gitlab.Gitlab(sys.argv[1], private_token=sys.argv[2])
project = gl.projects.get(int(sys.argv[3]))
print(json.dumps([g.id for g in project.groups.list(with_shared=True, shared_min_access_level=30, get_all=True)]))
`,
        [host, owner.token, String(withLinks.id)],
      );
      expect(JSON.parse(py)).toEqual([a.id, aSub.id, aDeeper.id, dev.id]);
    });
  });

  describe('python-gitlab 3.12', () => {
    it('group.share/unshare, descendant_groups, members_all of groups and projects', async () => {
      const both = await createUser(t);
      await addGroupMember(t, aSub.id, both.id, 20);
      const out = JSON.parse(
        await runPython(PYTHON_SHARES, [
          host,
          owner.token,
          String(aSub.id),
          String(b.id),
          String(project.id),
          String(both.id),
        ]),
      );
      expect(out.after_share).toEqual([[b.id, 30, null]]);
      expect(out.reread).toEqual([b.id]);
      expect(out.again).toEqual([409, 'Shared group The group has already been shared with this group']);
      expect(out.descendants).toEqual([aDeeper.full_path]);
      const expected = [
        [owner.id, 50],
        [aMaintainer.id, 40],
        [bOwner.id, 30],
        [bMaintainer.id, 30],
        [bGuest.id, 10],
        [both.id, 20],
      ].sort((x, y) => x[0] - y[0]);
      expect(out.members_all).toEqual(expected);
      expect(out.member_all).toBe(20);
      expect(out.project_members_all).toEqual(expected);
      expect(out.missing).toBe(404);
      expect(out.after_unshare).toEqual([]);
      expect(out.unshare_again).toEqual([404, '404 Group Link Not Found']);
      await admin().delete(`/groups/${aSub.id}/members/${both.id}`);
    });
  });

  describe('gitbeaker', () => {
    let api: InstanceType<typeof Gitlab>;

    beforeAll(async () => {
      const gb = await import('@gitbeaker/rest');
      api = new gb.Gitlab({ host, token: owner.token });
    });

    it('Groups.share/unshare/allDescendantGroups, GroupMembers and ProjectMembers with includeInherited', async () => {
      const shared = await api.Groups.share(a.id, b.id, 20, { expiresAt: '2099-12-31' });
      expect(shared.shared_with_groups).toEqual([
        {
          group_id: b.id,
          group_name: b.name,
          group_full_path: b.full_path,
          group_access_level: 20,
          expires_at: '2099-12-31',
        },
      ]);
      expect((await api.Groups.show(a.id)).shared_with_groups).toEqual(shared.shared_with_groups);
      const descendants = await api.Groups.allDescendantGroups(a.id, {});
      expect(descendants.map((g) => g.id).sort()).toEqual([aSub.id, aDeeper.id].sort());
      const inherited = await api.GroupMembers.all(aDeeper.id, {
        includeInherited: true,
        userIds: [bMaintainer.id, owner.id],
      });
      expect(inherited.map((m) => [m.id, m.access_level]).sort()).toEqual(
        [
          [owner.id, 50],
          [bMaintainer.id, 20],
        ].sort(),
      );
      const one = await api.GroupMembers.show(aDeeper.id, bGuest.id, { includeInherited: true });
      expect(one.access_level).toBe(10);
      const projectInherited = await api.ProjectMembers.all(project.id, { includeInherited: true });
      expect(projectInherited.map((m) => m.id)).toEqual(expect.arrayContaining([owner.id, bOwner.id, bGuest.id]));
      await api.Groups.unshare(a.id, b.id, {});
      expect((await api.Groups.show(a.id)).shared_with_groups).toEqual([]);
    });
  });
});
