import { ProjectionRebuilder } from '@app/platform';
import { expectShape } from '../contract/shape';
import { gitOk, tempDirs } from '../support/git';
import { runPython } from '../support/python-gitlab';
import { createToken, createUser, type SeededUser } from '../support/seed';
import { eventually, freePort, startTestApp, type TestApp } from '../support/test-app';

const api = (path: string) => `/api/v4${path}`;
const ZERO = '0000000000000000000000000000000000000000';

/** Debian's python3-gitlab (3.12): `gl.events`, `project.events` and `user.events`. */
const PYTHON_SCRIPT = `
import json, sys, warnings
import gitlab
warnings.simplefilter("ignore")
url, token, project_id, user_id = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
gl = gitlab.Gitlab(url, private_token=token)
out = {}
out["mine"] = [e.action_name for e in gl.events.list(all=True, sort="asc")]
project = gl.projects.get(project_id, lazy=True)
out["project"] = [[e.action_name, getattr(e, "push_data", {}).get("ref")] for e in project.events.list(all=True, action="pushed", sort="asc")]
user = gl.users.get(user_id, lazy=True)
out["user"] = len(user.events.list(all=True, per_page=2))
print(json.dumps(out))
`;

interface EventJson {
  title: null;
  project_id: number;
  action_name: string;
  target_id: number | null;
  target_type: string | null;
  author_id: number;
  author_username: string;
  created_at: string;
  author: { id: number; username: string };
  push_data?: {
    commit_count: number;
    action: string;
    ref_type: string;
    commit_from: string | null;
    commit_to: string | null;
    ref: string;
    commit_title: string | null;
  };
}

/** The same day in UTC, `days` away: GitLab's `before` and `after` are calendar days. */
const day = (iso: string, days: number) => new Date(Date.parse(iso) + days * 86_400_000).toISOString().slice(0, 10);

