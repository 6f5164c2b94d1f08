// Backup and restore time per GB (issue 12 §4).
//
//   node bench/backup.mjs [--mb 500] [--events 100000] [--packed 1]
//
// The built server on a fresh database; one project whose repository gets `--mb` MB of random
// (incompressible) blobs pushed over HTTP with stock git, in several commits, plus `--events` events
// appended straight to the event store (as bench/rebuild.mjs does). Then, while the server runs,
// `backup` (dist/apps/lode/src/operations) writes the archive; `restore` puts it into a second, empty
// database and data directory; the restored repository must be fsck-clean with the same refs.
// Prints seconds and MB/s of each, and seconds per GB of archive. `--packed 1`: see PACKED.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { argument, repositoryDir, startLode } from './support.mjs';

const run = promisify(execFile);
const ROOT = new URL('..', import.meta.url).pathname;
const require = createRequire(import.meta.url);
const MB = argument('mb', 500);
const EVENTS = argument('events', 100_000);
const FILE_MB = 8;
// As pushed, a repository's objects are loose (each push under receive.unpackLimit); `--packed 1`
// repacks it first, as housekeeping would.
const PACKED = argument('packed', 0) === 1;

const git = (args, cwd) =>
  run('git', ['-c', 'core.compression=1', '-c', 'core.bigFileThreshold=1m', ...args], {
    cwd,
    maxBuffer: 1 << 26,
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 'Bench',
      GIT_AUTHOR_EMAIL: 'b@x',
      GIT_COMMITTER_NAME: 'Bench',
      GIT_COMMITTER_EMAIL: 'b@x',
    },
  }).then((r) => r.stdout);

async function seedRepository(lode) {
  const project = await lode.call('POST', '/projects', lode.rootToken, { name: 'big', visibility: 'private' });
  const work = mkdtempSync(join(tmpdir(), 'lode-bench-work-'));
  try {
    await git(['init', '-q', '-b', 'master', work]);
    const files = Math.ceil(MB / FILE_MB);
    const perCommit = 8;
    for (let i = 0; i < files; i++) {
      writeFileSync(join(work, `blob-${i}.bin`), randomBytes(FILE_MB * 1024 * 1024));
      if ((i + 1) % perCommit === 0 || i === files - 1) {
        await git(['add', '.'], work);
        await git(['commit', '-q', '-m', `blobs up to ${i}`], work);
        await git(['tag', `t${i}`], work);
      }
    }
    const remote = `http://root:${lode.rootToken}@127.0.0.1:${lode.port}/${project.path_with_namespace}.git`;
    const started = performance.now();
    await git(['push', '-q', remote, 'master', '--tags'], work);
    return { project, pushSeconds: (performance.now() - started) / 1000 };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

async function appendEvents(databaseUrl, total) {
  if (!total) return;
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  await db.query(
    `insert into events (stream_id, stream_version, type, data)
     select 'bench-' || (g.n / 100), g.n % 100 + 1, 'BenchEvent',
            jsonb_build_object('n', g.n, 'text', repeat('x', 200), 'at', now())
       from generate_series(0, $1 - 1) g(n)`,
    [total],
  );
  await db.end();
}

const refsOf = (path) => git(['for-each-ref', '--format=%(objectname) %(refname)'], path);

async function main() {
  const { backup, restore } = require(join(ROOT, 'dist/apps/lode/src/operations/index.js'));
  const { LodeConfig } = require(join(ROOT, 'dist/libs/platform/src/index.js'));
  const lode = await startLode(21000);
  const out = mkdtempSync(join(tmpdir(), 'lode-bench-backup-'));
  const restoredDir = mkdtempSync(join(tmpdir(), 'lode-bench-restored-'));
  const target = new URL(lode.databaseUrl);
  target.pathname = `${target.pathname}_restored`;
  try {
    const { project, pushSeconds } = await seedRepository(lode);
    await appendEvents(lode.databaseUrl, EVENTS);
    const source = LodeConfig.fromEnv({ DATABASE_URL: lode.databaseUrl, LODE_DATA_DIR: lode.dataDir });
    const repoPath = repositoryDir(lode.dataDir, project.id);
    if (PACKED) await git(['repack', '-adq'], repoPath);
    const { stdout: du } = await run('du', ['-sb', repoPath]);
    const repoBytes = Number(du.split('\t')[0]);

    const phases = [];
    const t0 = performance.now();
    const progress = (p) => {
      if (phases.at(-1)?.phase !== p.phase)
        phases.push({ phase: p.phase, at: +((performance.now() - t0) / 1000).toFixed(1) });
    };
    const backedUp = await backup({ config: source, to: out, progress });
    process.stderr.write(`backup phases: ${JSON.stringify(phases)}\n`);
    const restoreConfig = LodeConfig.fromEnv({ DATABASE_URL: target.toString(), LODE_DATA_DIR: restoredDir });
    const restorePhases = [];
    const t1 = performance.now();
    const restored = await restore({
      config: restoreConfig,
      from: backedUp.file,
      progress: (p) => {
        if (restorePhases.at(-1)?.phase !== p.phase)
          restorePhases.push({ phase: p.phase, at: +((performance.now() - t1) / 1000).toFixed(1) });
      },
    });
    process.stderr.write(`restore phases: ${JSON.stringify(restorePhases)}\n`);

    const restoredPath = repositoryDir(restoredDir, project.id);
    const fsckStarted = performance.now();
    await git(['fsck', '--no-dangling'], restoredPath);
    const fsckSeconds = (performance.now() - fsckStarted) / 1000;
    if ((await refsOf(restoredPath)) !== (await refsOf(repoPath))) throw new Error('the restored refs differ');

    const gb = backedUp.bytes / 1024 ** 3;
    const result = {
      repositoryMB: Math.round(repoBytes / 1024 ** 2),
      repositoryObjects: PACKED ? 'packed' : 'loose, as pushed',
      archiveMB: Math.round(backedUp.bytes / 1024 ** 2),
      databaseRows: backedUp.database.rows,
      events: backedUp.database.events,
      pushSeconds: +pushSeconds.toFixed(1),
      backupSeconds: +backedUp.seconds.toFixed(1),
      backupSecondsPerGB: +(backedUp.seconds / gb).toFixed(1),
      backupMBps: Math.round(backedUp.bytes / 1024 ** 2 / backedUp.seconds),
      restoreSeconds: +restored.seconds.toFixed(1),
      restoreSecondsPerGB: +(restored.seconds / gb).toFixed(1),
      restoreMBps: Math.round(backedUp.bytes / 1024 ** 2 / restored.seconds),
      fsckSecondsAfterRestore: +fsckSeconds.toFixed(1),
      archiveFileMB: Math.round(statSync(backedUp.file).size / 1024 ** 2),
    };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await lode.stop();
    const admin = new pg.Client({ connectionString: lode.databaseUrl.replace(/\/[^/]*$/, '/postgres') });
    await admin.connect();
    await admin.query(`drop database if exists "${target.pathname.slice(1)}" with (force)`);
    await admin.end();
    rmSync(out, { recursive: true, force: true });
    rmSync(restoredDir, { recursive: true, force: true });
  }
}

await main();
