import { ProjectionRebuilder } from '@app/platform';
import { DeployKeyQueries } from '@app/projects';
import { parseSshPublicKey } from '@app/users';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expectShape } from '../contract/shape';
import { createUser, type SeededUser } from '../support/seed';
import { eventually, startTestApp, type TestApp } from '../support/test-app';

const api = (path: string) => `/api/v4${path}`;
const UNAUTHORIZED = { message: '401 Unauthorized' };
const FORBIDDEN = { message: '403 Forbidden' };
const PROJECT_NOT_FOUND = { message: '404 Project Not Found' };
const KEY_NOT_FOUND = { message: '404 Deploy Key Not Found' };
const NOT_FOUND = { message: '404 Not found' };
const DEPLOY_KEY_TAKEN = { message: { 'deploy_key.fingerprint': ['has already been taken'] } };
const USER_KEY_TAKEN = { message: { fingerprint: ['has already been taken'] } };

let keyDir: string;
let keyCount = 0;

/** A real OpenSSH public key line from `ssh-keygen`. */
function sshKey(type: 'rsa' | 'ed25519' | 'ecdsa' = 'ed25519', comment = `deploy${keyCount + 1}@lode.test`): string {
  keyCount += 1;
  const file = join(keyDir, `id_${keyCount}`);
  const size = type === 'rsa' ? ['-b', '2048'] : type === 'ecdsa' ? ['-b', '256'] : [];
  execFileSync('ssh-keygen', ['-q', '-t', type, ...size, '-N', '', '-C', comment, '-f', file], { stdio: 'ignore' });
  return readFileSync(`${file}.pub`, 'utf8').trim();
}

