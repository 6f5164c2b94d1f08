import { repositoryPath } from '@app/git';
import { CreateAccessToken } from '@app/users';
import { CommandBus } from '@nestjs/cqrs';
import { execFileSync } from 'node:child_process';
import {
  appendFileSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { backup, describeBackup, restore, RestoreRefused, type BackupSummary } from '../../apps/lode/src/operations';
import { TarReader, TarWriter, type TarEntry } from '../../apps/lode/src/operations/tar';
import { MIGRATIONS } from '../../apps/lode/src/lode.module';
import { runMigrations } from '@app/platform';
import { commitGraphCommits, gitOk, tempDirs } from '../support/git';
import { createUser, type SeededUser } from '../support/seed';
import {
  describeOnServers,
  dropDatabase,
  eventually,
  freePort,
  startTestApp,
  testConfig,
  type TestApp,
} from '../support/test-app';
import { startWebhookReceiver, type Delivery, type WebhookReceiver } from '../support/webhook-receiver';

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);
const GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

/** Every row of every table of Lode's schema as text, sorted, and every sequence's value. */
async function databaseContents(databaseUrl: string): Promise<Record<string, string[]>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const contents: Record<string, string[]> = {};
    const { rows: tables } = await client.query<{ name: string; kind: string }>(
      `select relname::text as name, relkind::text as kind from pg_class
        where relnamespace = 'public'::regnamespace and relkind in ('r', 'S') and relname <> 'schema_migrations'
        order by relname`,
    );
    for (const { name, kind } of tables) {
      const sql =
        kind === 'S'
          ? `select json_build_object('last_value', last_value, 'is_called', is_called)::text as j from "${name}"`
          : `select row_to_json(t)::text as j from "${name}" t`;
      contents[name] = (await client.query<{ j: string }>(sql)).rows.map((r) => r.j).sort();
    }
    return contents;
  } finally {
    await client.end();
  }
}

async function sql<T extends object>(databaseUrl: string, text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query<T>(text)).rows;
  } finally {
    await client.end();
  }
}

/** Every ref and what it points at, HEAD's target, and `git fsck`'s verdict. */
async function repositoryState(path: string): Promise<{ refs: string; head: string }> {
  return {
    refs: await gitOk(['for-each-ref', '--format=%(objectname) %(objecttype) %(refname)'], path),
    head: readFileSync(join(path, 'HEAD'), 'utf8'),
  };
}

