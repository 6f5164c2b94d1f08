import type { Gitlab } from '@gitbeaker/rest' with { 'resolution-mode': 'import' };
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { git, gitOk, tempDirs } from '../support/git';
import { runPython } from '../support/python-gitlab';
import { createUser, type SeededUser } from '../support/seed';
import { eventually, freePort, startTestApp, type TestApp } from '../support/test-app';
import { startWebhookReceiver, type Delivery, type WebhookReceiver } from '../support/webhook-receiver';

const api = (path: string) => `/api/v4${path}`;
const REVERT_REFUSED =
  'Sorry, we cannot revert this commit automatically. This commit may already have been reverted, or a more recent commit may have updated some of its content.';

/**
 * The repository's smaller routes and answers: hooks' `push_events_branch_filter` (enforced on
 * delivery, heard by a real receiver) and `wiki_page_events`, `merge_base`, commit revert, file `HEAD`
 * through the clients' own calls, the archived project's push refusal over HTTP and SSH, and the 401
 * an anonymous write gets before any branch rule.
 */
describe('repository extras', () => {
  let t: TestApp;
  let url: string;
  let sshPort: number;
  let receiver: WebhookReceiver;
  let hookBase: string;
  let received: Delivery[];
  let owner: SeededUser;
  let developer: SeededUser;
  let ownerKey: string;
  /** Public, `master` pushed with a.txt (first) and b.txt (second). */
  let project: { id: number; path_with_namespace: string };
  let work: string;
  let first: string;
  let second: string;
  const tmp = tempDirs();

  const as = (token?: string) => {
    const auth = <R extends { set: (k: string, v: string) => R }>(r: R) => (token ? r.set('PRIVATE-TOKEN', token) : r);
    return {
      get: (path: string) => auth(t.http().get(api(path))),
      head: (path: string) => auth(t.http().head(api(path))),
      post: (path: string, body: object = {}) => auth(t.http().post(api(path))).send(body),
      put: (path: string, body: object = {}) => auth(t.http().put(api(path))).send(body),
    };
  };
  const remote = (user: SeededUser, path = project.path_with_namespace) =>
    `http://git:${user.token}@${url.slice('http://'.length)}/${path}.git`;
  const ssh = (path: string) => `ssh://git@127.0.0.1:${sshPort}/${path}.git`;
  const sshEnv = (key: string) => ({
    GIT_SSH_COMMAND: `ssh -F /dev/null -i ${key} -p ${sshPort} -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR`,
  });
  async function commit(file: string, content = `${file}\n`): Promise<string> {
    writeFileSync(join(work, file), content);
    await gitOk(['add', '.'], work);
    await gitOk(['commit', '-q', '-m', `add ${file}`], work);
    return (await gitOk(['rev-parse', 'HEAD'], work)).trim();
  }

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    received = receiver.received;
    hookBase = receiver.url;
    const port = await freePort();
    sshPort = await freePort();
    url = `http://127.0.0.1:${port}`;
    t = await startTestApp({
      externalUrl: url,
      sshPort,
      sshHost: '127.0.0.1',
      allowLocalWebhooks: true,
      webhookRetryDelayMs: 200,
    });
    await t.app.listen(port, '127.0.0.1');
    owner = await createUser(t, { name: 'Olive Owner' });
    developer = await createUser(t);
    ownerKey = join(tmp.make(), 'owner');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', ownerKey]);
    const key = await as(owner.token).post('/user/keys', {
      title: 'owner',
      key: readFileSync(`${ownerKey}.pub`, 'utf8').trim(),
    });
    expect(key.status).toBe(201);
    project = (await as(owner.token).post('/projects', { name: 'Extras', visibility: 'public' })).body;
    expect(
      (await as(owner.token).post(`/projects/${project.id}/members`, { user_id: developer.id, access_level: 30 }))
        .status,
    ).toBe(201);
    work = tmp.make();
    await gitOk(['init', '-q', '-b', 'master', work]);
    first = await commit('a.txt');
    second = await commit('b.txt');
    await gitOk(['push', '-q', remote(owner), 'master'], work);
  }, 240_000);
  afterAll(async () => {
    tmp.removeAll();
    await t.close();
    await receiver.close();
  });

  describe('project hooks: push_events_branch_filter and wiki_page_events', () => {
    it('stores and answers both; an invalid filter is refused in GitLab 11.3 words', async () => {
      const made = await as(owner.token).post(`/projects/${project.id}/hooks`, {
        url: `${hookBase}/filtered`,
        push_events_branch_filter: '  release/*  ',
        wiki_page_events: true,
        tag_push_events: true,
      });
      expect(made.status).toBe(201);
      expect(made.body).toMatchObject({ push_events_branch_filter: 'release/*', wiki_page_events: true });
      const all = await as(owner.token).post(`/projects/${project.id}/hooks`, {
        url: `${hookBase}/all`,
        tag_push_events: true,
      });
      expect(all.body).toMatchObject({ push_events_branch_filter: null, wiki_page_events: false });
      const read = await as(owner.token).get(`/projects/${project.id}/hooks/${made.body.id}`);
      expect(read.body).toEqual(made.body);
      const bad = await as(owner.token).post(`/projects/${project.id}/hooks`, {
        url: `${hookBase}/bad`,
        push_events_branch_filter: 'a..b',
      });
      expect([bad.status, bad.body]).toEqual([
        404,
        { message: '404 Project hook {:push_events_branch_filter=>["is not a valid branch name"]} Not Found' },
      ]);
      const updated = await as(owner.token).put(`/projects/${project.id}/hooks/${all.body.id}`, {
        url: `${hookBase}/all`,
        tag_push_events: true,
        push_events_branch_filter: '',
      });
      expect(updated.body.push_events_branch_filter).toBe('');
    });

    it('delivers push events of matching branches only; tag pushes are not filtered', async () => {
      await gitOk(['checkout', '-q', '-b', 'feature'], work);
      await commit('feature.txt');
      await gitOk(['push', '-q', remote(owner), 'feature'], work);
      await gitOk(['checkout', '-q', 'master'], work);
      await gitOk(['checkout', '-q', '-b', 'release/1.0'], work);
      await commit('release.txt');
      await gitOk(['push', '-q', remote(owner), 'release/1.0'], work);
      await gitOk(['tag', 'v1'], work);
      await gitOk(['push', '-q', remote(owner), 'v1'], work);
      await gitOk(['checkout', '-q', 'master'], work);

      const refs = (path: string) => received.filter((r) => r.path === path).map((r) => r.body.ref);
      await eventually(() => refs('/all').length === 3 && refs('/filtered').length === 2);
      // Let any delivery that should not happen arrive before the check.
      await new Promise((r) => setTimeout(r, 500));
      expect(refs('/all').sort()).toEqual(['refs/heads/feature', 'refs/heads/release/1.0', 'refs/tags/v1']);
      expect(refs('/filtered').sort()).toEqual(['refs/heads/release/1.0', 'refs/tags/v1']);
    });
  });

  describe('GET /projects/:id/repository/merge_base', () => {
    it('answers the common ancestor as a Commit, with either encoding of refs', async () => {
      const both = await as().get(`/projects/${project.id}/repository/merge_base?refs[]=feature&refs[]=release%2F1.0`);
      expect([both.status, both.body.id]).toEqual([200, second]);
      expect(Object.keys(both.body).sort()).toEqual(
        [
          'author_email',
          'author_name',
          'authored_date',
          'committed_date',
          'committer_email',
          'committer_name',
          'created_at',
          'id',
          'message',
          'parent_ids',
          'short_id',
          'title',
        ].sort(),
      );
      const commas = await as().get(`/projects/${project.id}/repository/merge_base?refs=${first},feature`);
      expect(commas.body.id).toBe(first);
      const three = await as().get(
        `/projects/${project.id}/repository/merge_base?refs[]=feature&refs[]=release%2F1.0&refs[]=${first}`,
      );
      // git's `merge-base A B C`: A against a merge of B and C.
      expect(three.body.id).toBe(second);
    });

    it("answers GitLab's 400s and 404s", async () => {
      const base = `/projects/${project.id}/repository/merge_base`;
      expect((await as().get(base)).body).toEqual({ error: 'refs is missing' });
      expect((await as().get(`${base}?refs[]=master`)).body).toEqual({ message: 'Provide at least 2 refs' });
      expect((await as().get(`${base}?refs[]=master&refs[]=nope`)).body).toEqual({
        message: 'Could not find ref: nope',
      });
      expect((await as().get(`${base}?refs[]=x&refs[]=master&refs[]=y`)).body).toEqual({
        message: 'Could not find refs: x, y',
      });
      // An unrelated history: an orphan branch.
      await gitOk(['checkout', '-q', '--orphan', 'orphan'], work);
      await commit('orphan.txt');
      await gitOk(['push', '-q', remote(owner), 'orphan'], work);
      await gitOk(['checkout', '-q', '-f', 'master'], work);
      const none = await as().get(`${base}?refs[]=master&refs[]=orphan`);
      expect([none.status, none.body]).toEqual([404, { message: '404 Merge Base Not Found' }]);
      const privateProject = (await as(owner.token).post('/projects', { name: 'Hidden' })).body;
      const hidden = await as(developer.token).get(
        `/projects/${privateProject.id}/repository/merge_base?refs[]=a&refs[]=b`,
      );
      expect([hidden.status, hidden.body]).toEqual([404, { message: '404 Project Not Found' }]);
    });
  });

  describe('POST /projects/:id/repository/commits/:sha/revert', () => {
    it('reverts onto the branch (201, GitLab message), records a push, then refuses the same revert as empty', async () => {
      const pushesBefore = (
        await t.db.query<{ n: number }[]>(
          `select count(*)::int as n from events where type = 'RepositoryPushed' and (data->>'projectId')::int = $1`,
          [project.id],
        )
      )[0].n;
      const res = await as(developer.token).post(`/projects/${project.id}/repository/commits/${second}/revert`, {
        branch: 'feature',
      });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        title: 'Revert "add b.txt"',
        message: `Revert "add b.txt"\n\nThis reverts commit ${second}`,
        parent_ids: [expect.any(String)],
      });
      const tree = await as().get(`/projects/${project.id}/repository/tree?ref=feature`);
      expect(tree.body.map((e: { name: string }) => e.name).sort()).toEqual(['a.txt', 'feature.txt']);
      await eventually(async () => {
        const [{ n }] = await t.db.query<{ n: number }[]>(
          `select count(*)::int as n from events where type = 'RepositoryPushed' and (data->>'projectId')::int = $1`,
          [project.id],
        );
        return n === pushesBefore + 1;
      });
      const again = await as(developer.token).post(`/projects/${project.id}/repository/commits/${second}/revert`, {
        branch: 'feature',
      });
      expect([again.status, again.body]).toEqual([400, { message: REVERT_REFUSED }]);
    });

    it('refuses a conflicting revert, an unknown commit or branch, a missing branch, and readers', async () => {
      // master changes a.txt after `first` made it: undoing `first` conflicts.
      await gitOk(['checkout', '-q', 'master'], work);
      await commit('a.txt', 'changed\n');
      await gitOk(['push', '-q', remote(owner), 'master'], work);
      const base = `/projects/${project.id}/repository/commits`;
      const conflict = await as(owner.token).post(`${base}/${first}/revert`, { branch: 'master' });
      expect([conflict.status, conflict.body]).toEqual([400, { message: REVERT_REFUSED }]);
      expect((await as(owner.token).post(`${base}/${'f'.repeat(40)}/revert`, { branch: 'master' })).body).toEqual({
        message: '404 Commit Not Found',
      });
      expect((await as(owner.token).post(`${base}/${second}/revert`, { branch: 'nope' })).body).toEqual({
        message: '404 Branch Not Found',
      });
      expect((await as(owner.token).post(`${base}/${second}/revert`)).body).toEqual({ error: 'branch is missing' });
      const stranger = await createUser(t);
      expect((await as(stranger.token).post(`${base}/${second}/revert`, { branch: 'master' })).status).toBe(403);
    });
  });

  describe('clients', () => {
    it('python-gitlab 3.12: repository_merge_base, commit.revert and files.head', async () => {
      const script = `
import json, sys, warnings
import gitlab
warnings.simplefilter("ignore")
gl = gitlab.Gitlab(sys.argv[1], private_token=sys.argv[2])
project = gl.projects.get(int(sys.argv[3]))
out = {}
out["merge_base"] = project.repository_merge_base(["feature", "release/1.0"])["id"]
project.branches.create({"branch": "py-revert", "ref": "release/1.0"})
reverted = project.commits.get(sys.argv[4]).revert(branch="py-revert")
out["revert"] = reverted["title"]
try:
    project.commits.get(sys.argv[4]).revert(branch="py-revert")
    out["revert_again"] = None
except gitlab.exceptions.GitlabRevertError as e:
    out["revert_again"] = [e.response_code, e.error_message]
head = project.files.head("a.txt", ref="master")
out["head"] = [head["X-Gitlab-File-Name"], head["X-Gitlab-Ref"], head["X-Gitlab-Size"]]
print(json.dumps(out))
`;
      const out = JSON.parse(
        await runPython(script, [url, owner.token, String(project.id), second.slice(0, 12)]),
      ) as unknown;
      expect(out).toEqual({
        merge_base: second,
        revert: 'Revert "add b.txt"',
        revert_again: [400, REVERT_REFUSED],
        head: ['a.txt', 'master', '8'],
      });
    });

    it('gitbeaker: Repositories.mergeBase and Commits.revert', async () => {
      const gb = await import('@gitbeaker/rest');
      const client: InstanceType<typeof Gitlab<false>> = new gb.Gitlab({ host: url, token: owner.token });
      expect((await client.Repositories.mergeBase(project.id, ['feature', 'release/1.0'])).id).toBe(second);
      await client.Branches.create(project.id, 'gb-revert', 'release/1.0');
      const reverted = await client.Commits.revert(project.id, second, 'gb-revert');
      expect(reverted.title).toBe('Revert "add b.txt"');
    });
  });

  describe('refusals', () => {
    it('refuses a push into an archived project in 10.x words, over HTTP (403) and SSH', async () => {
      const old = (await as(owner.token).post('/projects', { name: 'Old', visibility: 'public' })).body;
      await gitOk(['push', '-q', remote(owner, old.path_with_namespace), 'master'], work);
      expect((await as(owner.token).post(`/projects/${old.id}/archive`)).status).toBe(201);
      const overHttp = await git(['push', remote(owner, old.path_with_namespace), 'master:more'], work);
      expect(overHttp.status).not.toBe(0);
      expect(overHttp.out).toContain('You are not allowed to push code to this project.');
      expect(overHttp.out).toMatch(/403/);
      const overSsh = await git(['push', ssh(old.path_with_namespace), 'master:more'], work, sshEnv(ownerKey));
      expect(overSsh.status).not.toBe(0);
      expect(overSsh.out).toContain('GitLab: You are not allowed to push code to this project.');
    });

    it('answers an anonymous write 401 before any branch rule, protected branch or not', async () => {
      const file = `/projects/${project.id}/repository/files/new.txt`;
      for (const branch of ['master', 'feature']) {
        const res = await as().post(file, { branch, content: 'x', commit_message: 'anonymous' });
        expect([res.status, res.body]).toEqual([401, { message: '401 Unauthorized' }]);
      }
      const commits = await as().post(`/projects/${project.id}/repository/commits`, {
        branch: 'master',
        commit_message: 'anonymous',
        actions: [{ action: 'create', file_path: 'n.txt', content: 'x' }],
      });
      expect(commits.status).toBe(401);
      // A signed-in developer meets the protected branch: the files API's 400 in GitLab's words.
      const developerWrite = await as(developer.token).post(file, {
        branch: 'master',
        content: 'x',
        commit_message: 'dev',
      });
      expect([developerWrite.status, developerWrite.body]).toEqual([
        400,
        { message: 'You are not allowed to push into this branch' },
      ]);
    });
  });
});
