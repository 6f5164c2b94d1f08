import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repositoryPath } from '@app/git';
import { gitOk, tempDirs } from '../support/git';
import {
  clearRedis,
  dropDatabase,
  eventually,
  freePort,
  TEST_PG,
  TEST_REDIS,
  describeOnServers,
} from '../support/test-app';

const ROOT = process.cwd();
const MAIN = join(ROOT, 'dist/apps/lode/src/main.js');
/** The pushed file: random bytes, so the pack is as large as the file. */
const PACK_MB = 150;
/**
 * How much the push may raise the server's peak resident memory. The growth does not follow the
 * pack's size: it is V8's slack before it collects the socket's spent 64 KB chunks (Buffers outside
 * the heap, which V8 lets accumulate up to its external-memory limit). Measured 2026-11-25 on Node 24:
 * 52 MB for a 50 MB push, and 2 MB more for a 150 MB push after it (Node 20 had 24 to 33 MB).
 * A server that held the pack would add the whole 150 MB on top of that slack and fail this.
 */
const ALLOWED_GROWTH_KB = 90 * 1024;

/** The process's peak resident set (VmHWM), in KB: what the kernel saw at the worst moment. */
const peakKb = (pid: number) => parseInt(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1], 10);

/**
 * The built server as a real process, so its memory is its own: a push of a 150 MB file must not
 * raise its peak resident memory by anything like 150 MB (the pack is streamed to git, never held).
 */
