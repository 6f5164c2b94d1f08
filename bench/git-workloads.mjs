// Workloads that drive git itself: webhook fan-out after real pushes (PERF-15) and clones over HTTP
// (CLONE) and SSH (SSH-CLONE).
import { createServer } from 'node:http';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { execFileSync, spawn } from 'node:child_process';
import { Agent } from 'node:http';
import { createConnection } from 'node:net';
import { percentile as nearestRank, send } from './open-load.mjs';
import { machineBusyMs, repositoryDir } from './support.mjs';
import { run } from './repository.mjs';

/** The nearest-rank percentile of unsorted numbers, rounded (the same rule as the open model's). */
const percentile = (xs, p) =>
  Math.round(
    nearestRank(
      [...xs].sort((a, b) => a - b),
      p,
    ),
  );

/** A loopback webhook receiver: answers 200 and notes when each delivery arrived, by project and commit. */
export async function receiver() {
  const arrivals = new Map();
  let count = 0;
  let last = 0;
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      count++;
      last = at;
      try {
        const payload = JSON.parse(Buffer.concat(chunks).toString());
        const key = `${payload.project_id}:${payload.after}`;
        if (!arrivals.has(key)) arrivals.set(key, at);
      } catch {
        // not a push payload: nothing to time
      }
      res.writeHead(200).end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    arrivals,
    count: () => count,
    last: () => last,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** A bare repository holding one chain of `n` small commits; answers its directory and the commits' ids, oldest first. */
export async function commitChain(n) {
  const dir = mkdtempSync(join(tmpdir(), 'lode-bench-chain-'));
  await run('git', ['init', '-q', '--bare', '-b', 'master', dir]);
  let stream = '';
  for (let i = 1; i <= n; i++) {
    const content = `change ${i}\n`;
    stream += `commit refs/heads/master\nmark :${i}\ncommitter Bench <bench@example.com> ${1_700_000_000 + i} +0000\ndata 9\ncommit ${String(i % 10)}\n`;
    if (i > 1) stream += `from :${i - 1}\n`;
    stream += `M 100644 inline file.txt\ndata ${Buffer.byteLength(content)}\n${content}\n`;
  }
  await new Promise((resolve, reject) => {
    const child = spawn('git', ['fast-import', '--quiet'], { cwd: dir, stdio: ['pipe', 'ignore', 'inherit'] });
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`fast-import ${code}`))));
    child.stdin.end(stream);
  });
  const ids = (await run('git', ['rev-list', '--reverse', 'master'], { cwd: dir })).trim().split('\n');
  return { dir, ids };
}

const pushUrl = (lode, project) =>
  `${lode.origin.replace('://', `://root:${lode.rootToken}@`)}/${project.path_with_namespace}.git`;
/** A push by the stock git client (for each project's first, untimed push). */
const push = (lode, chain, project, sha) =>
  run('git', ['push', '-q', pushUrl(lode, project), `${sha}:refs/heads/master`], { cwd: chain.dir });

/** The pack that takes a repository from commit `from` to commit `to`, as a git client would send it. */
function packBetween(dir, from, to) {
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['pack-objects', '--revs', '--stdout', '-q'], {
      cwd: dir,
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const chunks = [];
    child.stdout.on('data', (c) => chunks.push(c));
    child.on('close', (code) =>
      code === 0 ? resolve(Buffer.concat(chunks)) : reject(new Error(`pack-objects ${code}`)),
    );
    child.stdin.end(`${to}\n^${from}\n`);
  });
}

/**
 * A push as git's client makes it over smart HTTP (the receive-pack advertisement, then the
 * command and the pack), sent from this process: spawning a git client per push cost the machine
 * more than the server's side of it, and the benchmark measures the server. Throws unless the ref
 * was updated.
 */
async function rawPush(agent, lode, project, from, to, pack) {
  const base = `${lode.origin}/${project.path_with_namespace}.git`;
  const Authorization = `Basic ${Buffer.from(`root:${lode.rootToken}`).toString('base64')}`;
  // The advertisement is a GET: sent again when a kept-alive socket was closed under it (status 0,
  // the server's keep-alive timeout meeting the client's reuse), as git's client would reconnect.
  const advertise = () => send(agent, `${base}/info/refs?service=git-receive-pack`, { headers: { Authorization } });
  let refs = await advertise();
  for (let retry = 0; refs.status === 0 && retry < 2; retry++) refs = await advertise();
  if (refs.status !== 200) throw new Error(`info/refs: ${refs.status}`);
  const command = `${from} ${to} refs/heads/master\0report-status\n`;
  const body = Buffer.concat([
    Buffer.from(`${(command.length + 4).toString(16).padStart(4, '0')}${command}0000`),
    pack,
  ]);
  const res = await send(agent, `${base}/git-receive-pack`, {
    method: 'POST',
    body,
    headers: {
      Authorization,
      'Content-Type': 'application/x-git-receive-pack-request',
      'Content-Length': String(body.length),
    },
  });
  if (res.status !== 200 || !String(res.body ?? '').includes('ok refs/heads/master'))
    throw new Error(`receive-pack: ${res.status} ${res.body}`);
}

