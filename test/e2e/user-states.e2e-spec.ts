import type { Gitlab } from '@gitbeaker/rest' with { 'resolution-mode': 'import' };
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expectShape } from '../contract/shape';
import { tempDirs } from '../support/git';
import { runPython } from '../support/python-gitlab';
import { createUser, type SeededUser } from '../support/seed';
import { freePort, startTestApp, type TestApp } from '../support/test-app';

/**
 * A user's account states (GitLab 12.4's activate and deactivate, 14.3's ban and unban) and what each
 * allows; identities removed; the administrators' `note`; SSH keys read one by one, found by id or
 * fingerprint (`/keys`), and their expiry, enforced over git's SSH. Through python-gitlab 3.12 and
 * gitbeaker's own resource methods, plain HTTP for the statuses and bodies, and real `ssh`.
 */

/** Runs a command and answers its status and output; never throws (refusals are asserted). */
function run(file: string, args: string[], env: Record<string, string> = {}): Promise<{ status: number; out: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { env: { ...process.env, ...env }, timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ status: err ? (typeof err.code === 'number' ? err.code : -1) : 0, out: `${stdout}${stderr}` }),
    );
  });
}

const PYTHON_STATES = `
import json, sys, warnings
import gitlab
warnings.simplefilter("ignore")
url, token, user_id = sys.argv[1], sys.argv[2], int(sys.argv[3])
gl = gitlab.Gitlab(url, private_token=token)
user = gl.users.get(user_id)
out = {}
out["deactivate"] = [user.deactivate(), user.state, gl.users.get(user_id).state]
out["activate"] = [user.activate(), user.state, gl.users.get(user_id).state]
out["ban"] = [user.ban(), user.state, gl.users.get(user_id).state]
try:
    user.deactivate()
    out["deactivate_banned"] = None
except gitlab.exceptions.GitlabDeactivateError as e:
    out["deactivate_banned"] = [e.response_code, e.error_message]
out["unban"] = [user.unban(), user.state, gl.users.get(user_id).state]
try:
    user.unban()
    out["unban_active"] = None
except gitlab.exceptions.GitlabUnbanError as e:
    out["unban_active"] = [e.response_code, e.error_message]
print(json.dumps(out))
`;

const PYTHON_KEYS = `
import json, sys, warnings
import gitlab
warnings.simplefilter("ignore")
url, token, user_id, key_id, md5, sha256 = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6]
gl = gitlab.Gitlab(url, private_token=token)
out = {}
k = gl.keys.get(key_id)
out["by_id"] = [k.id, k.title, k.user["id"]]
out["by_md5"] = gl.keys.get(fingerprint=md5).id
out["by_sha256"] = gl.keys.get(fingerprint=sha256).id
user = gl.users.get(user_id)
own = user.keys.get(key_id)
out["user_key"] = [own.id, own.title, own.expires_at]
created = user.keys.create({"title": "py", "key": sys.argv[7], "expires_at": "2999-01-31"})
out["created"] = [created.title, created.expires_at]
try:
    gl.keys.get(fingerprint="SHA256:" + "A" * 43)
    out["missing"] = None
except gitlab.exceptions.GitlabHttpError as e:
    out["missing"] = [e.response_code, e.error_message]
print(json.dumps(out))
`;

const PYTHON_STATUS = `
import json, sys, warnings
import gitlab
warnings.simplefilter("ignore")
url, token, user_id = sys.argv[1], sys.argv[2], int(sys.argv[3])
gl = gitlab.Gitlab(url, private_token=token)
gl.auth()
status = gl.user.status.get()
out = {"before": [status.emoji, status.message]}
status.emoji = "coffee"
status.message = "Brewing"
status.save()
mine = gl.user.status.get()
out["after"] = [mine.emoji, mine.message, mine.availability]
theirs = gl.users.get(user_id, lazy=True).status.get()
out["via_user"] = [theirs.emoji, theirs.message]
print(json.dumps(out))
`;