// A server process started with DATABASE_URL and REDIS_URL: the embedded run adds nothing to it.
describeOnServers(`a ${PACK_MB} MB push streams through the server`, () => {
  const id = randomBytes(5).toString('hex');
  const url = new URL(TEST_PG);
  url.pathname = `/lode_mem_${id}`;
  const prefix = `lode-mem-${id}`;
  const token = `root-${randomBytes(16).toString('hex')}`;
  const tmp = tempDirs();
  let dataDir: string;
  let port: number;
  let sshPort: number;
  let child: ChildProcess;
  let projectId: number;

  beforeAll(async () => {
    if (!existsSync(MAIN))
      execFileSync(process.execPath, [join(ROOT, 'scripts/build-if-needed.cjs')], { stdio: 'inherit' });
    dataDir = await mkdtemp(join(tmpdir(), 'lode-mem-'));
    port = await freePort();
    sshPort = await freePort();
    child = spawn(process.execPath, [MAIN], {
      stdio: 'ignore',
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        PORT: String(port),
        HOST: '127.0.0.1',
        DATABASE_URL: url.toString(),
        REDIS_URL: TEST_REDIS,
        LODE_REDIS_PREFIX: prefix,
        LODE_DATA_DIR: dataDir,
        LODE_SSH_PORT: String(sshPort),
        LODE_SSH_HOST: '127.0.0.1',
        LODE_ROOT_TOKEN: token,
        LODE_LOG_LEVEL: 'error',
      },
    });
    await eventually(
      async () => (await fetch(`http://127.0.0.1:${port}/-/readiness`).catch(() => ({ status: 0 }))).status === 200,
      30_000,
      200,
    );
  }, 60_000);

  afterAll(async () => {
    if (child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    tmp.removeAll();
    await dropDatabase(url.toString());
    await clearRedis(TEST_REDIS, prefix);
    await rm(dataDir, { recursive: true, force: true });
  });

  it('keeps the peak resident memory growth well below the size of the pack', async () => {
    const created = await fetch(`http://127.0.0.1:${port}/api/v4/projects`, {
      method: 'POST',
      headers: { 'PRIVATE-TOKEN': token, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Big' }),
    });
    expect(created.status).toBe(201);
    const project = (await created.json()) as { id: number; path_with_namespace: string };
    projectId = project.id;
    const remote = `http://root:${token}@127.0.0.1:${port}/${project.path_with_namespace}.git`;
    const dir = tmp.make();
    await gitOk(['init', '-q', '-b', 'master', dir]);
    // A small push first, so the baseline includes everything a push loads.
    writeFileSync(join(dir, 'small.txt'), 'small\n');
    await gitOk(['add', '.'], dir);
    await gitOk(['commit', '-q', '-m', 'small'], dir);
    await gitOk(['push', '-q', remote, 'master'], dir);
    const before = peakKb(child.pid!);

    writeFileSync(join(dir, 'big.bin'), randomBytes(PACK_MB * 1024 * 1024));
    await gitOk(['add', '.'], dir);
    await gitOk(['commit', '-q', '-m', 'big'], dir);
    await gitOk(['push', '-q', remote, 'master'], dir);
    const growth = peakKb(child.pid!) - before;

    const ls = await gitOk(['ls-remote', remote, 'refs/heads/master']);
    expect(ls).toContain((await gitOk(['rev-parse', 'HEAD'], dir)).trim());
    expect(growth).toBeLessThanOrEqual(ALLOWED_GROWTH_KB);
  }, 120_000);

  it('streams a 100 MB push and clone over SSH the same way', async () => {
    const keys = tmp.make();
    const key = join(keys, 'id');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', key]);
    const added = await fetch(`http://127.0.0.1:${port}/api/v4/user/keys`, {
      method: 'POST',
      headers: { 'PRIVATE-TOKEN': token, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'memory', key: readFileSync(`${key}.pub`, 'utf8').trim() }),
    });
    expect(added.status).toBe(201);
    const env = {
      GIT_SSH_COMMAND: `ssh -F /dev/null -i ${key} -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR`,
    };
    const remote = `ssh://git@127.0.0.1:${sshPort}/root/big.git`;
    const dir = tmp.make();
    await gitOk(['clone', '-q', '--depth', '1', remote, dir], undefined, env);
    const before = peakKb(child.pid!);
    writeFileSync(join(dir, 'over-ssh.bin'), randomBytes(100 * 1024 * 1024));
    await gitOk(['add', '.'], dir);
    await gitOk(['commit', '-q', '-m', 'over ssh'], dir);
    await gitOk(['push', '-q', remote, 'master'], dir, env);
    await gitOk(['clone', '-q', '--bare', remote, join(tmp.make(), 'copy.git')], undefined, env);
    expect(peakKb(child.pid!) - before).toBeLessThanOrEqual(ALLOWED_GROWTH_KB);
    expect((await gitOk(['ls-remote', remote, 'refs/heads/master'], undefined, env)).split('\t')[0]).toBe(
      (await gitOk(['rev-parse', 'HEAD'], dir)).trim(),
    );
  }, 180_000);

  it('finishes a push in flight when told to stop (SIGTERM drains before closing)', async () => {
    const dir = tmp.make();
    const remote = `http://root:${token}@127.0.0.1:${port}/root/big.git`;
    await gitOk(['clone', '-q', remote, dir]);
    writeFileSync(join(dir, 'second.bin'), randomBytes(30 * 1024 * 1024));
    await gitOk(['add', '.'], dir);
    await gitOk(['commit', '-q', '-m', 'second'], dir);
    const pushed = gitOk(['push', '-q', remote, 'master'], dir);
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    // Once the pack is streaming in: receive-pack keeps it in a quarantine directory until it is complete.
    const objects = join(repositoryPath(dataDir, projectId), 'objects');
    await eventually(() => readdirSync(objects).some((d) => d.includes('incoming')), 30_000, 10);
    child.kill('SIGTERM');
    await pushed;
    expect(await exited).toBe(0);
    // The server is gone; the push it accepted is complete on disk.
    const repo = repositoryPath(dataDir, projectId);
    expect(readdirSync(objects).some((d) => d.includes('incoming'))).toBe(false);
    expect((await gitOk(['--git-dir', repo, 'rev-parse', 'master'])).trim()).toBe(
      (await gitOk(['rev-parse', 'HEAD'], dir)).trim(),
    );
    expect((await gitOk(['--git-dir', repo, 'fsck', '--no-progress'])).trim()).toBe('');
  }, 120_000);
});