// It makes its targets by database URL; cli-backup.e2e-spec.ts runs backup and restore in embedded mode.
describeOnServers('backup and restore', () => {
  const tmp = tempDirs();
  let source: TestApp;
  let target: TestApp | undefined;
  let sourceBase: string;
  let receiver: WebhookReceiver;
  let hookBase: string;
  let received: Delivery[];
  let alice: SeededUser;
  let bob: SeededUser;
  let personalToken: string;
  let project: { id: number; path_with_namespace: string };
  let groupProject: { id: number; path_with_namespace: string };
  let empty: { id: number; path_with_namespace: string };
  let fork: { id: number; path_with_namespace: string };
  let group: { id: number };
  let subgroup: { id: number };
  let hookId: number;
  let upload: { url: string };
  let archive: string;
  let summary: BackupSummary;
  let sourceContents: Record<string, string[]>;
  const databases: string[] = [];

  const as = (t: TestApp, token: string) => ({
    get: (path: string) => t.http().get(`/api/v4${path}`).set('PRIVATE-TOKEN', token),
    post: (path: string) => t.http().post(`/api/v4${path}`).set('PRIVATE-TOKEN', token),
    put: (path: string) => t.http().put(`/api/v4${path}`).set('PRIVATE-TOKEN', token),
  });
  const remote = (p: { path_with_namespace: string }, token: string, base = sourceBase) =>
    `http://git:${token}@${base}/${p.path_with_namespace}.git`;
  const unfinishedJobs = async (databaseUrl: string) =>
    Number(
      (await sql<{ n: string }>(databaseUrl, `select count(*)::text as n from outbox where finished_at is null`))[0].n,
    );

  /** A clone of `remoteUrl` with commits on master and `feature`, a lightweight and an annotated tag, all pushed. */
  async function pushHistory(remoteUrl: string, label: string): Promise<void> {
    const work = tmp.make();
    await gitOk(['init', '-q', '-b', 'master', work]);
    for (const n of [1, 2, 3]) {
      writeFileSync(join(work, `file-${n}.txt`), `${label} ${n}\n`);
      await gitOk(['add', '.'], work);
      await gitOk(['commit', '-q', '-m', `${label}: commit ${n}`], work);
    }
    await gitOk(['tag', 'v1.0'], work);
    await gitOk(['tag', '-a', 'v2.0', '-m', `${label} release two`], work);
    await gitOk(['checkout', '-q', '-b', 'feature'], work);
    writeFileSync(join(work, 'feature.txt'), `${label} feature\n`);
    await gitOk(['add', '.'], work);
    await gitOk(['commit', '-q', '-m', `${label}: a feature`], work);
    await gitOk(['push', '-q', remoteUrl, 'master', 'feature', '--tags'], work);
  }

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    received = receiver.received;
    hookBase = receiver.url;

    // The SSH server on, so the data directory has host keys to carry (or not).
    source = await startTestApp({ allowLocalWebhooks: true, defaultBranchProtection: 0, sshPort: await freePort() });
    await source.app.listen(0, '127.0.0.1');
    sourceBase = `127.0.0.1:${(source.app.getHttpServer().address() as AddressInfo).port}`;
    const root = as(source, source.rootToken);

    alice = await createUser(source);
    bob = await createUser(source);
    personalToken = (
      await source.app
        .get(CommandBus)
        .execute(
          new CreateAccessToken(
            { userId: alice.id, name: 'laptop', scopes: ['api'], impersonation: false, expiresAt: null },
            { origin: 'cli' },
          ),
        )
    ).secret;
    group = (await root.post('/groups').send({ name: 'Team', path: 'team', visibility: 'public' })).body;
    subgroup = (await root.post('/groups').send({ name: 'Sub', path: 'sub', parent_id: group.id })).body;
    expect((await root.post(`/groups/${group.id}/members`).send({ user_id: bob.id, access_level: 40 })).status).toBe(
      201,
    );

    project = (await as(source, alice.token).post('/projects').send({ name: 'App', visibility: 'public' })).body;
    groupProject = (await as(source, bob.token).post('/projects').send({ name: 'Lib', namespace_id: subgroup.id }))
      .body;
    empty = (await as(source, alice.token).post('/projects').send({ name: 'Nothing yet' })).body;
    expect(project.id && groupProject.id && empty.id).toBeTruthy();
    expect(
      (
        await as(source, alice.token)
          .post(`/projects/${project.id}/members`)
          .send({ user_id: bob.id, access_level: 30 })
      ).status,
    ).toBe(201);

    const hook = await as(source, alice.token)
      .post(`/projects/${project.id}/hooks`)
      .send({ url: `${hookBase}/app`, token: 'hook-s3cret', push_events: true, tag_push_events: true });
    expect(hook.status).toBe(201);
    hookId = hook.body.id;

    await pushHistory(remote(project, alice.token), 'app');
    await pushHistory(remote(groupProject, bob.token), 'lib');
    await eventually(() => received.length >= 3); // the push and two tag pushes

    const keys = tmp.make();
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'deploy@lode.test', '-f', join(keys, 'd')]);
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'alice@lode.test', '-f', join(keys, 'a')]);
    const deployKey = readFileSync(join(keys, 'd.pub'), 'utf8').trim();
    expect(
      (await as(source, alice.token).post(`/projects/${project.id}/deploy_keys`).send({ title: 'ci', key: deployKey }))
        .status,
    ).toBe(201);
    const userKey = readFileSync(join(keys, 'a.pub'), 'utf8').trim();
    expect((await as(source, alice.token).post('/user/keys').send({ title: 'laptop', key: userKey })).status).toBe(201);
    expect(
      (await as(source, alice.token).post(`/projects/${project.id}/protected_branches`).send({ name: 'release-*' }))
        .status,
    ).toBe(201);
    expect(
      (
        await as(source, alice.token)
          .post(`/projects/${project.id}/repository/tags/v2.0/release`)
          .send({ description: 'Notes for **two**' })
      ).status,
    ).toBe(201);

    const avatar = await as(source, source.rootToken)
      .put(`/users/${alice.id}`)
      .attach('avatar', PNG, { filename: 'alice.png', contentType: 'image/png' });
    expect(avatar.status).toBe(200);
    const projectAvatar = await as(source, alice.token)
      .put(`/projects/${project.id}`)
      .attach('avatar', GIF, { filename: 'logo.gif', contentType: 'image/gif' });
    expect(projectAvatar.status).toBe(200);
    const uploaded = await as(source, alice.token)
      .post(`/projects/${project.id}/uploads`)
      .attach('file', Buffer.from('some notes\n'), 'notes – ünïcode.txt');
    expect(uploaded.status).toBe(201);
    upload = uploaded.body;

    const forked = await as(source, bob.token).post(`/projects/${project.id}/fork`);
    expect(forked.status).toBe(201);
    fork = forked.body;
    await eventually(
      async () => (await as(source, bob.token).get(`/projects/${fork.id}`)).body.import_status === 'finished',
    );
    // Nothing left to do: the snapshot then holds no job still to run.
    await eventually(async () => (await unfinishedJobs(source.config.databaseUrl)) === 0, 20_000);
  }, 120_000);

  afterAll(async () => {
    await target?.close();
    await source?.close();
    for (const url of databases) await dropDatabase(url);
    tmp.removeAll();
    await receiver?.close();
  });

  it('writes one archive while Lode serves, and says what it wrote', async () => {
    sourceContents = await databaseContents(source.config.databaseUrl);
    const phases = new Set<string>();
    summary = await backup({
      config: source.config,
      to: tmp.make(),
      withSecrets: true,
      progress: (p) => phases.add(p.phase),
    });
    archive = summary.file;
    expect(archive).toMatch(/lode-backup-\d{8}T\d{6}\.tar$/);
    expect([...phases].sort()).toEqual(['database', 'files', 'repositories', 'secrets']);
    const events = Number(
      (await sql<{ n: string }>(source.config.databaseUrl, 'select count(*) as n from events'))[0].n,
    );
    expect(summary.database.events).toBe(events);
    expect(summary.database.rows).toBe(
      Object.entries(sourceContents)
        .filter(([name]) => !name.endsWith('_seq'))
        .reduce((n, [, rows]) => n + rows.length, 0),
    );
    expect(summary.repositories).toMatchObject({ total: 4, empty: 1 });
    // app and its fork: master, feature, v1.0, v2.0 each; lib the same
    expect(summary.repositories.refs).toBe(12);
    expect(summary.files.count).toBe(4); // alice's avatar, the project's and its fork's copy, an upload
    expect(summary.secrets.included).toEqual(
      expect.arrayContaining(['secret.key', 'ssh/ssh_host_ed25519_key', 'ssh/ssh_host_rsa_key']),
    );
    expect(summary.secrets.leftOut).toEqual([]);
    expect(summary.bytes).toBeGreaterThan(summary.repositories.bytes);
    expect(describeBackup(summary).join('\n')).toMatch(/repositories: 4 \(1 empty\), 12 refs/);
    // The snapshot changed nothing.
    expect(await databaseContents(source.config.databaseUrl)).toEqual(sourceContents);
    // An archive stock tar reads.
    const listed = execFileSync('tar', ['-tf', archive], { encoding: 'utf8' }).trim().split('\n');
    expect(listed[0]).toBe('lode-backup.json');
    expect(listed.at(-1)).toBe('manifest.json');
  });

  it('refuses to overwrite an existing file', async () => {
    await expect(backup({ config: source.config, to: archive })).rejects.toThrow(/exists already/);
  });

  it('restores into an empty installation: every row, every sequence, the same answers', async () => {
    const config = testConfig({ rootToken: source.rootToken, allowLocalWebhooks: true, defaultBranchProtection: 0 });
    config.dataDir = await mkdtemp(join(tmpdir(), 'lode-restored-'));
    databases.push(config.databaseUrl);
    const restored = await restore({ config, from: archive });
    expect(restored.database).toMatchObject({ events: summary.database.events, rows: summary.database.rows });
    expect(restored.repositories).toEqual({ total: 4, empty: 1, refs: 12 });
    expect(restored.files.count).toBe(4);
    expect(restored.pendingMigrations).toEqual([]);
    expect(restored.notes).toEqual([]);
    expect(await databaseContents(config.databaseUrl)).toEqual(sourceContents);

    const before = received.length;
    target = await startTestApp({
      databaseUrl: config.databaseUrl,
      dataDir: config.dataDir,
      rootToken: source.rootToken,
      allowLocalWebhooks: true,
      defaultBranchProtection: 0,
    });
    await target.app.listen(0, '127.0.0.1');

    const byRoot = (t: TestApp) => as(t, source.rootToken);
    const paths = [
      '/users?per_page=100',
      `/users/${alice.id}`,
      `/users/${bob.id}`,
      `/users/${alice.id}/keys`,
      `/users/${alice.id}/impersonation_tokens`,
      `/users/${alice.id}/projects`,
      '/groups?all_available=true',
      `/groups/${group.id}`,
      `/groups/${group.id}/subgroups`,
      `/groups/${subgroup.id}/projects`,
      `/groups/${group.id}/members`,
      '/projects?per_page=100',
      '/deploy_keys',
    ];
    for (const p of [project, groupProject, empty, fork])
      paths.push(
        `/projects/${p.id}?statistics=true`,
        `/projects/${p.id}/members`,
        `/projects/${p.id}/users`,
        `/projects/${p.id}/forks`,
        `/projects/${p.id}/hooks`,
        `/projects/${p.id}/deploy_keys`,
        `/projects/${p.id}/protected_branches`,
        `/projects/${p.id}/repository/branches`,
        `/projects/${p.id}/repository/branches/feature`,
        `/projects/${p.id}/repository/tags`,
        `/projects/${p.id}/repository/tags/v2.0`,
        `/projects/${p.id}/repository/commits?ref_name=feature`,
        `/projects/${p.id}/repository/commits?all=true`,
        `/projects/${p.id}/repository/commits/v2.0`,
        `/projects/${p.id}/repository/tree?recursive=true&ref=feature`,
        `/projects/${p.id}/repository/files/file-1.txt?ref=master`,
        `/projects/${p.id}/repository/contributors`,
        `/projects/${p.id}/repository/compare?from=v1.0&to=feature`,
      );
    paths.push(`/projects/${project.id}/hooks/${hookId}`, `/projects/${project.id}/hooks/${hookId}/events`);
    let compared = 0;
    for (const path of paths) {
      const [a, b] = [await byRoot(source).get(path), await byRoot(target).get(path)];
      expect({ path, status: b.status, body: b.text }).toEqual({ path, status: a.status, body: a.text });
      if (a.status === 200) compared += 1;
    }
    expect(compared).toBeGreaterThan(60);
    for (const who of [alice, bob]) {
      const [a, b] = [await as(source, who.token).get('/user'), await as(target, who.token).get('/user')];
      expect(b.text).toBe(a.text);
    }
    // Avatars and uploads are served from the restored files, byte for byte.
    const me = (await as(target, alice.token).get('/user')).body;
    for (const url of [me.avatar_url, (await byRoot(target).get(`/projects/${project.id}`)).body.avatar_url]) {
      const pathname = new URL(url).pathname;
      const [a, b] = [await source.http().get(pathname).buffer(true), await target.http().get(pathname).buffer(true)];
      expect(b.status).toBe(200);
      expect(Buffer.compare(b.body as Buffer, a.body as Buffer)).toBe(0);
    }
    const uploadPath = `/${project.path_with_namespace}${upload.url}`;
    const servedUpload = await target.http().get(uploadPath);
    expect(servedUpload.status).toBe(200);
    expect(servedUpload.text).toBe('some notes\n');
    // Every job had run before the backup: the restored installation sends no webhook again.
    await new Promise((r) => setTimeout(r, 1500));
    expect(received.length).toBe(before);
  });

  it('puts every repository back as it was: all refs, HEAD, config, fsck clean, and clones match', async () => {
    for (const p of [project, groupProject, empty, fork]) {
      const [a, b] = [repositoryPath(source.config.dataDir, p.id), repositoryPath(target!.config.dataDir, p.id)];
      expect(await repositoryState(b)).toEqual(await repositoryState(a));
      expect(readFileSync(join(b, 'config'), 'utf8')).toBe(readFileSync(join(a, 'config'), 'utf8'));
      await gitOk(['fsck', '--strict', '--no-dangling'], b);
      // The restored history is in a commit-graph, every commit of it.
      const commits = Number((await gitOk(['rev-list', '--all', '--count'], b)).trim());
      expect(await commitGraphCommits(b)).toBe(commits);
      if (p === empty) expect(commits).toBe(0);
    }
    const targetBase = `127.0.0.1:${(target!.app.getHttpServer().address() as AddressInfo).port}`;
    for (const p of [project, fork]) {
      const [a, b] = [join(tmp.make(), 'a'), join(tmp.make(), 'b')];
      await gitOk(['clone', '-q', '--mirror', remote(p, bob.token), a]);
      await gitOk(['clone', '-q', '--mirror', remote(p, bob.token, targetBase), b]);
      expect(await repositoryState(b)).toEqual(await repositoryState(a));
      await gitOk(['fsck', '--strict'], b);
    }
    // The empty project's repository is there and empty, with its default branch still to come.
    expect(await gitOk(['for-each-ref'], repositoryPath(target!.config.dataDir, empty.id))).toBe('');
  });

  it("keeps the old tokens working (they are digests) and the hooks' sealed token (with the secrets)", async () => {
    for (const token of [personalToken, alice.token, source.rootToken]) {
      const res = await as(target!, token).get('/user');
      expect(res.status).toBe(200);
    }
    expect((await as(target!, 'not-a-token').get('/user')).status).toBe(401);
    // The SSH host keys and the secret key are the source's.
    for (const file of ['secret.key', 'ssh/ssh_host_ed25519_key', 'ssh/ssh_host_ecdsa_key'])
      expect(readFileSync(join(target!.config.dataDir, file))).toEqual(readFileSync(join(source.config.dataDir, file)));
    // A push to the restored installation is delivered with the hook's token, which only the restored key opens.
    const targetBase = `127.0.0.1:${(target!.app.getHttpServer().address() as AddressInfo).port}`;
    const work = join(tmp.make(), 'w');
    await gitOk(['clone', '-q', remote(project, alice.token, targetBase), work]);
    writeFileSync(join(work, 'after-restore.txt'), 'new\n');
    await gitOk(['add', '.'], work);
    await gitOk(['commit', '-q', '-m', 'after the restore'], work);
    const before = received.length;
    await gitOk(['push', '-q', 'origin', 'master'], work);
    const hit = (await eventually(() => received.slice(before).find((r) => r.path === '/app') ?? false)) as Delivery;
    expect(hit.headers['x-gitlab-token']).toBe('hook-s3cret');
  });

  it('refuses a target that is not empty: a database with events, a data directory with repositories', async () => {
    const withEvents = testConfig({ databaseUrl: target!.config.databaseUrl });
    withEvents.dataDir = tmp.make();
    await expect(restore({ config: withEvents, from: archive })).rejects.toThrow(
      /target database is not empty \(\w+ holds rows/,
    );
    await expect(restore({ config: target!.config, from: archive })).rejects.toThrow(/holds repositories already/);
    const config = testConfig();
    config.dataDir = tmp.make();
    databases.push(config.databaseUrl);
    mkdirSync(join(config.dataDir, 'repositories', '@hashed', 'ab', 'cd', 'x.git'), { recursive: true });
    const refused = restore({ config, from: archive });
    await expect(refused).rejects.toThrow(RestoreRefused);
    await expect(refused).rejects.toThrow(/holds repositories already/);
  });

  it('refuses an archive cut short, or damaged anywhere, and leaves the target empty', async () => {
    const reader = await TarReader.open(archive);
    const entries = reader.entries;
    await reader.close();
    const size = readFileSync(archive).length;
    const cut = join(tmp.make(), 'cut.tar');
    const lastBundle = entries.filter((e) => e.name.endsWith('.bundle')).at(-1)!;
    const firstRows = entries.find((e) => e.name.startsWith('database/events/'))!;
    const manifest = entries.at(-1)!;
    const cases: [string, (file: string) => void, RegExp][] = [
      ['cut in the manifest', (f) => truncateSync(f, size - 1500), /cut short/],
      ['cut in a bundle', (f) => truncateSync(f, lastBundle.offset + 100), /cut short/],
      ['without its manifest', (f) => endBefore(f, manifest), /incomplete: it does not end with its manifest/],
      ['not a tar file', (f) => writeFileSync(f, '{"format": 1}\n'.repeat(100)), /not a tar archive/],
      ['a byte changed in the rows', (f) => flip(f, firstRows.offset + 30), /damaged: database\/events/],
      [
        'a byte changed in the last bundle',
        (f) => flip(f, lastBundle.offset + lastBundle.size - 30),
        /damaged: repositories/,
      ],
    ];
    for (const [label, damage, message] of cases) {
      copyFileSync(archive, cut);
      damage(cut);
      const config = testConfig();
      config.dataDir = tmp.make();
      databases.push(config.databaseUrl);
      const attempt = restore({ config, from: cut });
      await expect(attempt).rejects.toThrow(RestoreRefused);
      await expect(attempt.catch((err: Error) => `${label}: ${err.message}`)).resolves.toMatch(message);
      // Nothing half-restored: no rows, no repository, no upload left.
      const rows = await sql<{ n: string }>(
        config.databaseUrl,
        `select (select count(*) from events) + (select count(*) from users) as n`,
      ).catch(() => [{ n: '0' }]);
      expect(`${label}: ${rows[0].n}`).toBe(`${label}: 0`);
      expect(`${label}: ${listRepositories(config.dataDir).join(',')}`).toBe(`${label}: `);
      expect(
        existsSync(join(config.dataDir, 'uploads')) ? readdirRecursive(join(config.dataDir, 'uploads')) : [],
      ).toEqual([]);
    }
  });

  it('leaves the secrets out unless asked, says what that means, and the restore says what cannot be opened', async () => {
    const without = await backup({ config: source.config, to: tmp.make() });
    const reader = await TarReader.open(without.file);
    const names = reader.entries.map((e) => e.name);
    await reader.close();
    expect(names.filter((n) => /^data\/(ssh|secret\.key|initial_root_token)/.test(n))).toEqual([]);
    expect(names).toEqual(expect.arrayContaining([expect.stringMatching(/^data\/uploads\//)]));
    expect(without.secrets).toEqual({ included: [], leftOut: ['ssh/', 'secret.key'] });
    expect(without.notes.join('\n')).toMatch(/secret\.key was left out .* cannot open the sealed hook tokens/);
    expect(without.notes.join('\n')).toMatch(/SSH host keys .* changed host key/);

    const config = testConfig();
    config.dataDir = tmp.make();
    databases.push(config.databaseUrl);
    const restored = await restore({ config, from: without.file });
    expect(restored.secrets.restored).toEqual([]);
    expect(restored.notes.join('\n')).toMatch(/1 hook\(s\) have sealed secrets .* no key here opens/);
    expect(existsSync(join(config.dataDir, 'ssh'))).toBe(false);
    expect(existsSync(join(config.dataDir, 'secret.key'))).toBe(false);
  });

  it('refuses an archive of a newer Lode (a migration or a format it does not know) and one that writes outside its place', async () => {
    const cases: [string, (header: Json, manifest: Json) => void, RegExp][] = [
      [
        'a newer migration',
        (header, manifest) => {
          for (const doc of [header, manifest])
            (doc.migrations as unknown[]).push({ timestamp: 1999999999999, name: 'Future1999999999999' });
        },
        /comes from a newer Lode: .* 1 migration\(s\) this Lode does not know \(Future1999999999999\)/,
      ],
      ['a newer format', (header) => void (header.format = 2), /format 2, which this Lode \(format 1\) cannot read/],
      [
        'a file outside uploads',
        (_header, manifest) => {
          const files = manifest.files as { path: string; entry: string }[];
          files[0].path = 'hooks/pre-receive';
          files[0].entry = 'data/hooks/pre-receive';
        },
        /a file Lode does not restore: hooks\/pre-receive/,
      ],
      [
        'a repository elsewhere',
        (_header, manifest) =>
          void ((manifest.repositories as { path: string }[])[0].path = 'repositories/../../x.git'),
        /odd repository path/,
      ],
    ];
    for (const [label, change, message] of cases) {
      const changed = join(tmp.make(), 'changed.tar');
      await rewriteArchive(archive, changed, change);
      const config = testConfig();
      config.dataDir = tmp.make();
      databases.push(config.databaseUrl);
      const attempt = restore({ config, from: changed });
      await expect(attempt.catch((err: Error) => `${label}: ${err.message}`)).resolves.toMatch(message);
      // Refused before anything was made: not even the database.
      await expect(sql(config.databaseUrl, 'select 1')).rejects.toThrow(/does not exist/);
    }
  });

  it('restores an archive of an older Lode at its level; the newer migrations run at the next start', async () => {
    const older = testConfig();
    older.dataDir = tmp.make();
    databases.push(older.databaseUrl);
    await runMigrations(older, MIGRATIONS.slice(0, -1));
    const made = await backup({ config: older, to: tmp.make() });
    expect(made.database.migrationLevel).not.toBe(null);

    const config = testConfig();
    config.dataDir = tmp.make();
    databases.push(config.databaseUrl);
    const restored = await restore({ config, from: made.file });
    expect(restored.pendingMigrations).toHaveLength(1);
    expect(restored.notes.join('\n')).toMatch(/1 migration\(s\) the archive predates; they run at the next start/);
    const level = await sql<{ name: string }>(config.databaseUrl, 'select name from schema_migrations order by id');
    expect(level.map((m) => m.name)).not.toContain(restored.pendingMigrations[0]);
    expect(level).toHaveLength(MIGRATIONS.length - 1);
    await runMigrations(config, MIGRATIONS);
    expect(await sql(config.databaseUrl, 'select name from schema_migrations')).toHaveLength(MIGRATIONS.length);
  });

  it('takes a consistent snapshot while writes run: every stream contiguous, every read model row with its events', async () => {
    let writing = true;
    let writes = 0;
    let steps = 0;
    const writers = [0, 1, 2].map(async (n) => {
      while (writing) {
        const created = await as(source, alice.token)
          .post('/projects')
          .send({ name: `busy ${n} ${writes}`, description: 'made during a backup' });
        expect(created.status).toBe(201);
        steps += 1;
        await as(source, alice.token).put(`/projects/${created.body.id}`).send({ description: 'changed' });
        steps += 1;
        await pushHistory(remote(created.body, alice.token), `busy-${n}`);
        steps += 1;
        writes += 1;
      }
    });
    await eventually(() => writes >= 2, 30_000);
    const stepsBefore = steps;
    const during = await backup({ config: source.config, to: tmp.make() });
    const stepsDuring = steps - stepsBefore;
    writing = false;
    await Promise.all(writers);

    const config = testConfig();
    config.dataDir = tmp.make();
    databases.push(config.databaseUrl);
    const restored = await restore({ config, from: during.file });
    expect(restored.database.events).toBe(during.database.events);
    const gaps = await sql<{ stream_id: string }>(
      config.databaseUrl,
      `select stream_id from events group by stream_id
        having min(stream_version) <> 1 or max(stream_version) <> count(*)`,
    );
    expect(gaps).toEqual([]);
    const projectsWithoutEvents = await sql<{ id: number }>(
      config.databaseUrl,
      `select id from projects p where not exists (select 1 from events e where e.stream_id = 'project-' || p.id)`,
    );
    expect(projectsWithoutEvents).toEqual([]);
    const eventsWithoutProject = await sql<{ stream_id: string }>(
      config.databaseUrl,
      `select distinct stream_id from events e where e.type = 'ProjectCreated'
         and not exists (select 1 from projects p where 'project-' || p.id = e.stream_id)`,
    );
    expect(eventsWithoutProject).toEqual([]);
    // Every project of the snapshot has its repository, and each is sound.
    const ids = await sql<{ id: number }>(config.databaseUrl, 'select id from projects');
    for (const { id } of ids) await gitOk(['fsck', '--no-dangling'], repositoryPath(config.dataDir, id));
    expect(during.repositories.total).toBe(ids.length);
    // The writes did run while the backup did.
    expect(stepsDuring).toBeGreaterThan(0);
  }, 120_000);
});

type Json = Record<string, unknown>;

/** A copy of `from` whose header and manifest `change` edited (the manifest's record of the header follows). */
async function rewriteArchive(from: string, to: string, change: (header: Json, manifest: Json) => void): Promise<void> {
  const reader = await TarReader.open(from);
  const header = JSON.parse((await reader.read(reader.entries[0])).toString()) as Json;
  const manifest = JSON.parse((await reader.read(reader.entries.at(-1)!)).toString()) as Json;
  change(header, manifest);
  const writer = await TarWriter.create(to);
  const headerEntry = await writer.addBuffer('lode-backup.json', Buffer.from(JSON.stringify(header)));
  (manifest.entries as Json)['lode-backup.json'] = { size: headerEntry.size, sha256: headerEntry.sha256 };
  for (const entry of reader.entries.slice(1, -1)) await writer.addBuffer(entry.name, await reader.read(entry));
  await writer.addBuffer('manifest.json', Buffer.from(JSON.stringify(manifest)));
  await writer.finish();
  await reader.close();
}

/** Cuts the archive before `entry` and ends it there properly: a complete tar without the rest. */
function endBefore(file: string, entry: TarEntry): void {
  truncateSync(file, entry.offset - 512);
  appendFileSync(file, Buffer.alloc(1024));
}

function flip(file: string, offset: number): void {
  const data = readFileSync(file);
  data[offset] ^= 0xff;
  writeFileSync(file, data);
}

function listRepositories(dataDir: string): string[] {
  const root = join(dataDir, 'repositories', '@hashed');
  if (!existsSync(root)) return [];
  return readdirRecursive(root).filter((p) => p.endsWith('/HEAD'));
}

function readdirRecursive(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}