const PYTHON_MEMBERSHIPS = `
import json, sys, warnings
import gitlab
warnings.simplefilter("ignore")
url, token, user_id = sys.argv[1], sys.argv[2], int(sys.argv[3])
gl = gitlab.Gitlab(url, private_token=token)
user = gl.users.get(user_id, lazy=True)
row = lambda m: [m.source_type, m.source_id, m.source_name, m.access_level]
print(json.dumps({"all": [row(m) for m in user.memberships.list(get_all=True)],
                  "projects": [row(m) for m in user.memberships.list(type="Project")]}))
`;

describe('user states, identities, notes and SSH keys', () => {
  let t: TestApp;
  let host: string;
  let viewer: SeededUser;
  let gb: typeof import('@gitbeaker/rest', { with: { 'resolution-mode': 'import' } });
  let api: InstanceType<typeof Gitlab<false>>;
  const tmp = tempDirs();
  let keyDir: string;

  const as = (token: string) => ({
    get: (path: string) => t.http().get(`/api/v4${path}`).set('PRIVATE-TOKEN', token),
    post: (path: string) => t.http().post(`/api/v4${path}`).set('PRIVATE-TOKEN', token),
    put: (path: string) => t.http().put(`/api/v4${path}`).set('PRIVATE-TOKEN', token),
    patch: (path: string) => t.http().patch(`/api/v4${path}`).set('PRIVATE-TOKEN', token),
    delete: (path: string) => t.http().delete(`/api/v4${path}`).set('PRIVATE-TOKEN', token),
  });
  const admin = () => as(t.rootToken);
  const stateOf = async (id: number) => (await admin().get(`/users/${id}`)).body.state as string;

  async function newKey(name: string): Promise<{ path: string; pub: string; md5: string; sha256: string }> {
    const path = join(keyDir, name);
    const made = await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', name, '-f', path]);
    if (made.status !== 0) throw new Error(made.out);
    const md5 = (await run('ssh-keygen', ['-l', '-E', 'md5', '-f', `${path}.pub`])).out.split(' ')[1];
    const sha256 = (await run('ssh-keygen', ['-l', '-E', 'sha256', '-f', `${path}.pub`])).out.split(' ')[1];
    return { path, pub: readFileSync(`${path}.pub`, 'utf8').trim(), md5: md5.replace(/^MD5:/, ''), sha256 };
  }

  beforeAll(async () => {
    const port = await freePort();
    host = `http://127.0.0.1:${port}`;
    t = await startTestApp({ externalUrl: host });
    await t.app.listen(port, '127.0.0.1');
    viewer = await createUser(t, { name: 'Viewer Person' });
    gb = await import('@gitbeaker/rest');
    api = new gb.Gitlab({ host, token: t.rootToken });
    keyDir = tmp.make();
  });
  afterAll(async () => {
    tmp.removeAll();
    await t?.close();
  });

  describe('activate, deactivate, ban and unban', () => {
    it('deactivates a user never active, refuses their token and git, and activates them again', async () => {
      const u = await createUser(t);
      // A user whose last activity is older than 90 days counts as dormant; one never active too.
      await t.db.query(`update users set last_activity_on = null where id = $1`, [u.id]);
      const res = await admin().post(`/users/${u.id}/deactivate`);
      expect([res.status, res.body]).toEqual([201, true]);
      expect(await stateOf(u.id)).toBe('deactivated');
      // Already deactivated: GitLab's `break` answers null.
      const again = await admin().post(`/users/${u.id}/deactivate`);
      expect([again.status, again.text]).toEqual([201, 'null']);

      // GitLab refuses a deactivated user's API calls (UserAccessDeniedReason); no API call reactivates them.
      const own = await as(u.token).get('/user');
      expect(own.status).toBe(403);
      expect(await stateOf(u.id)).toBe('deactivated');
      const git = await run('git', ['ls-remote', `http://git:${u.token}@${host.slice(7)}/${u.username}/none.git`]);
      expect(git.status).not.toBe(0);
      expect(git.out).toContain('403');

      // Unblock is not the way back; activate is.
      const unblock = await admin().post(`/users/${u.id}/unblock`);
      expect([unblock.status, unblock.body]).toEqual([
        403,
        { message: '403 Forbidden - Deactivated users cannot be unblocked by the API' },
      ]);
      const activated = await admin().post(`/users/${u.id}/activate`);
      expect([activated.status, activated.body]).toEqual([201, true]);
      expect((await as(u.token).get('/user')).status).toBe(200);
      // Active already: the state machine's false, still 201.
      const noop = await admin().post(`/users/${u.id}/activate`);
      expect([noop.status, noop.body]).toEqual([201, false]);
    });

    it('refuses to deactivate a user active in the last 90 days', async () => {
      const u = await createUser(t);
      await as(u.token).get('/user'); // records today's activity
      const res = await admin().post(`/users/${u.id}/deactivate`);
      expect(res.status).toBe(403);
      expect(res.body).toEqual({
        message:
          '403 Forbidden - The user you are trying to deactivate has been active in the past 90 days and cannot be deactivated',
      });
      expect(await stateOf(u.id)).toBe('active');
      await t.db.query(`update users set last_activity_on = current_date - 91 where id = $1`, [u.id]);
      expect((await admin().post(`/users/${u.id}/deactivate`)).status).toBe(201);
    });

    it('answers a blocked user with GitLab 14.x texts, and 404 or 403 to the wrong callers', async () => {
      const u = await createUser(t);
      expect((await admin().post(`/users/${u.id}/block`)).status).toBe(201);
      expect((await admin().post(`/users/${u.id}/deactivate`)).body).toEqual({
        message: '403 Forbidden - A blocked user cannot be deactivated by the API',
      });
      expect((await admin().post(`/users/${u.id}/activate`)).body).toEqual({
        message: '403 Forbidden - A blocked user must be unblocked to be activated',
      });
      // Ban and unban answer their services' messages as they are (render_api_error!).
      const ban = await admin().post(`/users/${u.id}/ban`);
      expect([ban.status, ban.body]).toEqual([403, { message: 'You cannot ban blocked users.' }]);
      const unban = await admin().post(`/users/${u.id}/unban`);
      expect([unban.status, unban.body]).toEqual([403, { message: 'You cannot unban blocked users.' }]);

      for (const action of ['activate', 'deactivate', 'ban', 'unban']) {
        const missing = await admin().post(`/users/999999/${action}`);
        expect([action, missing.status, missing.body]).toEqual([action, 404, { message: '404 User Not Found' }]);
        const other = await as(viewer.token).post(`/users/${u.id}/${action}`);
        expect([action, other.status, other.body]).toEqual([action, 403, { message: '403 Forbidden' }]);
        const anonymous = await t.http().post(`/api/v4/users/${u.id}/${action}`);
        expect([action, anonymous.status]).toEqual([action, 401]);
      }
    });

    it('bans a user, who then acts as blocked, and unbans them (state banned in the user JSON)', async () => {
      const u = await createUser(t);
      const res = await admin().post(`/users/${u.id}/ban`);
      expect([res.status, res.body]).toEqual([201, true]);
      const shown = await admin().get(`/users/${u.id}`);
      expect(shown.body.state).toBe('banned');
      expectShape(shown.body, 'user-admin');
      const own = await as(u.token).get('/user');
      expect([own.status, own.body]).toEqual([403, { message: '403 Forbidden - User is blocked' }]);
      expect((await admin().post(`/users/${u.id}/ban`)).body).toEqual({ message: 'You cannot ban banned users.' });
      const unban = await admin().post(`/users/${u.id}/unban`);
      expect([unban.status, unban.body]).toEqual([201, true]);
      expect((await as(u.token).get('/user')).status).toBe(200);
    });

    it("python-gitlab 3.12's user.deactivate/activate/ban/unban", async () => {
      const u = await createUser(t);
      const out = JSON.parse(await runPython(PYTHON_STATES, [host, t.rootToken, String(u.id)]));
      expect(out).toEqual({
        deactivate: [true, 'deactivated', 'deactivated'],
        activate: [true, 'active', 'active'],
        ban: [true, 'banned', 'banned'],
        deactivate_banned: [403, '403 Forbidden - A blocked user cannot be deactivated by the API'],
        unban: [true, 'active', 'active'],
        unban_active: [403, 'You cannot unban active users.'],
      });
    });

    it("gitbeaker's Users.deactivate/activate/ban/unban", async () => {
      const u = await createUser(t);
      await api.Users.deactivate(u.id);
      expect(await stateOf(u.id)).toBe('deactivated');
      await api.Users.activate(u.id);
      expect(await stateOf(u.id)).toBe('active');
      await api.Users.ban(u.id);
      expect(await stateOf(u.id)).toBe('banned');
      await expect(api.Users.activate(u.id)).rejects.toMatchObject({ cause: { response: { status: 403 } } });
      await api.Users.unban(u.id);
      expect(await stateOf(u.id)).toBe('active');
    });
  });

  describe('identities and the note', () => {
    it('removes an identity by provider (204), then 404 Identity; gitbeaker too', async () => {
      const u = await createUser(t, { provider: 'github', extern_uid: 'gh-1' });
      await admin().put(`/users/${u.id}`).send({ provider: 'ldapmain', extern_uid: 'uid=x' }).expect(200);
      const removed = await admin().delete(`/users/${u.id}/identities/github`);
      expect([removed.status, removed.text]).toEqual([204, '']);
      expect((await admin().get(`/users/${u.id}`)).body.identities).toEqual([
        { provider: 'ldapmain', extern_uid: 'uid=x' },
      ]);
      const again = await admin().delete(`/users/${u.id}/identities/github`);
      expect([again.status, again.body]).toEqual([404, { message: '404 Identity Not Found' }]);
      expect((await admin().delete(`/users/999999/identities/github`)).body).toEqual({ message: '404 User Not Found' });
      expect((await as(viewer.token).delete(`/users/${u.id}/identities/ldapmain`)).status).toBe(403);
      await api.Users.removeAuthenticationIdentity(u.id, 'ldapmain');
      expect((await admin().get(`/users/${u.id}`)).body.identities).toEqual([]);
    });

    it('keeps the note, shown to administrators only; an update of fields Lode does not keep is no 400', async () => {
      const created = await admin().post('/users').send({
        username: 'noted',
        email: 'noted@example.com',
        name: 'Noted',
        password: 'secret-password',
        note: 'vip',
      });
      expect(created.status).toBe(201);
      const id = created.body.id as number;
      expect((await admin().get(`/users/${id}`)).body.note).toBe('vip');
      expect((await as(viewer.token).get(`/users/${id}`)).body).not.toHaveProperty('note');
      const put = await admin().put(`/users/${id}`).send({ note: 'left the team' });
      expect(put.status).toBe(200);
      expect((await admin().get(`/users/${id}`)).body.note).toBe('left the team');
      // Terraform and newer clients send fields of later GitLab versions: accepted, nothing stored.
      const other = await admin().put(`/users/${id}`).send({ twitter: 'noted', pronouns: 'they/them' });
      expect(other.status).toBe(200);
      expect(other.body).not.toHaveProperty('twitter');
      const none = await admin().put(`/users/${id}`).send({ unknown_thing: 1 });
      expect(none.status).toBe(400);
    });
  });

  describe('memberships', () => {
    it("lists a user's direct memberships of groups and projects for administrators (12.8)", async () => {
      const owner = await createUser(t);
      const u = await createUser(t);
      const group = await as(owner.token)
        .post('/groups')
        .send({ name: 'Crew', path: `crew-${u.id}` });
      expect(group.status).toBe(201);
      const sub = await as(owner.token).post('/groups').send({ name: 'Deck', path: 'deck', parent_id: group.body.id });
      expect(sub.status).toBe(201);
      const project = await as(owner.token).post('/projects').send({ name: 'Ship' });
      expect(project.status).toBe(201);
      await as(owner.token)
        .post(`/groups/${group.body.id}/members`)
        .send({ user_id: u.id, access_level: 30 })
        .expect(201);
      await as(owner.token)
        .post(`/projects/${project.body.id}/members`)
        .send({ user_id: u.id, access_level: 20 })
        .expect(201);

      const all = await admin().get(`/users/${u.id}/memberships`);
      expect(all.status).toBe(200);
      expect(all.headers['x-total']).toBe('2');
      // Direct memberships only: the subgroup, inherited, is not listed.
      expect(all.body).toEqual([
        { source_id: group.body.id, source_name: 'Crew', source_type: 'Namespace', access_level: 30 },
        { source_id: project.body.id, source_name: 'Ship', source_type: 'Project', access_level: 20 },
      ]);
      const projects = await admin().get(`/users/${u.id}/memberships?type=Project`);
      expect(projects.body.map((m: { source_type: string }) => m.source_type)).toEqual(['Project']);
      const groups = await admin().get(`/users/${u.id}/memberships?type=Namespace&per_page=1`);
      expect([groups.body.length, groups.headers['x-total']]).toEqual([1, '1']);

      const bad = await admin().get(`/users/${u.id}/memberships?type=Group`);
      expect([bad.status, bad.body]).toEqual([400, { error: 'type does not have a valid value' }]);
      expect((await admin().get('/users/999999/memberships')).body).toEqual({ message: '404 User Not Found' });
      const other = await as(u.token).get(`/users/${u.id}/memberships`);
      expect([other.status, other.body]).toEqual([403, { message: '403 Forbidden' }]);
      expect((await t.http().get(`/api/v4/users/${u.id}/memberships`)).status).toBe(401);

      const out = JSON.parse(await runPython(PYTHON_MEMBERSHIPS, [host, t.rootToken, String(u.id)]));
      expect(out).toEqual({
        all: [
          ['Namespace', group.body.id, 'Crew', 30],
          ['Project', project.body.id, 'Ship', 20],
        ],
        projects: [['Project', project.body.id, 'Ship', 20]],
      });
      const beaker = await api.Users.allMemberships(u.id, { type: 'Namespace' });
      expect(beaker).toEqual([
        { source_id: group.body.id, source_name: 'Crew', source_type: 'Namespace', access_level: 30 },
      ]);
    });
  });

  describe('status', () => {
    it('sets, reads and clears the own status; anyone reads it by id or username', async () => {
      const u = await createUser(t);
      const empty = await as(u.token).get('/user/status');
      expect([empty.status, empty.body]).toEqual([
        200,
        { emoji: null, message: null, availability: null, message_html: null, clear_status_at: null },
      ]);
      const before = Date.now();
      const set = await as(u.token)
        .put('/user/status')
        .send({ emoji: 'coffee', message: 'I <3 coffee', availability: 'busy', clear_status_after: '3_hours' });
      expect(set.status).toBe(200);
      expect(set.body).toMatchObject({
        emoji: 'coffee',
        message: 'I <3 coffee',
        availability: 'busy',
        message_html: '<p>I &lt;3 coffee</p>',
      });
      const clearsAt = new Date(set.body.clear_status_at).getTime();
      expect(clearsAt).toBeGreaterThanOrEqual(before + 3 * 3600_000 - 1000);
      expect(clearsAt).toBeLessThanOrEqual(Date.now() + 3 * 3600_000 + 1000);
      expect((await t.http().get(`/api/v4/users/${u.id}/status`)).body).toEqual(set.body);
      expect((await as(viewer.token).get(`/users/${u.username}/status`)).body).toEqual(set.body);
      expect((await t.http().get('/api/v4/users/no-such-user/status')).body).toEqual({ message: '404 User Not Found' });

      // A PUT replaces the whole status: a message alone takes speech_balloon, not_set, no expiry.
      const message = await as(u.token).put('/user/status').send({ message: 'Out' });
      expect(message.body).toMatchObject({
        emoji: 'speech_balloon',
        message: 'Out',
        availability: 'not_set',
        clear_status_at: null,
      });
      // PATCH changes only what it is sent.
      const patched = await as(u.token).patch('/user/status').send({ emoji: 'palm_tree' });
      expect(patched.body).toMatchObject({ emoji: 'palm_tree', message: 'Out' });
      const cleared = await as(u.token).put('/user/status').send({ emoji: '', message: '' });
      expect([cleared.status, cleared.body.emoji]).toEqual([200, null]);
      expect((await as(viewer.token).get(`/users/${u.id}/status`)).body.message).toBeNull();
    });

    it("refuses what GitLab's model refuses, and callers without a token", async () => {
      const u = await createUser(t);
      const long = await as(u.token)
        .put('/user/status')
        .send({ message: 'x'.repeat(101) });
      expect([long.status, long.body]).toEqual([
        400,
        { message: { message: ['is too long (maximum is 100 characters)'] } },
      ]);
      const emoji = await as(u.token).put('/user/status').send({ emoji: 'Not an emoji' });
      expect([emoji.status, emoji.body]).toEqual([400, { message: { emoji: ['is not a valid emoji name'] } }]);
      const after = await as(u.token).put('/user/status').send({ emoji: 'x', clear_status_after: 'wrong' });
      expect([after.status, after.body]).toEqual([400, { error: 'clear_status_after does not have a valid value' }]);
      expect((await t.http().get('/api/v4/user/status')).status).toBe(401);
      expect((await t.http().put('/api/v4/user/status').send({ emoji: 'x' })).status).toBe(401);
    });

    it("python-gitlab 3.12's gl.user.status and user.status; gitbeaker's Users.editStatus/showStatus", async () => {
      const u = await createUser(t);
      const out = JSON.parse(await runPython(PYTHON_STATUS, [host, u.token, String(u.id)]));
      expect(out).toEqual({
        before: [null, null],
        after: ['coffee', 'Brewing', 'not_set'],
        via_user: ['coffee', 'Brewing'],
      });
      const own = new gb.Gitlab({ host, token: u.token });
      await own.Users.editStatus({ emoji: 'tea', message: 'Steeping', clearStatusAfter: '30_minutes' });
      expect(await api.Users.showStatus({ iDOrUsername: u.id })).toMatchObject({ emoji: 'tea', message: 'Steeping' });
      expect((await own.Users.showStatus()).clear_status_at).not.toBeNull();
    });
  });

  describe('SSH keys', () => {
    it('reads one key of a user, for anyone who may see the user (14.9)', async () => {
      const u = await createUser(t);
      const k = await newKey('one');
      const added = await as(u.token).post('/user/keys').send({ title: 'one', key: k.pub });
      expect(added.status).toBe(201);
      expectShape(added.body, 'ssh-key');
      expect(added.body.expires_at).toBeNull();
      const read = await as(viewer.token).get(`/users/${u.id}/keys/${added.body.id}`);
      expect([read.status, read.body]).toEqual([200, added.body]);
      const anonymous = await t.http().get(`/api/v4/users/${u.id}/keys/${added.body.id}`);
      expect(anonymous.status).toBe(200);
      expect((await as(viewer.token).get(`/users/${viewer.id}/keys/${added.body.id}`)).body).toEqual({
        message: '404 Key Not Found',
      });
      expect((await as(viewer.token).get(`/users/999999/keys/${added.body.id}`)).body).toEqual({
        message: '404 User Not Found',
      });
      const beaker = await api.UserSSHKeys.show(added.body.id, { userId: u.id });
      expect(beaker).toMatchObject({ id: added.body.id, title: 'one' });
    });

    it('finds any key by id or fingerprint for administrators, with its user (GET /keys)', async () => {
      const u = await createUser(t);
      const k = await newKey('found');
      const added = await as(u.token).post('/user/keys').send({ title: 'found', key: k.pub });
      const id = added.body.id as number;
      const byId = await admin().get(`/keys/${id}`);
      expect(byId.status).toBe(200);
      expect(byId.body).toMatchObject({ id, title: 'found', expires_at: null });
      expectShape(byId.body.user, 'user-public');
      expect(byId.body.user).toMatchObject({ id: u.id, username: u.username });
      expect((await admin().get('/keys').query({ fingerprint: k.md5 })).body.id).toBe(id);
      expect((await admin().get('/keys').query({ fingerprint: k.sha256 })).body.id).toBe(id);
      expect((await admin().get('/keys').query({ fingerprint: k.md5.toUpperCase() })).body.id).toBe(id);

      expect((await admin().get('/keys/999999')).body).toEqual({ message: '404 Not found' });
      const missing = await admin()
        .get('/keys')
        .query({ fingerprint: `SHA256:${'A'.repeat(43)}` });
      expect([missing.status, missing.body]).toEqual([404, { message: '404 Key Not Found' }]);
      for (const bad of ['nonsense', 'SHA256:short', 'aa:bb']) {
        const res = await admin().get('/keys').query({ fingerprint: bad });
        expect([bad, res.status, res.body]).toEqual([bad, 400, { message: 'Failed to return the key' }]);
      }
      expect((await admin().get('/keys')).body).toEqual({ error: 'fingerprint is missing' });
      expect((await as(u.token).get(`/keys/${id}`)).status).toBe(403);
      expect((await as(u.token).get('/keys').query({ fingerprint: k.md5 })).status).toBe(403);
      expect((await t.http().get(`/api/v4/keys/${id}`)).status).toBe(401);

      // A client that sends the fingerprint unencoded: a `+` of the base64 arrives as a space.
      let plus = await newKey('plus0');
      for (let i = 1; !plus.sha256.includes('+') && i < 30; i += 1) plus = await newKey(`plus${i}`);
      expect(plus.sha256).toContain('+');
      const plusId = (await as(u.token).post('/user/keys').send({ title: 'plus', key: plus.pub })).body.id;
      const unencoded = await t.http().get(`/api/v4/keys?fingerprint=${plus.sha256}`).set('PRIVATE-TOKEN', t.rootToken);
      expect([unencoded.status, unencoded.body.id]).toEqual([200, plusId]);
      expect((await api.Keys.show({ keyId: id })).user).toMatchObject({ id: u.id });
      // gitbeaker 43's Keys.show({ fingerprint }) puts the fingerprint in the path's query, which its
      // request builder then replaces with the (empty) search parameters: the server never sees it.
      await expect(api.Keys.show({ fingerprint: k.sha256 })).rejects.toMatchObject({
        cause: { response: { status: 400 } },
      });

      const other = await newKey('python');
      const out = JSON.parse(
        await runPython(PYTHON_KEYS, [host, t.rootToken, String(u.id), String(id), k.md5, k.sha256, other.pub]),
      );
      expect(out).toEqual({
        by_id: [id, 'found', u.id],
        by_md5: id,
        by_sha256: id,
        user_key: [id, 'found', null],
        created: ['py', '2999-01-31T00:00:00.000Z'],
        missing: [404, '404 Key Not Found'],
      });
    });

    it('takes expires_at as a date or a date-time on both routes, and refuses a past one', async () => {
      const u = await createUser(t);
      const a = await newKey('dated');
      const own = await as(u.token).post('/user/keys').send({ title: 'dated', key: a.pub, expires_at: '2999-12-31' });
      expect([own.status, own.body.expires_at]).toEqual([201, '2999-12-31T00:00:00.000Z']);
      const b = await newKey('timed');
      const theirs = await admin()
        .post(`/users/${u.id}/keys`)
        .send({ title: 'timed', key: b.pub, expires_at: '2999-06-01T12:30:00Z' });
      expect([theirs.status, theirs.body.expires_at]).toEqual([201, '2999-06-01T12:30:00.000Z']);
      const listed = await admin().get(`/users/${u.id}/keys`);
      expect(listed.body.map((k: { expires_at: string }) => k.expires_at)).toEqual([
        '2999-12-31T00:00:00.000Z',
        '2999-06-01T12:30:00.000Z',
      ]);
      const c = await newKey('past');
      const past = await as(u.token).post('/user/keys').send({ title: 'past', key: c.pub, expires_at: '2020-01-01' });
      expect([past.status, past.body]).toEqual([400, { message: { key: ['has expired'] } }]);
      const bad = await as(u.token).post('/user/keys').send({ title: 'past', key: c.pub, expires_at: 'soon' });
      expect([bad.status, bad.body]).toEqual([400, { error: 'expires_at is invalid' }]);
      const beaker = await api.UserSSHKeys.create('beaker', c.pub, { userId: u.id, expiresAt: '2999-02-03' });
      expect(beaker.expires_at).toBe('2999-02-03T00:00:00.000Z');
    });
  });
});