/** Projects each with `hooks` push hooks to the receiver, and their first push done (untimed). */
async function hookedProjects(ctx, count, hooks, rx, chain, name) {
  const projects = [];
  for (let i = 0; i < count; i++) {
    const project = await ctx.lode.call('POST', '/projects', ctx.lode.rootToken, {
      name: `${name} ${i}`,
      visibility: 'private',
    });
    for (let h = 0; h < hooks; h++) {
      await ctx.lode.call('POST', `/projects/${project.id}/hooks`, ctx.lode.rootToken, {
        url: `${rx.url}/${project.id}/${h}`,
        push_events: true,
      });
    }
    projects.push(project);
  }
  await Promise.all(projects.map((p) => push(ctx.lode, chain, p, chain.ids[0])));
  return projects;
}

/** Waits until `done()` holds, or `ms` pass. */
async function until(done, ms) {
  const end = performance.now() + ms;
  while (!done() && performance.now() < end) await new Promise((r) => setTimeout(r, 20));
}

export const GIT_WORKLOADS = [
  {
    id: 'PERF-15',
    ownDataset: true,
    name: 'webhook fan-out to a loopback receiver',
    target: '>= 200 deliveries/s; commit to receipt P99 <= 500 ms at 50 pushes/s',
    run: async (ctx) => {
      const rx = await receiver();
      const seconds = ctx.settings.quick ? 3 : 10;
      const rate = 50;
      const chain = await commitChain(2 * seconds + 20);
      const agent = new Agent({ keepAlive: true, maxSockets: 256 });
      const packs = [];
      for (let i = 1; i < chain.ids.length; i++)
        packs[i] = await packBetween(chain.dir, chain.ids[i - 1], chain.ids[i]);
      try {
        // Capacity: one project with 200 hooks, 5 pushes: 1,000 deliveries as fast as they go.
        const [wide] = await hookedProjects(ctx, 1, 200, rx, chain, 'Fan-out');
        await until(() => rx.count() >= 200, 60_000); // the untimed first push's deliveries
        const before = rx.count();
        const started = performance.now();
        for (let i = 1; i <= 5; i++) await rawPush(agent, ctx.lode, wide, chain.ids[i - 1], chain.ids[i], packs[i]);
        await until(() => rx.count() - before >= 1000, 120_000);
        const delivered = rx.count() - before;
        const deliveriesPerSecond = Math.round(delivered / ((rx.last() - started) / 1000));

        // Latency: projects with one hook each, pushes evenly spaced (each project once a second) in
        // an open model, from the end of each push (its event is committed then) to the hook's
        // arrival: at the issue's 50 pushes/s, and at 20/s, a rate this machine's pushes sustain,
        // so the delivery pipeline's own latency shows apart from pushes queueing.
        const projects = await hookedProjects(ctx, rate, 1, rx, chain, 'Pushed');
        await until(() => rx.count() - before >= 1000 + rate, 60_000);
        const steps = new Map(projects.map((p) => [p.id, 0]));
        const phase = async (perSecond) => {
          const pushes = [];
          const lastPush = new Map();
          let failed;
          const busyBefore = machineBusyMs();
          const begin = performance.now();
          const total = perSecond * seconds;
          for (let k = 0; k < total; k++) {
            const due = begin + (k * 1000) / perSecond;
            const wait = due - performance.now();
            if (wait > 0) await new Promise((r) => setTimeout(r, wait));
            const project = projects[k % perSecond];
            const step = steps.get(project.id) + 1;
            steps.set(project.id, step);
            // A project's pushes go in order (each a fast-forward of the last); a late one waits for its predecessor.
            // A failed push fails the workload (thrown after the phase), not the whole bench run.
            const p = (lastPush.get(project.id) ?? Promise.resolve())
              .then(async () => {
                if (failed) return;
                const start = performance.now();
                await rawPush(agent, ctx.lode, project, chain.ids[step - 1], chain.ids[step], packs[step]);
                pushes.push({ key: `${project.id}:${chain.ids[step]}`, start, end: performance.now() });
              })
              .catch((err) => {
                failed ??= err;
              });
            lastPush.set(project.id, p);
          }
          await Promise.all(lastPush.values());
          if (failed) throw failed;
          const pushSeconds = (performance.now() - begin) / 1000;
          // Both cores' busy time over the phase (server, helpers, git, PostgreSQL, this harness) per push.
          const cpuMsPerPush = Math.round((machineBusyMs() - busyBefore) / Math.max(1, pushes.length));
          await until(() => pushes.every((p) => rx.arrivals.has(p.key)), 30_000);
          // A push is recorded before git's client reads the end of its answer, so a hook can arrive
          // a hair before the push "ends" here: such a delivery counts as 0 ms.
          const latencies = pushes
            .filter((p) => rx.arrivals.has(p.key))
            .map((p) => Math.max(0, rx.arrivals.get(p.key) - p.end));
          const durations = pushes.map((p) => p.end - p.start);
          return {
            offered: perSecond,
            pushes: pushes.length,
            pushRate: Math.round(pushes.length / pushSeconds),
            cpuMsPerPush,
            missing: pushes.length - latencies.length,
            pushP50: percentile(durations, 50),
            pushP99: percentile(durations, 99),
            p50: percentile(latencies, 50),
            p90: percentile(latencies, 90),
            p99: percentile(latencies, 99),
          };
        };
        const sustained = await phase(20);
        const full = await phase(rate);
        return { deliveriesPerSecond, delivered, full, sustained };
      } finally {
        agent.destroy();
        await rx.close();
        rmSync(chain.dir, { recursive: true, force: true });
      }
    },
    check: ({ deliveriesPerSecond, delivered, full, sustained }) => {
      const phase = (f) =>
        `${f.offered} pushes/s offered, ${f.pushRate}/s done (push P50/P99 ${f.pushP50}/${f.pushP99} ms, ${f.cpuMsPerPush} ms CPU each): ` +
        `push end to receipt P50/P90/P99 ${f.p50}/${f.p90}/${f.p99} ms${f.missing ? `, ${f.missing} never arrived` : ''}`;
      return {
        met:
          deliveriesPerSecond >= 200 &&
          full.p99 <= 500 &&
          full.missing === 0 &&
          sustained.missing === 0 &&
          full.pushRate >= 0.9 * full.offered,
        detail: `${delivered} deliveries at ${deliveriesPerSecond}/s; ${phase(full)}; ${phase(sustained)}`,
      };
    },
  },
  {
    id: 'CLONE',
    ownDataset: true,
    name: 'git clone of the synthetic repository (bare, over HTTP)',
    target: '<= 1.2 x cloning from git http-backend directly; 10 concurrent clones <= 3 x one',
    run: async (ctx) => {
      const repo = await ctx.syntheticRepository(ctx);
      const work = mkdtempSync(join(tmpdir(), 'lode-bench-clone-'));
      // The baseline serves Lode's own copy of the repository (the same packs) with git alone.
      const onDisk = repositoryDir(ctx.lode.dataDir, repo.project.id);
      const direct = await ctx.baselineServer('git', dirname(onDisk));
      let n = 0;
      const clone = async (url) => {
        const target = join(work, `c${n++}`);
        const started = performance.now();
        await run('git', ['clone', '-q', '--bare', url, target]);
        const ms = performance.now() - started;
        rmSync(target, { recursive: true, force: true });
        return ms;
      };
      const lodeUrl = `${ctx.lode.origin}/${repo.project.path_with_namespace}.git`;
      const directUrl = `${direct.url}${basename(onDisk)}`;
      try {
        return await measureClones(ctx.settings.runs, clone, lodeUrl, directUrl);
      } finally {
        direct.stop();
        rmSync(work, { recursive: true, force: true });
      }
    },
    check: ({ lode, direct, ten, tenDirect }) => ({
      met: lode <= 1.2 * direct && ten <= 3 * lode,
      detail:
        `one clone ${lode} ms (git http-backend alone ${direct} ms, ${(lode / direct).toFixed(2)} x); 10 at once ${ten} ms (${(ten / lode).toFixed(2)} x one; ` +
        `git http-backend alone: 10 at once ${tenDirect} ms, ${(tenDirect / direct).toFixed(2)} x its one)`,
    }),
  },
  {
    id: 'SSH-CLONE',
    ownDataset: true,
    name: 'git clone of the synthetic repository (bare, over SSH)',
    target: "<= 1.3 x cloning through OpenSSH's sshd (git-upload-pack run directly), one and 10 at once",
    run: async (ctx) => {
      if (!existsSync(SSHD)) return { skipped: `${SSHD} is missing (Debian: apt-get install openssh-server)` };
      const repo = await ctx.syntheticRepository(ctx);
      const work = mkdtempSync(join(tmpdir(), 'lode-bench-ssh-'));
      const key = join(work, 'id_ed25519');
      execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', key]);
      const publicKey = readFileSync(`${key}.pub`, 'utf8').trim();
      await ctx.lode.call('POST', '/user/keys', ctx.lode.rootToken, { title: 'bench', key: publicKey });
      // The baseline serves Lode's own copy of the repository (the same packs) through OpenSSH.
      const onDisk = repositoryDir(ctx.lode.dataDir, repo.project.id);
      const sshd = await openSsh(work, publicKey);
      const sshCommand = `ssh -F /dev/null -i ${key} -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR`;
      let n = 0;
      const clone = async (url) => {
        const target = join(work, `c${n++}`);
        const started = performance.now();
        await run('git', ['clone', '-q', '--bare', url, target], {
          env: { ...process.env, GIT_SSH_COMMAND: sshCommand },
        });
        const ms = performance.now() - started;
        rmSync(target, { recursive: true, force: true });
        return ms;
      };
      const lodeUrl = `ssh://git@127.0.0.1:${ctx.lode.sshPort}/${repo.project.path_with_namespace}.git`;
      const directUrl = `ssh://${process.env.USER || 'root'}@127.0.0.1:${sshd.port}${onDisk}`;
      try {
        return await measureClones(ctx.settings.runs, clone, lodeUrl, directUrl);
      } finally {
        sshd.stop();
        rmSync(work, { recursive: true, force: true });
      }
    },
    check: (r) =>
      r.skipped
        ? { met: false, detail: `not run: ${r.skipped}` }
        : {
            met: r.lode <= 1.3 * r.direct && r.ten <= 1.3 * r.tenDirect,
            detail:
              `one clone ${r.lode} ms (OpenSSH ${r.direct} ms, ${(r.lode / r.direct).toFixed(2)} x); ` +
              `10 at once ${r.ten} ms (OpenSSH ${r.tenDirect} ms, ${(r.ten / r.tenDirect).toFixed(2)} x)`,
          },
  },
];