describe('deploy keys', () => {
  let t: TestApp;
  let owner: SeededUser;
  let maintainer: SeededUser;
  let developer: SeededUser;
  let guest: SeededUser;
  let stranger: SeededUser;
  /** Private, owned by `owner`; maintainer, developer and guest are members. */
  let projectA: number;
  /** Private, owned by `owner`; `maintainer` is a maintainer there too. */
  let projectB: number;
  /** Public, owned by `stranger`: nobody else is a member. */
  let foreign: number;

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

  async function project(token: string, name: string, visibility = 'private'): Promise<number> {
    const res = await as(token).post('/projects', { name, visibility });
    expect(res.status).toBe(201);
    return res.body.id;
  }
  async function member(projectId: number, userId: number, level: number): Promise<void> {
    const res = await as(owner.token).post(`/projects/${projectId}/members`, { user_id: userId, access_level: level });
    expect(res.status).toBe(201);
  }
  async function deploy(token: string, projectId: number, body: object) {
    const res = await as(token).post(`/projects/${projectId}/deploy_keys`, body);
    expect(res.status).toBe(201);
    return res.body as { id: number; title: string; key: string; created_at: string; can_push: boolean };
  }
  async function keyCount_(table: string): Promise<number> {
    const [{ n }] = await t.db.query(`select count(*)::int as n from ${table}`);
    return n;
  }
  const grant = (key: string) => t.app.get(DeployKeyQueries).byFingerprint(parseSshPublicKey(key).fingerprintSha256);

  beforeAll(async () => {
    keyDir = mkdtempSync(join(tmpdir(), 'lode-deploy-keys-'));
    t = await startTestApp();
    [owner, maintainer, developer, guest, stranger] = await Promise.all([
      createUser(t),
      createUser(t),
      createUser(t),
      createUser(t),
      createUser(t),
    ]);
    projectA = await project(owner.token, 'deployed');
    projectB = await project(owner.token, 'deployed too');
    foreign = await project(stranger.token, 'foreign', 'public');
    await member(projectA, maintainer.id, 40);
    await member(projectA, developer.id, 30);
    await member(projectA, guest.id, 10);
    await member(projectB, maintainer.id, 40);
  });
  afterAll(async () => {
    await t.close();
    rmSync(keyDir, { recursive: true, force: true });
  });

  describe('who may manage them', () => {
    let keyId: number;
    beforeAll(async () => {
      keyId = (await deploy(owner.token, projectA, { title: 'roles', key: sshKey() })).id;
    });

    it('maintainers, owners and administrators: every endpoint answers', async () => {
      for (const token of [owner.token, maintainer.token, t.rootToken]) {
        expect((await as(token).get(`/projects/${projectA}/deploy_keys`)).status).toBe(200);
        expect((await as(token).get(`/projects/${projectA}/deploy_keys/${keyId}`)).status).toBe(200);
        expect((await as(token).put(`/projects/${projectA}/deploy_keys/${keyId}`, { title: 'roles' })).status).toBe(
          200,
        );
      }
    });

    it('developers and guests 403, strangers to a private project 404, anonymous 401, before the body is read', async () => {
      const routes = (p: number, k: number) =>
        [
          ['get', `/projects/${p}/deploy_keys`],
          ['get', `/projects/${p}/deploy_keys/${k}`],
          ['post', `/projects/${p}/deploy_keys`],
          ['put', `/projects/${p}/deploy_keys/${k}`],
          ['post', `/projects/${p}/deploy_keys/${k}/enable`],
          ['delete', `/projects/${p}/deploy_keys/${k}`],
        ] as const;
      for (const [method, path] of routes(projectA, keyId)) {
        // Empty bodies: GitLab checks the project first, so these are no 400s.
        for (const who of [developer, guest]) {
          const res = await as(who.token)[method](path);
          expect([path, method, res.status, res.body]).toEqual([path, method, 403, FORBIDDEN]);
        }
        const strangerRes = await as(stranger.token)[method](path);
        expect([path, method, strangerRes.body]).toEqual([path, method, PROJECT_NOT_FOUND]);
        const anonymousRes = await anonymous[method](path);
        expect([path, method, anonymousRes.status, anonymousRes.body]).toEqual([path, method, 401, UNAUTHORIZED]);
      }
      // A project the caller sees but does not maintain: 403.
      for (const [method, path] of routes(foreign, keyId)) {
        const res = await as(owner.token)[method](path);
        expect([path, method, res.status]).toEqual([path, method, 403]);
      }
      expect((await as(owner.token).get(`/projects/${projectA}/deploy_keys/${keyId}`)).body.title).toBe('roles');
    });

    it('GET /deploy_keys: every key of the instance, administrators only, paginated', async () => {
      expect((await anonymous.get('/deploy_keys')).body).toEqual(UNAUTHORIZED);
      expect((await as(owner.token).get('/deploy_keys')).body).toEqual(FORBIDDEN);
      const second = await deploy(stranger.token, foreign, { title: 'theirs', key: sshKey() });
      const all = await root().get('/deploy_keys?per_page=100');
      expect(all.status).toBe(200);
      expect(all.headers['x-total']).toBe(String(await keyCount_('deploy_keys')));
      for (const k of all.body) expectShape(k, 'deploy-key');
      const ids = (all.body as { id: number }[]).map((k) => k.id);
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
      expect(ids).toEqual(expect.arrayContaining([keyId, second.id]));
      const page = await root().get('/deploy_keys?per_page=1&page=2');
      expect(page.headers['x-page']).toBe('2');
      expect(page.body).toHaveLength(1);
    });
  });

  describe('POST /projects/:id/deploy_keys', () => {
    it('adds a key read-only by default, stored trimmed, in the DeployKeysProject shape', async () => {
      const key = sshKey('rsa');
      const res = await as(maintainer.token).post(`/projects/${projectA}/deploy_keys`, {
        title: 'ci',
        key: `\n  ${key}  \n`,
      });
      expect(res.status).toBe(201);
      expectShape(res.body, 'deploy-key-project');
      expect(res.body).toMatchObject({ title: 'ci', key, can_push: false });
      expect((await as(owner.token).get(`/projects/${projectA}/deploy_keys/${res.body.id}`)).body).toEqual(res.body);
    });

    it('takes can_push, also as a form string', async () => {
      const json = await deploy(owner.token, projectA, { title: 'pusher', key: sshKey('ecdsa'), can_push: true });
      expect(json.can_push).toBe(true);
      const form = await t
        .http()
        .post(api(`/projects/${projectA}/deploy_keys`))
        .set('PRIVATE-TOKEN', owner.token)
        .type('form')
        .send({ title: 'form', key: sshKey(), can_push: 'true' });
      expect(form.status).toBe(201);
      expect(form.body.can_push).toBe(true);
    });

    it('refuses missing, invalid and blank parameters as GitLab words them, writing nothing', async () => {
      const before = await keyCount_('deploy_keys');
      const post = (body: object) => as(owner.token).post(`/projects/${projectA}/deploy_keys`, body);
      expect((await post({ title: 'x' })).body).toEqual({ error: 'key is missing' });
      expect((await post({ key: sshKey() })).body).toEqual({ error: 'title is missing' });
      expect((await post({ title: 'x', key: sshKey(), can_push: 'maybe' })).body).toEqual({
        error: 'can_push is invalid',
      });
      const invalid = await post({ title: 'x', key: 'some key' });
      expect(invalid.status).toBe(400);
      expect(invalid.body).toEqual({
        message: { 'deploy_key.key': ['is invalid'], 'deploy_key.fingerprint': ['cannot be generated'] },
      });
      const blank = await post({ title: '  ', key: sshKey() });
      expect(blank.status).toBe(400);
      expect(blank.body).toEqual({ message: { 'deploy_key.title': ["can't be blank"] } });
      expect((await post({ title: 'x'.repeat(256), key: sshKey() })).body).toEqual({
        message: { 'deploy_key.title': ['is too long (maximum is 255 characters)'] },
      });
      // Wrong types and sizes are 400s, never 500s.
      expect((await post({ title: ['x'], key: sshKey() })).body).toEqual({ error: 'title is invalid' });
      expect((await post({ title: 'x', key: { a: 1 } })).body).toEqual({ error: 'key is invalid' });
      expect((await post({ title: 'x', key: `ssh-ed25519 ${'A'.repeat(9000)}` })).status).toBe(400);
      expect(await keyCount_('deploy_keys')).toBe(before);
      const huge = '99999999999999';
      expect((await as(owner.token).get(`/projects/${projectA}/deploy_keys/${huge}`)).body).toEqual(NOT_FOUND);
      expect((await as(owner.token).put(`/projects/${projectA}/deploy_keys/${huge}`, { title: 'x' })).body).toEqual(
        NOT_FOUND,
      );
      expect((await as(owner.token).delete(`/projects/${projectA}/deploy_keys/${huge}`)).body).toEqual(KEY_NOT_FOUND);
      expect((await as(owner.token).post(`/projects/${projectA}/deploy_keys/${huge}/enable`)).body).toEqual(
        KEY_NOT_FOUND,
      );
    });

    it('answers a key already on the project unchanged', async () => {
      const key = sshKey();
      const first = await deploy(owner.token, projectA, { title: 'once', key });
      const again = await deploy(owner.token, projectA, { title: 'twice', key: `${key}\n`, can_push: true });
      expect(again).toEqual(first);
      expect((await as(owner.token).get(`/projects/${projectA}/deploy_keys?per_page=100`)).body).toHaveLength(
        (await t.db.query(`select 1 from deploy_keys_projects where project_id = $1`, [projectA])).length,
      );
    });

    it('enables a key the caller reaches on another project, with this project can_push', async () => {
      const key = sshKey();
      const onA = await deploy(owner.token, projectA, { title: 'shared', key });
      const onB = await deploy(maintainer.token, projectB, { title: 'ignored', key, can_push: true });
      expect(onB).toEqual({ ...onA, can_push: true });
      expect((await as(owner.token).get(`/projects/${projectA}/deploy_keys/${onA.id}`)).body.can_push).toBe(false);
    });

    it('refuses a key deployed on a project the caller cannot reach: fingerprint taken', async () => {
      const key = sshKey();
      await deploy(stranger.token, foreign, { title: 'theirs', key });
      const res = await as(owner.token).post(`/projects/${projectA}/deploy_keys`, { title: 'mine', key });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(DEPLOY_KEY_TAKEN);
      // GitLab's POST reuses `accessible_deploy_keys` only, which an administrator's rank does not widen.
      expect((await root().post(`/projects/${projectA}/deploy_keys`, { title: 'admin', key })).body).toEqual(
        DEPLOY_KEY_TAKEN,
      );
      // The same key under another comment is the same key.
      const [type, blob] = key.split(' ');
      expect(
        (await as(owner.token).post(`/projects/${projectA}/deploy_keys`, { title: 'x', key: `${type} ${blob} other` }))
          .body,
      ).toEqual(DEPLOY_KEY_TAKEN);
    });
  });

  describe('one key text is a user key or a deploy key, never both', () => {
    it("refuses a deploy key that is a user's key", async () => {
      const key = sshKey();
      expect((await as(developer.token).post('/user/keys', { title: 'laptop', key })).status).toBe(201);
      const before = await keyCount_('deploy_keys');
      const res = await as(owner.token).post(`/projects/${projectA}/deploy_keys`, { title: 'deploy', key });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(DEPLOY_KEY_TAKEN);
      expect(await keyCount_('deploy_keys')).toBe(before);
    });

    it('refuses a user key (own or by an administrator) that is a deploy key', async () => {
      const key = sshKey();
      await deploy(owner.token, projectA, { title: 'deploy', key });
      const before = await keyCount_('ssh_keys');
      const own = await as(developer.token).post('/user/keys', { title: 'laptop', key });
      expect(own.status).toBe(400);
      expect(own.body).toEqual(USER_KEY_TAKEN);
      const admin = await root().post(`/users/${developer.id}/keys`, { title: 'laptop', key });
      expect(admin.status).toBe(400);
      expect(admin.body).toEqual(USER_KEY_TAKEN);
      expect(await keyCount_('ssh_keys')).toBe(before);
    });

    it('lets the text go to a user once its last project removed the deploy key', async () => {
      const key = sshKey();
      const k = await deploy(owner.token, projectA, { title: 'brief', key });
      expect((await as(owner.token).delete(`/projects/${projectA}/deploy_keys/${k.id}`)).status).toBe(204);
      expect((await as(developer.token).post('/user/keys', { title: 'mine now', key })).status).toBe(201);
    });

    it('holds under concurrent additions of one text on both sides', async () => {
      // Without the fingerprint lock both sides pass their checks in most of these races.
      for (let i = 0; i < 4; i++) {
        const key = sshKey();
        const [user, deployKey] = await Promise.all([
          as(guest.token).post('/user/keys', { title: 'race', key }),
          as(owner.token).post(`/projects/${projectB}/deploy_keys`, { title: 'race', key }),
        ]);
        expect([user.status, deployKey.status].sort()).toEqual([201, 400]);
        const fingerprint = parseSshPublicKey(key).fingerprintMd5;
        const [{ n }] = await t.db.query(
          `select (select count(*) from ssh_keys where fingerprint = $1) + (select count(*) from deploy_keys where fingerprint = $1) as n`,
          [fingerprint],
        );
        expect(Number(n)).toBe(1);
      }
    });
  });

  describe('GET /projects/:id/deploy_keys(/:key_id)', () => {
    it("lists the project's keys in the order it got them, each with its own can_push, paginated", async () => {
      const p = await project(owner.token, 'listed');
      const a = await deploy(owner.token, p, { title: 'a', key: sshKey() });
      const b = await deploy(owner.token, p, { title: 'b', key: sshKey(), can_push: true });
      const list = await as(owner.token).get(`/projects/${p}/deploy_keys`);
      expect(list.status).toBe(200);
      expect(list.headers['x-total']).toBe('2');
      expect(list.body).toEqual([a, b]);
      for (const k of list.body) expectShape(k, 'deploy-key-project');
      const second = await as(owner.token).get(`/projects/${p}/deploy_keys?per_page=1&page=2`);
      expect(second.body).toEqual([b]);
    });

    it("answers ActiveRecord's 404 for a key not on the project, 400 for a non-integer id", async () => {
      const k = await deploy(stranger.token, foreign, { title: 'elsewhere', key: sshKey() });
      expect((await as(owner.token).get(`/projects/${projectA}/deploy_keys/${k.id}`)).body).toEqual(NOT_FOUND);
      expect((await as(owner.token).get(`/projects/${projectA}/deploy_keys/999999`)).body).toEqual(NOT_FOUND);
      expect((await as(owner.token).get(`/projects/${projectA}/deploy_keys/abc`)).body).toEqual({
        error: 'key_id is invalid',
      });
    });
  });

  describe('PUT /projects/:id/deploy_keys/:key_id', () => {
    it('changes the title on every project and can_push on this project only', async () => {
      const key = sshKey();
      const onA = await deploy(owner.token, projectA, { title: 'old', key });
      await deploy(owner.token, projectB, { title: 'old', key });
      const res = await as(maintainer.token).put(`/projects/${projectB}/deploy_keys/${onA.id}`, {
        title: 'new',
        can_push: true,
      });
      expect(res.status).toBe(200);
      expectShape(res.body, 'deploy-key-project');
      expect(res.body).toMatchObject({ id: onA.id, title: 'new', can_push: true });
      const onAAfter = (await as(owner.token).get(`/projects/${projectA}/deploy_keys/${onA.id}`)).body;
      expect(onAAfter).toMatchObject({ title: 'new', can_push: false });
      const onlyCanPush = await as(owner.token).put(`/projects/${projectA}/deploy_keys/${onA.id}`, {
        can_push: 'true',
      });
      expect(onlyCanPush.body).toMatchObject({ title: 'new', can_push: true });
    });

    it('needs title or can_push, a title that is not blank, and a key on the project', async () => {
      const k = await deploy(owner.token, projectA, { title: 'kept', key: sshKey() });
      const path = `/projects/${projectA}/deploy_keys/${k.id}`;
      expect((await as(owner.token).put(path, {})).body).toEqual({
        error: 'title, can_push are missing, at least one parameter must be provided',
      });
      const blank = await as(owner.token).put(path, { title: '' });
      expect(blank.status).toBe(400);
      expect(blank.body).toEqual({ message: { 'deploy_key.title': ["can't be blank"] } });
      expect((await as(owner.token).get(path)).body.title).toBe('kept');
      expect((await as(owner.token).put(`/projects/${projectB}/deploy_keys/${k.id}`, { title: 'x' })).body).toEqual(
        NOT_FOUND,
      );
    });
  });

  describe('POST /projects/:id/deploy_keys/:key_id/enable', () => {
    it('enables a key of another project the caller is a member of, read-only, answering the SSHKey shape', async () => {
      const k = await deploy(owner.token, projectA, { title: 'reused', key: sshKey(), can_push: true });
      const res = await as(maintainer.token).post(`/projects/${projectB}/deploy_keys/${k.id}/enable`);
      expect(res.status).toBe(201);
      expectShape(res.body, 'deploy-key');
      expect(res.body).toEqual({ id: k.id, title: k.title, key: k.key, created_at: k.created_at });
      expect((await as(owner.token).get(`/projects/${projectB}/deploy_keys/${k.id}`)).body.can_push).toBe(false);
      // Again: the same answer, no second link.
      expect((await as(maintainer.token).post(`/projects/${projectB}/deploy_keys/${k.id}/enable`)).status).toBe(201);
      const links = await t.db.query(`select 1 from deploy_keys_projects where deploy_key_id = $1`, [k.id]);
      expect(links).toHaveLength(2);
    });

    it('404 Deploy Key Not Found for a key on projects the caller is not a member of, or no key; administrators reach every key', async () => {
      const theirs = await deploy(stranger.token, foreign, { title: 'theirs', key: sshKey() });
      expect((await as(owner.token).post(`/projects/${projectA}/deploy_keys/${theirs.id}/enable`)).body).toEqual(
        KEY_NOT_FOUND,
      );
      expect((await as(owner.token).post(`/projects/${projectA}/deploy_keys/999999/enable`)).body).toEqual(
        KEY_NOT_FOUND,
      );
      expect((await root().post(`/projects/${projectA}/deploy_keys/${theirs.id}/enable`)).status).toBe(201);
      expect((await as(owner.token).get(`/projects/${projectA}/deploy_keys/${theirs.id}`)).status).toBe(200);
    });
  });

  describe('DELETE /projects/:id/deploy_keys/:key_id', () => {
    it('removes the key from that project only; with its last project the key is gone', async () => {
      const key = sshKey();
      const k = await deploy(owner.token, projectA, { title: 'twice', key });
      await deploy(owner.token, projectB, { title: 'twice', key });
      const del = await as(maintainer.token).delete(`/projects/${projectB}/deploy_keys/${k.id}`);
      expect(del.status).toBe(204);
      expect(del.text).toBe('');
      expect((await as(owner.token).get(`/projects/${projectB}/deploy_keys/${k.id}`)).body).toEqual(NOT_FOUND);
      expect((await as(owner.token).get(`/projects/${projectA}/deploy_keys/${k.id}`)).status).toBe(200);
      expect((await as(owner.token).delete(`/projects/${projectB}/deploy_keys/${k.id}`)).body).toEqual(KEY_NOT_FOUND);

      expect((await as(owner.token).delete(`/projects/${projectA}/deploy_keys/${k.id}`)).status).toBe(204);
      expect(await grant(key)).toBeUndefined();
      expect(((await root().get('/deploy_keys?per_page=100')).body as { id: number }[]).map((x) => x.id)).not.toContain(
        k.id,
      );
      expect((await root().post(`/projects/${projectA}/deploy_keys/${k.id}/enable`)).body).toEqual(KEY_NOT_FOUND);
    });

    it('records who added, enabled, updated and removed the key in its stream', async () => {
      const k = await deploy(owner.token, projectA, { title: 'history', key: sshKey() });
      await as(maintainer.token).post(`/projects/${projectB}/deploy_keys/${k.id}/enable`);
      await as(maintainer.token).put(`/projects/${projectB}/deploy_keys/${k.id}`, { can_push: true });
      await as(maintainer.token).delete(`/projects/${projectB}/deploy_keys/${k.id}`);
      await as(owner.token).delete(`/projects/${projectA}/deploy_keys/${k.id}`);
      const events = (await t.db.query(
        `select type, data, metadata from events where stream_id = $1 order by stream_version`,
        [`deploy-key-${k.id}`],
      )) as { type: string; data: { projectId?: number }; metadata: { actorId?: number } }[];
      expect(events.map((e) => [e.type, e.data.projectId, e.metadata.actorId])).toEqual([
        ['DeployKeyAdded', projectA, owner.id],
        ['DeployKeyEnabled', projectB, maintainer.id],
        ['DeployKeyUpdated', projectB, maintainer.id],
        ['DeployKeyDisabled', projectB, maintainer.id],
        ['DeployKeyDisabled', projectA, owner.id],
        ['DeployKeyRemoved', undefined, owner.id],
      ]);
    });
  });

  describe('deleting a project', () => {
    it('takes its links; a key left on no project goes; a key still on another stays and can be removed there', async () => {
      const doomed = await project(owner.token, 'doomed');
      const sharedKey = sshKey();
      const lonelyKey = sshKey();
      const shared = await deploy(owner.token, doomed, { title: 'shared', key: sharedKey });
      await deploy(owner.token, projectA, { title: 'shared', key: sharedKey });
      const lonely = await deploy(owner.token, doomed, { title: 'lonely', key: lonelyKey });
      expect((await as(owner.token).delete(`/projects/${doomed}`)).status).toBe(202);
      await eventually(async () => expect(await grant(lonelyKey)).toBeUndefined());
      expect((await root().get('/deploy_keys?per_page=100')).body.map((x: { id: number }) => x.id)).not.toContain(
        lonely.id,
      );
      expect(await grant(sharedKey)).toEqual({
        id: shared.id,
        title: 'shared',
        userId: owner.id,
        projects: [{ projectId: projectA, canPush: false }],
      });
      // Its stream still names the deleted project; the removal from the last live project still drops the key.
      expect((await as(owner.token).delete(`/projects/${projectA}/deploy_keys/${shared.id}`)).status).toBe(204);
      expect(await grant(sharedKey)).toBeUndefined();
      const types = (
        (await t.db.query(`select type from events where stream_id = $1`, [`deploy-key-${shared.id}`])) as {
          type: string;
        }[]
      ).map((e) => e.type);
      expect(types).toContain('DeployKeyRemoved');
    });
  });

  describe('deleting a group', () => {
    it("drops the keys left on none of its projects (the projects go by the namespaces' cascade)", async () => {
      const group = await as(owner.token).post('/groups', { name: 'Deployers', path: `deployers-${owner.id}` });
      expect(group.status).toBe(201);
      const inGroup = await as(owner.token).post('/projects', { name: 'grouped', namespace_id: group.body.id });
      expect(inGroup.status).toBe(201);
      const onlyThere = sshKey();
      const alsoOnA = sshKey();
      await deploy(owner.token, inGroup.body.id, { title: 'only', key: onlyThere });
      const kept = await deploy(owner.token, inGroup.body.id, { title: 'also', key: alsoOnA });
      await deploy(owner.token, projectA, { title: 'also', key: alsoOnA });
      expect((await as(owner.token).delete(`/groups/${group.body.id}`)).status).toBe(204);
      await eventually(async () => expect(await grant(onlyThere)).toBeUndefined());
      expect((await grant(alsoOnA))?.projects).toEqual([{ projectId: projectA, canPush: false }]);
      expect((await as(owner.token).get(`/projects/${projectA}/deploy_keys/${kept.id}`)).status).toBe(200);
    });
  });

  describe('GET /keys: a deploy key by fingerprint or id (administrators)', () => {
    const USER_PUBLIC = ['id', 'username', 'name', 'state', 'avatar_url', 'web_url'];
    let text: string;
    let key: { id: number; title: string; key: string; created_at: string };
    beforeAll(async () => {
      text = sshKey();
      key = await deploy(owner.token, projectA, { title: 'found', key: text, can_push: true });
      const enabled = await as(owner.token).post(`/projects/${projectB}/deploy_keys/${key.id}/enable`);
      expect(enabled.status).toBe(201);
    });

    it("by fingerprint: GitLab 12.7's DeployKeyWithUser, with deploy_keys_projects in the order they were made", async () => {
      const parsed = parseSshPublicKey(text);
      for (const fingerprint of [
        parsed.fingerprintMd5,
        parsed.fingerprintMd5.toUpperCase(),
        parsed.fingerprintSha256,
      ]) {
        const res = await root().get('/keys').query({ fingerprint });
        expect(res.status).toBe(200);
        expect(res.body).toEqual({
          id: key.id,
          title: 'found',
          key: key.key,
          created_at: key.created_at,
          expires_at: null,
          user: expect.objectContaining({ id: owner.id, username: owner.username }),
          deploy_keys_projects: [
            {
              deploy_key_id: key.id,
              project_id: projectA,
              created_at: expect.any(String),
              updated_at: expect.any(String),
              can_push: true,
            },
            {
              deploy_key_id: key.id,
              project_id: projectB,
              created_at: expect.any(String),
              updated_at: expect.any(String),
              can_push: false,
            },
          ],
        });
        for (const field of USER_PUBLIC) expect(res.body.user).toHaveProperty(field);
      }
    });

    it("by id: GitLab's Key.find, SSHKeyWithUser without deploy_keys_projects, when no user's key has the id", async () => {
      // Users' keys and deploy keys count their ids apart; a user's key with the same id would answer.
      expect((await t.db.query(`select 1 from ssh_keys where id = $1`, [key.id])).length).toBe(0);
      const res = await root().get(`/keys/${key.id}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        id: key.id,
        title: 'found',
        key: key.key,
        created_at: key.created_at,
        expires_at: null,
        user: expect.objectContaining({ id: owner.id, username: owner.username }),
      });
    });

    it("a user's key answers as before: SSHKeyWithUser, no deploy_keys_projects", async () => {
      const userKey = sshKey();
      const added = await as(owner.token).post('/user/keys', { title: 'mine', key: userKey });
      expect(added.status).toBe(201);
      const res = await root()
        .get('/keys')
        .query({ fingerprint: parseSshPublicKey(userKey).fingerprintSha256 });
      expect(res.status).toBe(200);
      expect(res.body.id).toBe(added.body.id);
      expect(res.body.title).toBe('mine');
      expect(res.body).not.toHaveProperty('deploy_keys_projects');
    });

    it('administrators only: 403 for a maintainer of its projects, 401 without a token', async () => {
      const fingerprint = parseSshPublicKey(text).fingerprintSha256;
      expect((await as(owner.token).get(`/keys?fingerprint=${encodeURIComponent(fingerprint)}`)).body).toEqual(
        FORBIDDEN,
      );
      expect((await as(owner.token).get(`/keys/${key.id}`)).body).toEqual(FORBIDDEN);
      expect((await anonymous.get(`/keys?fingerprint=${encodeURIComponent(fingerprint)}`)).body).toEqual(UNAUTHORIZED);
      expect((await anonymous.get(`/keys/${key.id}`)).body).toEqual(UNAUTHORIZED);
    });

    it('404 for a fingerprint or id of no key; a removed key is not found', async () => {
      const other = sshKey();
      const miss = await root()
        .get('/keys')
        .query({ fingerprint: parseSshPublicKey(other).fingerprintSha256 });
      expect([miss.status, miss.body]).toEqual([404, { message: '404 Key Not Found' }]);
      expect((await root().get('/keys/999999')).body).toEqual(NOT_FOUND);
      expect((await root().get('/keys/99999999999')).body).toEqual(NOT_FOUND);
      const gone = await deploy(owner.token, projectB, { title: 'gone', key: other });
      expect((await as(owner.token).delete(`/projects/${projectB}/deploy_keys/${gone.id}`)).status).toBe(204);
      const after = await root()
        .get('/keys')
        .query({ fingerprint: parseSshPublicKey(other).fingerprintMd5 });
      expect(after.body).toEqual({ message: '404 Key Not Found' });
    });
  });

  describe('for the SSH server', () => {
    it('byFingerprint answers the key, who added it and its projects with can_push, or nothing', async () => {
      const key = sshKey();
      const k = await deploy(maintainer.token, projectA, { title: 'ssh', key, can_push: true });
      await deploy(maintainer.token, projectB, { title: 'ssh', key });
      expect(await grant(key)).toEqual({
        id: k.id,
        title: 'ssh',
        userId: maintainer.id,
        projects: [
          { projectId: Math.min(projectA, projectB), canPush: projectA < projectB },
          { projectId: Math.max(projectA, projectB), canPush: projectA > projectB },
        ],
      });
      expect(await grant(sshKey())).toBeUndefined();
    });

    it('a deleted user hands the key on to the ghost user; the key keeps its projects', async () => {
      const adder = await createUser(t);
      const p = await project(owner.token, 'handed over');
      await member(p, adder.id, 40);
      const key = sshKey();
      await deploy(adder.token, p, { title: 'orphan', key });
      // A key only on the user's personal project goes with it (the namespace's cascade).
      const personal = await project(adder.token, 'personal');
      const personalKey = sshKey();
      await deploy(adder.token, personal, { title: 'personal', key: personalKey });
      expect((await root().delete(`/users/${adder.id}`)).status).toBe(204);
      await eventually(async () => expect(await grant(personalKey)).toBeUndefined());
      const ghost = (await root().get('/users?username=ghost')).body[0] as { id: number };
      await eventually(async () => expect((await grant(key))?.userId).toBe(ghost.id));
      expect((await grant(key))?.projects).toEqual([{ projectId: p, canPush: false }]);
    });
  });

  // Last: after every history above (enables, updates, removals, project, group and user deletions).
  it('rebuilds the deploy key tables from the events into exactly the live ones', async () => {
    const dump = async () => ({
      keys: await t.db.query(`select * from deploy_keys order by id`),
      links: await t.db.query(`select * from deploy_keys_projects order by deploy_key_id, project_id`),
    });
    const live = await dump();
    expect(live.keys.length).toBeGreaterThan(10);
    await t.app.get(ProjectionRebuilder).rebuild();
    expect(await dump()).toEqual(live);
  });
});