describe('an expired SSH key over git', () => {
  let t: TestApp;
  let port: number;
  const tmp = tempDirs();

  beforeAll(async () => {
    port = await freePort();
    t = await startTestApp({ sshPort: port, sshHost: '127.0.0.1', sshExternalPort: port });
  });
  afterAll(async () => {
    tmp.removeAll();
    await t?.close();
  });

  it('clones with a key until it expires, then the key is refused', async () => {
    const owner = await createUser(t);
    const dir = tmp.make();
    const path = join(dir, 'key');
    expect((await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', path])).status).toBe(0);
    const expiresAt = new Date(Date.now() + 4000).toISOString();
    const added = await t
      .http()
      .post('/api/v4/user/keys')
      .set('PRIVATE-TOKEN', owner.token)
      .send({ title: 'soon', key: readFileSync(`${path}.pub`, 'utf8').trim(), expires_at: expiresAt });
    expect(added.status).toBe(201);
    const project = await t.http().post('/api/v4/projects').set('PRIVATE-TOKEN', owner.token).send({ name: 'expiry' });
    expect(project.status).toBe(201);
    const env = {
      GIT_SSH_COMMAND: `ssh -F /dev/null -i ${path} -p ${port} -o IdentitiesOnly=yes -o BatchMode=yes -o UserKnownHostsFile=${join(dir, 'known')} -o StrictHostKeyChecking=accept-new -o LogLevel=ERROR`,
    };
    const url = `ssh://git@127.0.0.1:${port}/${project.body.path_with_namespace}.git`;
    const before = await run('git', ['ls-remote', url], env);
    expect(before.status).toBe(0);
    await new Promise((r) => setTimeout(r, Math.max(0, new Date(expiresAt).getTime() - Date.now() + 200)));
    const after = await run('git', ['ls-remote', url], env);
    expect(after.status).not.toBe(0);
    expect(after.out).toContain('Permission denied (publickey)');
    // The key itself stays, visible and removable.
    const keys = await t.http().get('/api/v4/user/keys').set('PRIVATE-TOKEN', owner.token);
    expect(keys.body.map((k: { expires_at: string }) => k.expires_at)).toEqual([expiresAt]);
  });
});
