import { GitWorkBudget } from '@app/git';
import { defaultGitBudget } from '@app/platform';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { get, type IncomingMessage } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { getPriority } from 'node:os';
import { join } from 'node:path';
import { git, gitOk, tempDirs } from '../support/git';
import { eventually, startTestApp, type TestApp } from '../support/test-app';

/**
 * Issue 23, "heavy git work has a budget": one `git archive` for twenty requests of one cold
 * archive, every archive whole, a bounded wait then 503 with Retry-After (GitLab's JSON body on the
 * API, plain text git prints on smart HTTP), and git children at a lower CPU priority.
 */
describe('the heavy git work budget', () => {
  let t: TestApp;
  let port: number;
  let project: { id: number; path_with_namespace: string };
  let head: string;
  const tmp = tempDirs();
  /** Generous: archives of 8 MB of noise on a shared two-core machine. */
  const SLOW = 180_000;

  /** A GET on the listening server, its whole body read. */
  const fetchAll = (path: string) =>
    new Promise<{ status: number; headers: IncomingMessage['headers']; body: Buffer }>((resolve, reject) => {
      get({ host: '127.0.0.1', port, path }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      }).on('error', reject);
    });
  const metric = async (name: string, kind?: string): Promise<number> => {
    const text = (await fetchAll('/-/metrics')).body.toString();
    const series = kind ? `${name}{kind="${kind}"}` : name;
    const line = text.split('\n').find((l) => l.startsWith(`${series} `));
    return line ? Number(line.split(' ')[1]) : 0;
  };
  const archive = (format = '') => `/api/v4/projects/${project.id}/repository/archive${format}?sha=master`;

  beforeAll(async () => {
    t = await startTestApp({
      // One archive and one clone at a time, a short wait: the bound is reached on purpose.
      gitBudget: { ...defaultGitBudget(2), archives: 1, clones: 1, waitMs: 500, nice: 10 },
    });
    await t.app.listen(0, '127.0.0.1');
    port = (t.app.getHttpServer().address() as AddressInfo).port;
    const created = await t
      .http()
      .post('/api/v4/projects')
      .set('PRIVATE-TOKEN', t.rootToken)
      .send({ name: 'Heavy', visibility: 'public' });
    project = created.body;
    // 8 MB that compresses to nothing: archives and packs of it take a while, and fill every buffer.
    const dir = tmp.make();
    await gitOk(['init', '-q', dir]);
    writeFileSync(join(dir, 'README.md'), 'heavy\n');
    writeFileSync(join(dir, 'noise.bin'), randomBytes(8 * 1024 * 1024));
    await gitOk(['add', '.'], dir);
    await gitOk(['commit', '-q', '-m', 'heavy'], dir);
    await gitOk(
      ['push', '-q', `http://root:${t.rootToken}@127.0.0.1:${port}/${project.path_with_namespace}.git`, 'master'],
      dir,
    );
    head = (await gitOk(['rev-parse', 'HEAD'], dir)).trim();
  }, SLOW);
  afterAll(async () => {
    tmp.removeAll();
    await t.close();
  });

  it(
    'twenty requests for one cold archive start one git archive, and each of them gets it whole',
    async () => {
      const before = await metric('lode_git_archive_processes_total');
      // One client goes away at once: the archive it asked for is the others' too.
      const quitter = get({ host: '127.0.0.1', port, path: archive('.tar.gz') });
      quitter.on('error', () => undefined);
      setImmediate(() => quitter.destroy());
      const answers = await Promise.all(Array.from({ length: 20 }, () => fetchAll(archive('.tar.gz'))));
      expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
      const size = answers[0].body.length;
      expect(size).toBeGreaterThan(8 * 1024 * 1024);
      for (const a of answers) {
        expect(Number(a.headers['content-length'])).toBe(size);
        expect(a.body.equals(answers[0].body)).toBe(true);
      }
      expect((await metric('lode_git_archive_processes_total')) - before).toBe(1);
      expect(await metric('lode_git_budget_queue_length', 'archive')).toBe(0);
    },
    SLOW,
  );

  it(
    'past the budget a request waits its bounded time, then 503 with Retry-After; the running archive completes, its git at a lower priority',
    async () => {
      const refusedBefore = await metric('lode_git_budget_refusals_total', 'archive');
      // bzip2 of 8 MB of noise holds the one archive slot for seconds.
      const slow = fetchAll(archive('.tar.bz2'));
      await eventually(async () => (await metric('lode_git_budget_running', 'archive')) === 1, 20_000, 20);
      // The running archive's git child (and its bzip2), started at the budget's nice level.
      const children = await eventually(
        () => {
          const found = gitChildren();
          if (!found.length) throw new Error('no git child yet');
          return found;
        },
        20_000,
        20,
      );
      for (const child of children) expect(child.nice).toBe(Math.min(19, getPriority(0) + 10));

      // Another archive (another format) finds the one slot taken all through its wait.
      const refused = await fetchAll(archive('.zip'));
      expect(refused.status).toBe(503);
      expect(refused.headers['retry-after']).toBe('5');
      expect(JSON.parse(refused.body.toString())).toEqual({ message: '503 Service Unavailable' });
      expect((await metric('lode_git_budget_refusals_total', 'archive')) - refusedBefore).toBe(1);

      const done = await slow;
      expect(done.status).toBe(200);
      expect(done.body.subarray(0, 3).toString()).toBe('BZh');
      expect(Number(done.headers['content-length'])).toBe(done.body.length);
      // The slot is free again: the refused archive is served now.
      expect((await fetchAll(archive('.zip'))).status).toBe(200);
    },
    SLOW,
  );

  it(
    "a GET's archive is sent by a niced cat outside the server's process, on a connection the server no longer counts; a HEAD is answered by the server",
    async () => {
      const whole = await fetchAll(archive('.tar'));
      expect(whole.status).toBe(200);
      const server = t.app.getHttpServer() as import('node:http').Server;
      const connections = () => new Promise<number>((resolve) => server.getConnections((_, n) => resolve(n)));
      server.closeIdleConnections();
      await eventually(async () => (await connections()) === 0, 5_000, 20);

      // A client that reads the head and stops: the rest waits in the cat sending it.
      const request = get({ host: '127.0.0.1', port, path: archive('.tar'), agent: false });
      const res = await new Promise<IncomingMessage>((resolve, reject) => {
        request.on('response', resolve);
        request.on('error', reject);
      });
      res.pause();
      expect(res.statusCode).toBe(200);
      expect(res.headers).toMatchObject({
        connection: 'close',
        'content-length': String(whole.body.length),
        'content-type': 'application/octet-stream',
        etag: whole.headers.etag,
        'content-disposition': whole.headers['content-disposition'],
        'x-request-id': expect.any(String),
      });
      expect(res.headers.date).toBeDefined();
      const cats = await eventually(
        () => {
          const found = descendants().filter((p) => p.name === 'cat');
          if (!found.length) throw new Error('no cat yet');
          return found;
        },
        20_000,
        20,
      );
      expect(cats).toHaveLength(1);
      expect(cats[0].nice).toBe(Math.min(19, getPriority(0) + 10));
      // The connection is the cat's: the server counts none (its graceful stop waits for the rest).
      expect(await connections()).toBe(0);

      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.resume();
      await new Promise((resolve) => res.on('end', resolve));
      expect(Buffer.concat(chunks).equals(whole.body)).toBe(true);
      await eventually(() => !descendants().some((p) => p.name === 'cat'), 10_000, 20);

      const head = await new Promise<IncomingMessage>((resolve, reject) =>
        get({ host: '127.0.0.1', port, path: archive('.tar'), method: 'HEAD' }, resolve).on('error', reject),
      );
      head.resume();
      expect(head.statusCode).toBe(200);
      expect(head.headers['content-length']).toBe(String(whole.body.length));
      expect(head.headers.connection).not.toBe('close');
    },
    SLOW,
  );

  it(
    'pipelined archive requests are answered in order by the server itself, each whole',
    async () => {
      const whole = await fetchAll(archive('.tar'));
      const request = `GET ${archive('.tar')} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`;
      const socket = connect({ host: '127.0.0.1', port });
      const received: Buffer[] = [];
      socket.on('data', (c: Buffer) => received.push(c));
      socket.write(request + request);
      // Two answers, each a head with Content-Length and its body.
      const answers = await eventually(
        () => {
          const bytes = Buffer.concat(received);
          const parsed: { head: string; body: Buffer }[] = [];
          let at = 0;
          while (parsed.length < 2) {
            const end = bytes.indexOf('\r\n\r\n', at);
            if (end < 0) throw new Error('no whole head yet');
            const head = bytes.subarray(at, end).toString('latin1');
            const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1]);
            if (bytes.length < end + 4 + length) throw new Error('no whole body yet');
            parsed.push({ head, body: bytes.subarray(end + 4, end + 4 + length) });
            at = end + 4 + length;
          }
          return parsed;
        },
        60_000,
        20,
      );
      socket.destroy();
      for (const a of answers) {
        expect(a.head.startsWith('HTTP/1.1 200 OK')).toBe(true);
        expect(a.body.equals(whole.body)).toBe(true);
      }
    },
    SLOW,
  );

  it(
    'a clone past the budget gets the plain 503 git prints, and clones again once the slot is free',
    async () => {
      // The one clone slot is taken through the process's own budget, as a running upload-pack takes
      // it. (An unread fetch held it only while its pack did not fit the socket buffers, which an
      // 8 MB pack does on a quiet machine.)
      const release = await t.app.get(GitWorkBudget).acquire('clone');
      expect(await metric('lode_git_budget_running', 'clone')).toBe(1);

      const url = `http://127.0.0.1:${port}/${project.path_with_namespace}.git`;
      const refused = await git(['clone', '--bare', '-q', url, join(tmp.make(), 'c')]);
      expect(refused.status).not.toBe(0);
      expect(refused.out).toMatch(/503/);

      release();
      expect(await metric('lode_git_budget_running', 'clone')).toBe(0);
      const clone = join(tmp.make(), 'c');
      await gitOk(['clone', '--bare', '-q', url, clone]);
      expect((await gitOk(['rev-parse', 'master'], clone)).trim()).toBe(head);
    },
    SLOW,
  );
});

/**
 * This process's descendants named git or bzip2 (the archive's, started by the spawn helper), with
 * their nice level (`/proc/<pid>/stat` field 19).
 */
function gitChildren(): { name: string; nice: number }[] {
  return descendants().filter((p) => p.name === 'git' || p.name === 'bzip2');
}

/** This process's descendants, with their nice level (`/proc/<pid>/stat` field 19). */
function descendants(): { name: string; nice: number }[] {
  const procs: { pid: number; ppid: number; name: string; nice: number }[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    procs.push({ pid: Number(pid), ppid: Number(fields[1]), name, nice: Number(fields[16]) });
  }
  const ours = new Set([process.pid]);
  for (let grew = true; grew;) {
    grew = false;
    for (const p of procs)
      if (ours.has(p.ppid) && !ours.has(p.pid)) {
        ours.add(p.pid);
        grew = true;
      }
  }
  return procs.filter((p) => ours.has(p.pid) && p.pid !== process.pid);
}