const SSHD = '/usr/sbin/sshd';

/**
 * One clone through Lode and one through the baseline, alternated `runs` times (medians), then ten
 * at once through each: the baseline's ten at once is the same run's measure of what two cores allow,
 * the git clients included.
 */
async function measureClones(runs, clone, lodeUrl, directUrl) {
  const med = (xs) => percentile(xs, 50);
  const lode = [];
  const direct = [];
  for (let i = 0; i < runs; i++) {
    direct.push(await clone(directUrl));
    lode.push(await clone(lodeUrl));
  }
  const tenAtOnce = async (url) => {
    const times = [];
    for (let i = 0; i < runs; i++) {
      const started = performance.now();
      await Promise.all(Array.from({ length: 10 }, () => clone(url)));
      times.push(performance.now() - started);
    }
    return med(times);
  };
  const ten = await tenAtOnce(lodeUrl);
  const tenDirect = await tenAtOnce(directUrl);
  return { lode: med(lode), direct: med(direct), ten, tenDirect };
}

/**
 * OpenSSH's sshd on a loopback port with a throwaway configuration: its own host key, the bench key
 * as the only authorized key, no PAM and no passwords. The client's `git-upload-pack '<path>'` runs
 * through the login shell, as on any git server behind sshd.
 */
async function openSsh(dir, authorizedKey) {
  const port = 22000 + Math.floor(Math.random() * 1000);
  const hostKey = join(dir, 'ssh_host_ed25519_key');
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', hostKey]);
  writeFileSync(join(dir, 'authorized_keys'), `${authorizedKey}\n`, { mode: 0o600 });
  const config = join(dir, 'sshd_config');
  writeFileSync(
    config,
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${hostKey}`,
      `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
      `PidFile ${join(dir, 'sshd.pid')}`,
      'PermitRootLogin prohibit-password',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'UsePAM no',
      'StrictModes no',
      'MaxStartups 100:30:200',
      'MaxSessions 20',
      // Not ERROR: the readiness probe's bare connect would be logged as a failed key exchange.
      'LogLevel FATAL',
    ].join('\n'),
  );
  // Privilege separation wants its empty directory.
  mkdirSync('/run/sshd', { recursive: true });
  const child = spawn(SSHD, ['-D', '-e', '-f', config], { stdio: ['ignore', 'ignore', 2] });
  for (let i = 0; i < 100; i++) {
    const up = await new Promise((resolve) => {
      const s = createConnection(port, '127.0.0.1');
      s.on('connect', () => (s.destroy(), resolve(true)));
      s.on('error', () => resolve(false));
    });
    if (up) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return { port, stop: () => child.kill() };
}
