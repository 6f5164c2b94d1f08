// The workloads of the benchmarks issue: each measures, then says whether its target is met.
// `ctx`: { lode, dataset, settings, cannon, median, memoryMb, baselines, log }.
import { measureRebuild } from './rebuild.mjs';

const fmt = (f) => `${f.rps} req/s, P50/P90/P99 ${f.p50}/${f.p90}/${f.p99} ms`;
const clean = (f) => f.non2xx === 0 && f.errors === 0;
const cleanNote = (f) => (clean(f) ? '' : ` (${f.non2xx} non-2xx, ${f.errors} errors)`);

export const WORKLOADS = [
  {
    id: 'PERF-1',
    name: 'GET /projects/:id, public, anonymous, closed model',
    target: '>= 0.5 x B1 req/s',
    run: ({ lode, dataset, cannon, median }) => median(() => cannon(lode.url(`/projects/${dataset.publicProject.id}`))),
    check: (f, { baselines }) => {
      const ratio = f.rps / baselines.B1.rps;
      return { met: ratio >= 0.5 && clean(f), detail: `${fmt(f)}; ${ratio.toFixed(2)} x B1${cleanNote(f)}`, ratio };
    },
  },
  {
    id: 'PERF-2',
    name: 'GET /projects/:id with a token, open model 500 req/s',
    target: 'P90 <= 20 ms, P99 <= 50 ms',
    run: ({ lode, dataset, cannon, median }) =>
      median(() => cannon(lode.url(`/projects/${dataset.publicProject.id}`), { rate: 500, headers: { 'PRIVATE-TOKEN': dataset.memberToken } }), 'p90'),
    check: (f) => ({ met: f.p90 <= 20 && f.p99 <= 50 && clean(f), detail: `${fmt(f)}${cleanNote(f)}` }),
  },
  {
    id: 'PERF-3',
    name: 'GET /projects?per_page=100 and /groups/:id/projects?per_page=100, signed in, 50 req/s',
    target: 'P90 <= 100 ms',
    run: async ({ lode, dataset, cannon, median }) => {
      const headers = { 'PRIVATE-TOKEN': dataset.memberToken };
      const projects = await median(() => cannon(lode.url('/projects?per_page=100'), { rate: 50, connections: 10, headers }), 'p90');
      const group = await median(() => cannon(lode.url(`/groups/${dataset.big.id}/projects?per_page=100`), { rate: 50, connections: 10, headers }), 'p90');
      return { projects, group };
    },
    check: ({ projects, group }) => ({
      met: projects.p90 <= 100 && group.p90 <= 100 && clean(projects) && clean(group),
      detail: `/projects: ${fmt(projects)}${cleanNote(projects)}; /groups/:id/projects: ${fmt(group)}${cleanNote(group)}`,
    }),
  },
  {
    id: 'PERF-5',
    name: 'GET /groups/:id of the 1,000-project group',
    target: 'P90 <= 150 ms',
    run: ({ lode, dataset, cannon, median }) =>
      median(() => cannon(lode.url(`/groups/${dataset.big.id}`), { connections: 1, headers: { 'PRIVATE-TOKEN': dataset.memberToken } }), 'p90'),
    check: (f) => ({ met: f.p90 <= 150 && clean(f), detail: `1 connection: ${fmt(f)}${cleanNote(f)}` }),
  },
  {
    id: 'PERF-6',
    name: 'GET /users?per_page=100, administrator and not, 50 req/s',
    target: 'P90 <= 50 ms',
    run: async ({ lode, dataset, cannon, median }) => ({
      admin: await median(() => cannon(lode.url('/users?per_page=100'), { rate: 50, connections: 10, headers: { 'PRIVATE-TOKEN': lode.rootToken } }), 'p90'),
      user: await median(() => cannon(lode.url('/users?per_page=100'), { rate: 50, connections: 10, headers: { 'PRIVATE-TOKEN': dataset.memberToken } }), 'p90'),
    }),
    check: ({ admin, user }) => ({
      met: admin.p90 <= 50 && user.p90 <= 50 && clean(admin) && clean(user),
      detail: `administrator: ${fmt(admin)}${cleanNote(admin)}; user: ${fmt(user)}${cleanNote(user)}`,
    }),
  },
  {
    id: 'PERF-12',
    name: 'POST /projects at 100 req/s, each followed by a GET of the new project',
    target: 'P99 <= 250 ms; every GET finds the project',
    run: async ({ lode, dataset, cannon, settings }) => {
      let n = 0;
      const prefix = `bench-${Date.now().toString(36)}`;
      const duration = settings.quick ? 5 : 60;
      // Pairs of requests on each connection: POST then GET of the id the POST answered, so a 404
      // (the read model behind the write) would show as a non-2xx.
      return cannon(lode.url('/projects'), {
        duration, rate: 200, connections: 20, headers: { 'PRIVATE-TOKEN': dataset.memberToken, 'Content-Type': 'application/json' },
        requests: [
          {
            method: 'POST', path: '/api/v4/projects',
            setupRequest: (req) => ({ ...req, body: JSON.stringify({ name: `${prefix}-${n++}`, visibility: 'private' }) }),
            onResponse: (status, body, context) => {
              if (status === 201) context.id = JSON.parse(body).id;
            },
          },
          { method: 'GET', setupRequest: (req, context) => ({ ...req, path: `/api/v4/projects/${context.id}` }) },
        ],
      });
    },
    check: (f) => ({ met: f.p99 <= 250 && clean(f), detail: `${fmt(f)} (POST and GET together)${cleanNote(f)}` }),
  },
  {
    id: 'PERF-14',
    name: 'npm run projections:rebuild over 1,000,000 events',
    target: '>= 5,000 events/s; tables equal to the live ones',
    run: (ctx) => measureRebuild(ctx),
    check: (f) => ({
      met: f.eventsPerSecond >= 5000 && f.differing.length === 0,
      detail: `${f.events} events in ${f.seconds} s: ${f.eventsPerSecond} events/s; ${f.tables} tables, ${f.differing.length ? `differing: ${f.differing.join(', ')}` : 'all equal'}`,
    }),
  },
  {
    id: 'PERF-16',
    name: 'start-up and footprint',
    target: 'ready <= 5 s; RSS <= 300 MB after PERF-1..3',
    run: async ({ lode, memoryMb }) => ({ readyMs: Math.round(lode.readyMs), rssMb: Math.round(memoryMb(lode.pid).rss) }),
    check: (f) => ({ met: f.readyMs <= 5000 && f.rssMb <= 300, detail: `ready in ${f.readyMs} ms (fresh database: migrations included), RSS ${f.rssMb} MB` }),
  },
];