describe('Events API (GitLab 10.x GET /events, /users/:id/events, /projects/:id/events)', () => {
  let t: TestApp;
  let base: string;
  let url: string;
  let owner: SeededUser;
  let member: SeededUser;
  let outsider: SeededUser;
  /** Private, owned by `owner`: four pushes (new branch, update, new tag, a branch made and deleted). */
  let secret: { id: number; path: string };
  /** Public, owned by `owner`: one push; `member` joined and left. */
  let open: { id: number; path: string };
  /** Public, made from an import URL. */
  let imported: { id: number; path: string };
  const sha: Record<string, string> = {};
  const tmp = tempDirs();

  const as = (token?: string) => {
    const auth = <R extends { set: (k: string, v: string) => R }>(r: R) => (token ? r.set('PRIVATE-TOKEN', token) : r);
    return {
      get: (path: string) => auth(t.http().get(api(path))),
      post: (path: string, body: object = {}) => auth(t.http().post(api(path))).send(body),
      delete: (path: string) => auth(t.http().delete(api(path))),
    };
  };
  const list = async (token: string | undefined, path: string): Promise<EventJson[]> => {
    const res = await as(token).get(path);
    expect(res.status).toBe(200);
    return res.body as EventJson[];
  };
  const names = (events: EventJson[]) => events.map((e) => e.action_name);

  async function newProject(
    name: string,
    visibility: string,
    more: object = {},
  ): Promise<{ id: number; path: string }> {
    const res = await as(owner.token).post('/projects', { name, visibility, ...more });
    expect(res.status).toBe(201);
    return { id: res.body.id, path: res.body.path_with_namespace };
  }
  const push = (work: string, path: string, ...refspecs: string[]) =>
    gitOk(['push', '-q', `http://git:${owner.token}@${base}/${path}.git`, ...refspecs], work);
  const commit = async (work: string, message: string) => {
    await gitOk(['commit', '-q', '--allow-empty', '-m', message], work);
    return (await gitOk(['rev-parse', 'HEAD'], work)).trim();
  };

  beforeAll(async () => {
    const port = await freePort();
    base = `127.0.0.1:${port}`;
    url = `http://${base}`;
    t = await startTestApp({ externalUrl: url });
    await t.app.listen(port, '127.0.0.1');
    [owner, member, outsider] = await Promise.all(Array.from({ length: 3 }, () => createUser(t)));
    secret = await newProject('secret', 'private');
    open = await newProject('open', 'public');
    imported = await newProject('imported', 'public', { import_url: 'https://example.com/some/repo.git' });

    const work = tmp.make();
    await gitOk(['init', '-q'], work);
    sha.first = await commit(work, 'First secret commit\n\nwith a body');
    await push(work, secret.path, 'master');
    sha.second = await commit(work, `${'A long title that goes on and on '.repeat(3)}\nbody`);
    await push(work, secret.path, 'master');
    await gitOk(['tag', 'v1.0'], work);
    await push(work, secret.path, 'refs/tags/v1.0');
    await push(work, secret.path, 'master:refs/heads/topic');
    await push(work, secret.path, ':refs/heads/topic');
    await push(work, open.path, 'master');

    expect(
      (await as(owner.token).post(`/projects/${open.id}/members`, { user_id: member.id, access_level: 30 })).status,
    ).toBe(201);
    expect((await as(owner.token).delete(`/projects/${open.id}/members/${member.id}`)).status).toBe(204);
  }, 240_000);
  afterAll(async () => {
    tmp.removeAll();
    await t.close();
  });

  describe('GET /projects/:id/events', () => {
    it("answers a project's events newest first in GitLab 10.x's shape, one push event per ref update", async () => {
      const events = await list(owner.token, `/projects/${secret.id}/events`);
      expect(names(events)).toEqual(['deleted', 'pushed new', 'pushed new', 'pushed to', 'pushed new', 'created']);
      for (const e of events) {
        expectShape(e, e.push_data ? 'push-event' : 'event');
        if (e.push_data) expectShape(e.push_data, 'push-event-payload');
        expect(e).toMatchObject({
          title: null,
          project_id: secret.id,
          target_id: null,
          target_type: null,
          target_title: null,
          author_id: owner.id,
          author_username: owner.username,
          author: { id: owner.id, username: owner.username, web_url: `${url}/${owner.username}` },
        });
      }
      expect(events.map((e) => e.push_data)).toEqual([
        {
          commit_count: 0,
          action: 'removed',
          ref_type: 'branch',
          commit_from: sha.second,
          commit_to: null,
          ref: 'topic',
          commit_title: null,
        },
        // A branch made at a commit already pushed brings no commit of its own.
        {
          commit_count: 0,
          action: 'created',
          ref_type: 'branch',
          commit_from: null,
          commit_to: sha.second,
          ref: 'topic',
          commit_title: null,
        },
        {
          ...events[2].push_data,
          action: 'created',
          ref_type: 'tag',
          commit_from: null,
          commit_to: sha.second,
          ref: 'v1.0',
        },
        {
          commit_count: 1,
          action: 'pushed',
          ref_type: 'branch',
          commit_from: sha.first,
          commit_to: sha.second,
          ref: 'master',
          // The first line, cut to 70 characters as Rails' truncate does.
          commit_title: `${'A long title that goes on and on '.repeat(3).slice(0, 67)}...`,
        },
        {
          commit_count: 1,
          action: 'created',
          ref_type: 'branch',
          commit_from: null,
          commit_to: sha.first,
          ref: 'master',
          commit_title: 'First secret commit',
        },
        undefined,
      ]);
      expect(Date.parse(events[0].created_at)).toBeGreaterThanOrEqual(Date.parse(events[5].created_at));
    });

    it('shows a project made from an import URL as imported, and a member joining and leaving as the member', async () => {
      expect(names(await list(undefined, `/projects/${imported.id}/events`))).toEqual(['imported']);
      const events = await list(undefined, `/projects/${open.id}/events`);
      expect(events.map((e) => [e.action_name, e.author_id])).toEqual([
        ['left', member.id],
        ['joined', member.id],
        ['pushed new', owner.id],
        ['created', owner.id],
      ]);
      // The owner of a personal namespace is a member from the start, but GitLab records no `joined` for the owner.
    });

    it("answers 404 for a project the caller cannot see, and a public project's events to anyone", async () => {
      for (const token of [undefined, outsider.token, member.token]) {
        const res = await as(token).get(`/projects/${secret.id}/events`);
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ message: '404 Project Not Found' });
      }
      expect((await as().get('/projects/999999/events')).status).toBe(404);
      expect((await as(outsider.token).get(`/projects/${encodeURIComponent(open.path)}/events`)).status).toBe(200);
      expect((await as(t.rootToken).get(`/projects/${secret.id}/events`)).body).toHaveLength(6);
    });

    it('filters by action, target_type, before and after (exclusive days, as GitLab) and sorts asc', async () => {
      const all = await list(owner.token, `/projects/${secret.id}/events`);
      const today = all[0].created_at;
      expect(names(await list(owner.token, `/projects/${secret.id}/events?action=created`))).toEqual(['created']);
      expect(await list(owner.token, `/projects/${secret.id}/events?action=pushed`)).toHaveLength(5);
      expect(await list(owner.token, `/projects/${secret.id}/events?action=closed`)).toEqual([]);
      expect(await list(owner.token, `/projects/${secret.id}/events?target_type=issue`)).toEqual([]);
      expect(await list(owner.token, `/projects/${secret.id}/events?after=${day(today, -1)}`)).toHaveLength(6);
      expect(await list(owner.token, `/projects/${secret.id}/events?after=${day(today, 0)}`)).toEqual([]);
      expect(await list(owner.token, `/projects/${secret.id}/events?before=${day(today, 1)}`)).toHaveLength(6);
      expect(await list(owner.token, `/projects/${secret.id}/events?before=${day(today, 0)}`)).toEqual([]);
      const asc = await list(owner.token, `/projects/${secret.id}/events?sort=asc`);
      expect(names(asc)).toEqual(names(all).reverse());
    });

    it("refuses bad filters with Grape's 400s", async () => {
      const cases: [string, string][] = [
        ['action=pushed_to', 'action does not have a valid value'],
        ['target_type=Issue', 'target_type does not have a valid value'],
        ['sort=up', 'sort does not have a valid value'],
        ['before=yesterday', 'before is invalid'],
        ['after=2016-02-30', 'after is invalid'],
      ];
      for (const [query, error] of cases) {
        const res = await as(owner.token).get(`/projects/${secret.id}/events?${query}`);
        expect([query, res.status, res.body]).toEqual([query, 400, { error }]);
      }
      // GitLab's own spec sends days without their leading zero.
      expect((await as(owner.token).get(`/projects/${secret.id}/events?after=2016-12-1`)).status).toBe(200);
    });

    it("pages with GitLab's headers", async () => {
      const res = await as(owner.token).get(`/projects/${secret.id}/events?per_page=2&page=2`);
      expect(res.status).toBe(200);
      expect(names(res.body)).toEqual(['pushed new', 'pushed to']);
      expect(res.headers).toMatchObject({
        'x-total': '6',
        'x-total-pages': '3',
        'x-page': '2',
        'x-per-page': '2',
        'x-next-page': '3',
        'x-prev-page': '1',
      });
      expect(res.headers.link).toContain(`<${url}/api/v4/projects/${secret.id}/events?per_page=2&page=3>; rel="next"`);
    });
  });

  describe('GET /events', () => {
    it("answers the caller's own events in the projects the caller can see; 401 without a token", async () => {
      expect((await as().get('/events')).status).toBe(401);
      const mine = await list(owner.token, '/events?per_page=100');
      expect(mine.map((e) => e.author_id).every((id) => id === owner.id)).toBe(true);
      expect(mine).toHaveLength(6 + 2 + 1);
      expect(names(await list(member.token, '/events'))).toEqual(['left', 'joined']);
      expect(await list(outsider.token, '/events')).toEqual([]);
    });

    it('is refused to a token with the read_user scope alone, as GitLab 10.x (api is needed)', async () => {
      const token = await createToken(t, owner.id, ['read_user']);
      expect((await as(token).get('/events')).status).toBe(403);
      expect((await as(token).get(`/users/${owner.id}/events`)).status).toBe(403);
    });
  });

  describe('GET /users/:id/events', () => {
    it("answers a user's events by id or username, never a private project's to those who cannot see it", async () => {
      const byOwner = await list(owner.token, `/users/${owner.username}/events?per_page=100`);
      expect(byOwner).toHaveLength(9);
      expect(await list(owner.token, `/users/${owner.id}/events?per_page=100`)).toEqual(byOwner);
      for (const token of [undefined, outsider.token, member.token]) {
        const seen = await list(token, `/users/${owner.id}/events?per_page=100`);
        expect(seen.map((e) => e.project_id).sort()).toEqual([open.id, open.id, imported.id].sort());
        expect(seen.some((e) => e.push_data?.ref === 'topic' || e.project_id === secret.id)).toBe(false);
      }
      const res = await as(outsider.token).get(`/users/${owner.id}/events?action=pushed`);
      expect(res.headers['x-total']).toBe('1');
      expect((await list(t.rootToken, `/users/${owner.id}/events?per_page=100`)).length).toBe(9);
    });

    it('answers 404 `User Not Found` for a user who does not exist', async () => {
      for (const who of ['999999', 'nobody-here']) {
        const res = await as(owner.token).get(`/users/${who}/events`);
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ message: '404 User Not Found' });
      }
    });

    it('follows visibility changes: a project made private hides its events from outsiders', async () => {
      const p = await newProject('flipping', 'public');
      expect((await list(outsider.token, `/users/${owner.id}/events?per_page=100`)).map((e) => e.project_id)).toContain(
        p.id,
      );
      expect(
        (
          await t
            .http()
            .put(api(`/projects/${p.id}`))
            .set('PRIVATE-TOKEN', owner.token)
            .send({ visibility: 'private' })
        ).status,
      ).toBe(200);
      expect(
        (await list(outsider.token, `/users/${owner.id}/events?per_page=100`)).map((e) => e.project_id),
      ).not.toContain(p.id);
      expect((await as(owner.token).delete(`/projects/${p.id}`)).status).toBe(202);
    });
  });

  it("takes a deleted project's events with it, as GitLab's cascade", async () => {
    const doomed = await newProject('doomed', 'public');
    expect(names(await list(owner.token, `/projects/${doomed.id}/events`))).toEqual(['created']);
    expect((await as(owner.token).delete(`/projects/${doomed.id}`)).status).toBe(202);
    const after = await list(owner.token, '/events?per_page=100');
    expect(after.some((e) => e.project_id === doomed.id)).toBe(false);
  });

  it("records the API's writes as pushes too (a README at creation, a branch made, a branch deleted)", async () => {
    const p = await newProject('written', 'private', { initialize_with_readme: true });
    expect(
      (await as(owner.token).post(`/projects/${p.id}/repository/branches`, { branch: 'feature', ref: 'master' }))
        .status,
    ).toBe(201);
    expect((await as(owner.token).delete(`/projects/${p.id}/repository/branches/feature`)).status).toBe(204);
    const events = await list(owner.token, `/projects/${p.id}/events`);
    expect(events.map((e) => [e.action_name, e.push_data?.ref, e.push_data?.commit_count])).toEqual([
      ['deleted', 'feature', 0],
      ['pushed new', 'feature', 0],
      ['pushed new', 'master', 1],
      ['created', undefined, undefined],
    ]);
    expect(events[2].push_data?.commit_title).toBe('Initial commit');
    expect((await as(owner.token).delete(`/projects/${p.id}`)).status).toBe(202);
  });

  it("takes a deleted user's events with them, as GitLab's cascade", async () => {
    const leaver = await createUser(t);
    expect(
      (await as(owner.token).post(`/projects/${open.id}/members`, { user_id: leaver.id, access_level: 30 })).status,
    ).toBe(201);
    const authors = async () => (await list(owner.token, `/projects/${open.id}/events`)).map((e) => e.author_id);
    expect(await authors()).toContain(leaver.id);
    expect((await as(t.rootToken).delete(`/users/${leaver.id}`)).status).toBe(204);
    await eventually(async () => expect(await authors()).not.toContain(leaver.id));
    expect(await authors()).toEqual([member.id, member.id, owner.id, owner.id]);
  });

  it('answers python-gitlab 3.12 (gl.events, project.events, user.events)', async () => {
    const out = JSON.parse(await runPython(PYTHON_SCRIPT, [url, owner.token, String(secret.id), String(owner.id)]));
    expect(out.mine.slice(0, 2)).toEqual(['created', 'created']);
    expect(out.mine).toHaveLength(9);
    expect(out.project).toEqual([
      ['pushed new', 'master'],
      ['pushed to', 'master'],
      ['pushed new', 'v1.0'],
      ['pushed new', 'topic'],
      ['deleted', 'topic'],
    ]);
    expect(out.user).toBe(9);
  });

  // Last: after every history above (pushes, members, deletions, a visibility change).
  it('rebuilds the events read model from the event store into exactly the live rows and answers', async () => {
    const dump = async () => ({
      events: (await t.db.query(`select * from activity_events order by position, seq`)) as unknown[],
      counts: (await t.db.query(
        `select * from activity_event_counts order by author_id, project_id, action`,
      )) as unknown[],
    });
    const live = await dump();
    // secret's 6, open's 4 and imported's 1: the projects deleted above took theirs.
    expect(live.events).toHaveLength(11);
    const answers = async () => ({
      mine: (await as(owner.token).get('/events?per_page=100')).body as unknown,
      project: (await as(owner.token).get(`/projects/${secret.id}/events`)).body as unknown,
      user: (await as(outsider.token).get(`/users/${owner.username}/events`)).body as unknown,
    });
    const before = await answers();
    await t.db.query(`truncate activity_events, activity_event_counts`);
    expect((await as(owner.token).get('/events')).body).toEqual([]);
    await t.app.get(ProjectionRebuilder).rebuild();
    expect(await dump()).toEqual(live);
    expect(await answers()).toEqual(before);
  });

  it('keeps the zero sha out of push_data', async () => {
    const events = await list(owner.token, `/projects/${secret.id}/events?action=pushed`);
    for (const e of events) expect([e.push_data?.commit_from, e.push_data?.commit_to]).not.toContain(ZERO);
  });
});
