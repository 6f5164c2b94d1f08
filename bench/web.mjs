#!/usr/bin/env node
// Benchmark of the web pages (issue 24) against the API's answer for the same data, same run, same
// server: a project page against GET /projects/:id, and a 1,000-entry tree page against the API's
// tree of the same directory (10 pages of 100, its maximum; one page measured, the 10 counted).
// Usage: npm run bench:web [-- --duration 10]. Starts the built Lode on a fresh database, seeds
// through the API, runs autocannon (closed model, 10 connections, anonymous), prints a table.
import autocannon from 'autocannon';
import { cpus, loadavg } from 'node:os';
import { argument, startLode } from './support.mjs';

const duration = argument('duration', 10);
const connections = 10;
const { url, call, rootToken, stop } = await startLode(19000);
const web = (p) => url('').replace(/\/api\/v4$/, '') + p;

try {
  const group = await call('POST', '/groups', rootToken, { name: 'bench', path: 'bench', visibility: 'public' });
  const site = await call('POST', '/projects', rootToken, {
    name: 'site',
    namespace_id: group.id,
    visibility: 'public',
    description: 'A project page as most are: a README and a few files',
  });
  const readme = Array.from(
    { length: 40 },
    (_, i) => `## Section ${i}\n\nSome *text* with a [link](docs/page-${i}.md) and \`code\`.\n\n- one\n- two\n`,
  ).join('\n');
  await call('POST', `/projects/${site.id}/repository/commits`, rootToken, {
    branch: 'main',
    commit_message: 'site',
    actions: [
      { action: 'create', file_path: 'README.md', content: readme },
      ...Array.from({ length: 20 }, (_, i) => ({
        action: 'create',
        file_path: `src/file-${i}.ts`,
        content: `export const n = ${i};\n`,
      })),
      ...Array.from({ length: 10 }, (_, i) => ({ action: 'create', file_path: `file-${i}.txt`, content: `${i}\n` })),
    ],
  });
  const wide = await call('POST', '/projects', rootToken, {
    name: 'wide',
    namespace_id: group.id,
    visibility: 'public',
  });
  await call('POST', `/projects/${wide.id}/repository/commits`, rootToken, {
    branch: 'main',
    commit_message: 'a thousand files',
    actions: Array.from({ length: 1000 }, (_, i) => ({
      action: 'create',
      file_path: `entry-${String(i).padStart(4, '0')}.txt`,
      content: `${i}\n`,
    })),
  });
  const html = { Accept: 'text/html' };
  for (const path of ['/bench/site', '/bench/wide/-/tree/main']) {
    const res = await fetch(web(path), { headers: html });
    if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
  }
  const workloads = [
    ['web: project page /bench/site', web('/bench/site'), html, 1],
    ['api: GET /projects/:id (site)', url(`/projects/${site.id}`), {}, 1],
    ['web: tree page, 1,000 entries', web('/bench/wide/-/tree/main'), html, 1],
    [
      'api: tree, 1,000 entries (10 pages of 100)',
      url(`/projects/${wide.id}/repository/tree?per_page=100&page=3`),
      {},
      10,
    ],
  ];
  const load = loadavg()[0];
  const rows = [];
  for (const [name, target, headers, requests] of workloads) {
    const r = await autocannon({ url: target, connections, duration, headers });
    if (r.non2xx || r.errors) throw new Error(`${name}: ${r.non2xx} non-2xx, ${r.errors} errors`);
    // Answers a second for the whole data: the API's tree needs `requests` requests for it.
    rows.push({
      workload: name,
      'answers/s': Math.round((r.requests.average / requests) * 10) / 10,
      'p50 ms (one request)': r.latency.p50,
      'KB a request': Math.round(r.throughput.average / r.requests.average / 102.4) / 10,
    });
  }
  const ratio = (a, b) => Math.round((rows[b]['answers/s'] / rows[a]['answers/s']) * 100) / 100;
  console.table(rows);
  console.log(
    `load average ${load.toFixed(2)} at the start, ${loadavg()[0].toFixed(2)} at the end, ${cpus().length} cores; ` +
      `${connections} connections, ${duration} s each, anonymous`,
  );
  console.log(`time ratio web/api: project page ${ratio(0, 1)}, 1,000-entry tree ${ratio(2, 3)} (target: at most 2)`);
} finally {
  await stop();
}
