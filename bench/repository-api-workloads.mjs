// The repository API's workloads (issue 14 §4), on the synthetic repository (`bench/repository.mjs`):
// a file read through the files API against the raw blob read of the same file (REPO-FILE), the
// commit list's first and a deep page in the open model (REPO-COMMITS), and API commits to one
// branch with a project hook, every acknowledged commit then looked up in the branch's history
// (REPO-WRITE).
import { Agent } from 'node:http';
import { receiver } from './git-workloads.mjs';
import { percentile, send } from './open-load.mjs';
import { run } from './repository.mjs';
import { repositoryDir } from './support.mjs';

const fmt = (f) => `${f.rps} req/s, P50/P90/P99 ${f.p50}/${f.p90}/${f.p99} ms`;
const clean = (f) => f.non2xx === 0 && f.errors === 0;
const cleanNote = (f) => (clean(f) ? '' : ` (${f.non2xx} non-2xx, ${f.errors} errors)`);
/** REPO-WRITE's open run kept 50 commits/s (within 5%), every answer clean, its P99 within `p99Ms`. */
const sustained = (f, p99Ms) => f.rps >= 0.95 * 50 && f.p99 <= p99Ms && clean(f);
const middle = (results, key) => [...results].sort((a, b) => a[key] - b[key])[Math.floor(results.length / 2)];

