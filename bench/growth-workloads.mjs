// Whether a write's cost grows with use (issue 20 §2): a project write after 1,000 pushes to that
// project, and a hook write after 1,000 deliveries of that hook, each against the same write on a
// fresh project or hook in the same run. Every push here is an API commit (a push like any other:
// written down, recorded, delivered to the project's hook).
import { Agent } from 'node:http';
import { receiver } from './git-workloads.mjs';
import { send } from './open-load.mjs';

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export const GROWTH_WORKLOADS = [
  {
    id: 'GROWTH',
    ownDataset: true,
    name: 'a project write after 1,000 pushes and a hook write after 1,000 deliveries, against fresh ones',
    target: 'each <= 1.2 x the same write on a fresh project or hook',
    run: async (ctx) => {
      const { lode } = ctx;
      const pushes = ctx.settings.quick ? 200 : 1000;
      const samples = ctx.settings.quick ? 15 : 41;
      const rx = await receiver();
      const agent = new Agent({ keepAlive: true, maxSockets: 8 });
      const headers = { 'PRIVATE-TOKEN': lode.rootToken, 'Content-Type': 'application/json' };
      const call = async (method, path, body) => {
        const started = performance.now();
        const res = await send(agent, lode.url(path), { method, headers, body: JSON.stringify(body) });
        if (res.status < 200 || res.status > 299) throw new Error(`${method} ${path}: ${res.status} ${res.body}`);
        return { ms: performance.now() - started, body: JSON.parse(res.body) };
      };
      const stamp = Date.now().toString(36);
      const setUp = async (name) => {
        const { body: project } = await call('POST', '/projects', { name: `${name}-${stamp}`, visibility: 'private' });
        const { body: hook } = await call('POST', `/projects/${project.id}/hooks`, {
          url: `${rx.url}/${name}`,
          push_events: true,
        });
        let n = 0;
        const commit = (action = 'update') =>
          call('POST', `/projects/${project.id}/repository/commits`, {
            branch: 'master',
            commit_message: `${name} ${++n}`,
            actions: [{ action, file_path: 'growth.txt', content: `${name} ${n}\n` }],
          });
        await commit('create');
        return { project, hook, commit };
      };
      try {
        const fresh = await setUp('fresh');
        const aged = await setUp('aged');
        const started = performance.now();
        for (let i = 1; i < pushes; i++) await aged.commit();
        const pushSeconds = (performance.now() - started) / 1000;
        // Every push delivered to the aged hook (the fresh one has its one), so its delivery log is 1,000 long.
        const until = performance.now() + 300_000;
        while (rx.count() < pushes + 1 && performance.now() < until) await new Promise((r) => setTimeout(r, 200));
        const delivered = rx.count();
        // Alternating fresh and aged, so a drift of the machine's speed hits both alike.
        const times = { fresh: { put: [], commit: [], hook: [] }, aged: { put: [], commit: [], hook: [] } };
        for (let i = 0; i < samples; i++) {
          for (const [key, side] of [
            ['fresh', fresh],
            ['aged', aged],
          ]) {
            times[key].put.push((await call('PUT', `/projects/${side.project.id}`, { description: `d${i}` })).ms);
            times[key].commit.push((await side.commit()).ms);
            times[key].hook.push(
              (
                await call('PUT', `/projects/${side.project.id}/hooks/${side.hook.id}`, {
                  url: `${rx.url}/${key}`,
                  push_events: true,
                  tag_push_events: i % 2 === 0,
                })
              ).ms,
            );
          }
        }
        const figure = (kind) => {
          const f = median(times.fresh[kind]);
          const a = median(times.aged[kind]);
          return { freshMs: Number(f.toFixed(1)), agedMs: Number(a.toFixed(1)), ratio: Number((a / f).toFixed(2)) };
        };
        return {
          pushes,
          pushSeconds: Math.round(pushSeconds),
          delivered,
          put: figure('put'),
          commit: figure('commit'),
          hook: figure('hook'),
        };
      } finally {
        agent.destroy();
        await rx.close();
      }
    },
    check: (f) => {
      const all = [f.put, f.commit, f.hook];
      const show = (name, x) => `${name} ${x.freshMs} -> ${x.agedMs} ms (x${x.ratio})`;
      return {
        met: all.every((x) => x.ratio <= 1.2) && f.delivered >= f.pushes,
        detail: `after ${f.pushes} pushes (${f.pushSeconds} s) and ${f.delivered} deliveries: ${show('PUT /projects/:id', f.put)}, ${show('API commit', f.commit)}, ${show('PUT hook', f.hook)}`,
      };
    },
  },
];