/** `parallel` callers repeating `once()` (answers `{status, ms}`) for `seconds`: completions/s and latency percentiles. */
async function closed(parallel, seconds, once) {
  const until = performance.now() + seconds * 1000;
  const started = performance.now();
  const ms = [];
  let non2xx = 0;
  let errors = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (performance.now() < until) {
        const r = await once();
        if (r.status === 0) errors++;
        else if (r.status < 200 || r.status > 299) non2xx++;
        else ms.push(r.ms);
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  ms.sort((a, b) => a - b);
  const at = (p) => Math.ceil(percentile(ms, p));
  return { rps: Math.round(ms.length / elapsed), p50: at(50), p90: at(90), p99: at(99), non2xx, errors };
}

/** The branch REPO-WRITE commits to, made from master, so master (which the read workloads measure) stays as generated. */
const WRITE_BRANCH = 'bench-writes';
const WRITE_FILE = 'bench/written.txt';

export const REPOSITORY_API_WORKLOADS = [
  {
    id: 'REPO-FILE',
    ownDataset: true,
    name: 'GET /repository/files/:path?ref= of the 4 KB file against its raw blob, closed model',
    target: '>= 0.8 x the raw blob read of the same file (same run)',
    run: async (ctx) => {
      const repo = await ctx.syntheticRepository(ctx);
      const fileUrl = repo.api(`/files/${encodeURIComponent('docs/4k.txt')}?ref=master`);
      const rawUrl = repo.api(`/blobs/${repo.small}/raw`);
      // The answer is the same file: its blob id and 4 KB of content.
      const answer = await (await fetch(fileUrl)).json();
      if (answer.blob_id !== repo.small || Buffer.from(answer.content, 'base64').length !== 4096)
        throw new Error(`files API answered ${JSON.stringify(answer).slice(0, 200)}`);
      // Alternated, so both sides see the same moments of a machine whose speed drifts.
      const files = [];
      const raws = [];
      for (let i = 0; i < ctx.settings.runs; i++) {
        raws.push(await ctx.cannon(rawUrl));
        files.push(await ctx.cannon(fileUrl));
      }
      return { file: middle(files, 'rps'), raw: middle(raws, 'rps') };
    },
    check: ({ file, raw }) => {
      const ratio = file.rps / raw.rps;
      return {
        met: ratio >= 0.8 && clean(file) && clean(raw),
        detail: `files API ${fmt(file)}${cleanNote(file)}; raw blob ${fmt(raw)}${cleanNote(raw)}; ${ratio.toFixed(2)} x`,
        ratio,
      };
    },
  },
  {
    id: 'REPO-COMMITS',
    ownDataset: true,
    name: 'GET /repository/commits?per_page=100, page 1 and a deep page, open model 20 req/s',
    target: 'P90 <= 50 ms for both pages',
    run: async (ctx) => {
      const repo = await ctx.syntheticRepository(ctx);
      const first = await fetch(repo.api('/commits?per_page=100&page=1'));
      const total = Number(first.headers.get('x-total'));
      // Page 40 of the full repository (5,001 commits on master); the quick one has 601, so its last full page.
      const deep = Math.min(40, Math.floor(total / 100));
      const url = (page) => repo.api(`/commits?per_page=100&page=${page}`);
      const deepAnswer = await (await fetch(url(deep))).json();
      if (deepAnswer.length !== 100) throw new Error(`page ${deep} has ${deepAnswer.length} commits`);
      const at = (page) => ctx.median(() => ctx.cannon(url(page), { rate: 20 }), 'p90');
      return { total, deep, page1: await at(1), pageDeep: await at(deep) };
    },
    check: ({ total, deep, page1, pageDeep }) => ({
      met: page1.p90 <= 50 && pageDeep.p90 <= 50 && clean(page1) && clean(pageDeep),
      detail: `${total} commits on master; page 1: ${fmt(page1)}${cleanNote(page1)}; page ${deep}: ${fmt(pageDeep)}${cleanNote(pageDeep)}`,
    }),
  },
  {
    id: 'REPO-WRITE',
    ownDataset: true,
    name: 'POST /repository/commits (one update action) to one branch with a project hook, open model 50/s',
    // Issue 14 set 250 ms, the bar kept here; issue 23 states 500 ms, which the detail judges too.
    target: 'sustained >= 50 commits/s, P99 <= 250 ms (issue 23: 500); every acknowledged commit in the branch history',
    run: async (ctx) => {
      const repo = await ctx.syntheticRepository(ctx);
      const { lode } = ctx;
      const rx = await receiver();
      const agent = new Agent({ keepAlive: true, maxSockets: 256 });
      const headers = { 'PRIVATE-TOKEN': lode.rootToken, 'Content-Type': 'application/json' };
      const commitsUrl = repo.api('/commits');
      let n = 0;
      const commit = (action) =>
        send(agent, commitsUrl, {
          method: 'POST',
          headers,
          body: JSON.stringify({
            branch: WRITE_BRANCH,
            ...(action === 'create' ? { start_branch: 'master' } : {}),
            commit_message: `bench write ${++n}`,
            actions: [{ action, file_path: WRITE_FILE, content: `write ${n}\n` }],
          }),
        });
      try {
        await lode.call('POST', `/projects/${repo.project.id}/hooks`, lode.rootToken, {
          url: `${rx.url}/write`,
          push_events: true,
        });
        // The branch and its file, untimed: each timed commit then updates the file on the branch's tip.
        const created = await commit('create');
        if (created.status !== 201) throw new Error(`first commit: ${created.status} ${created.body}`);
        const acknowledged = [];
        const load = async (rate, duration) =>
          ctx.openLoad(commitsUrl, {
            rate,
            duration,
            arrive: async (due, record) => {
              const res = await commit('update');
              record(res.status, performance.now() - due);
              if (res.status === 201) acknowledged.push(JSON.parse(res.body).id);
            },
          });
        const dir = repositoryDir(lode.dataDir, repo.project.id);
        const tip = async () => (await run('git', ['rev-parse', WRITE_BRANCH], { cwd: dir })).trim();
        // A request the harness gave up on (30 s) is still queued in the server and lands later: wait
        // until the branch has stood still for 2 s, so the next measurement starts on an idle server.
        const drain = async () => {
          let last = await tip();
          let still = performance.now();
          for (const end = performance.now() + 300_000; performance.now() < end;) {
            await new Promise((r) => setTimeout(r, 250));
            const now = await tip();
            if (now !== last) [last, still] = [now, performance.now()];
            else if (performance.now() - still >= 2000) return;
          }
        };
        // Capacity first: twenty writers at once, each sending its next commit when answered (the
        // closed model): how many commits a second one branch takes when its writers queue.
        const capacity = await closed(20, ctx.settings.quick ? 3 : 10, async () => {
          const started = performance.now();
          const res = await commit('update');
          if (res.status === 201) acknowledged.push(JSON.parse(res.body).id);
          return { status: res.status, ms: performance.now() - started };
        });
        await drain();
        // Then the issue's rate, evenly spaced. A run that falls far behind is not repeated: its
        // backlog would take minutes to drain and the next runs would measure the same saturation.
        const seconds = ctx.settings.quick ? 5 : 10;
        const runs = [];
        for (let i = 0; i < ctx.settings.runs; i++) {
          runs.push(await load(50, seconds));
          await drain();
          if (runs.at(-1).rps < 25 || runs.at(-1).errors > 0) break;
        }
        const open = middle(runs, 'p99');

        // Every acknowledged commit is in the branch's history, read by git on the repository directory.
        const history = new Set(
          (await run('git', ['rev-list', `master..${WRITE_BRANCH}`], { cwd: dir })).trim().split('\n'),
        );
        const inHistory = acknowledged.filter((id) => history.has(id)).length;
        // And each one's push hook arrived (the receiver keys arrivals by project and `after`).
        const key = (id) => `${repo.project.id}:${id}`;
        const started = performance.now();
        while (!acknowledged.every((id) => rx.arrivals.has(key(id))) && performance.now() - started < 60_000)
          await new Promise((r) => setTimeout(r, 50));
        const hooked = acknowledged.filter((id) => rx.arrivals.has(key(id))).length;
        return {
          open,
          runs: runs.map((r) => ({ rps: r.rps, p99: r.p99, errors: r.errors })),
          capacity,
          acknowledged: acknowledged.length,
          unique: new Set(acknowledged).size,
          inHistory,
          // The branch holds the untimed first commit, the acknowledged ones, and those whose request
          // the harness gave up on (30 s) but the server still made.
          branchCommits: history.size,
          unacknowledged: history.size - 1 - inHistory,
          hooked,
        };
      } finally {
        agent.destroy();
        await rx.close();
      }
    },
    check: (f) => ({
      // Arrivals were evenly spaced at 50/s: every one answered 201 within the P99 bound is 50/s sustained.
      met: sustained(f.open, 250) && f.acknowledged === f.inHistory && f.unique === f.acknowledged,
      detail:
        `50 commits/s offered: ${fmt(f.open)}${cleanNote(f.open)}, against issue 23's P99 <= 500 ms: ` +
        `${sustained(f.open, 500) ? 'met' : 'missed'} (runs: ${f.runs.map((r) => `${r.rps}/s P99 ${r.p99}${r.errors ? ` ${r.errors} errors` : ''}`).join(', ')}); ` +
        `20 writers at once (closed model): ${fmt(f.capacity)}${cleanNote(f.capacity)}; ` +
        `acknowledged ${f.acknowledged}, in the branch history ${f.inHistory} (branch ${f.branchCommits} commits past master: ` +
        `the first, untimed, and ${f.unacknowledged} made after the harness gave up on their request), ` +
        `push hooks received for ${f.hooked}`,
    }),
  },
];
