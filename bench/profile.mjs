#!/usr/bin/env node
// Profiles the built server under load: starts it with --cpu-prof on a fresh database, creates a
// public project, runs autocannon (50 connections) against an API path, stops the server and
// prints where CPU time went (self time by package and by function).
// Usage: node bench/profile.mjs [path, default /projects/<id>] [--duration 8] [--synthetic]
//   --synthetic: push the quick synthetic repository (bench/repository.mjs) into the project first, so
//   repository paths can be profiled, e.g. '/projects/:id/repository/files/docs%2F4k.txt?ref=master',
//   or PERF-8's '/projects/:id/repository/blobs/:blob4k/raw' (:blob4k is docs/4k.txt's full id).
import autocannon from 'autocannon';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeRepository, pushRepository, REPO_SIZES } from './repository.mjs';
import { argument, startLode } from './support.mjs';

const dir = mkdtempSync(join(tmpdir(), 'lode-prof-'));
const lode = await startLode(21000, {}, ['--cpu-prof', `--cpu-prof-dir=${dir}`]);
let result;
try {
  const p = await lode.call('POST', '/projects', lode.rootToken, { name: 'Profiled', visibility: 'public' });
  if (process.argv.includes('--synthetic')) {
    const source = await makeRepository(REPO_SIZES.quick);
    try {
      await pushRepository(source, lode.origin, p.path_with_namespace, lode.rootToken);
    } finally {
      rmSync(source, { recursive: true, force: true });
    }
  }
  let path = (process.argv[2]?.startsWith('/') ? process.argv[2] : '/projects/:id').replace(':id', p.id);
  if (path.includes(':blob4k')) {
    // PERF-8's small blob: the synthetic repository's docs/4k.txt, by its full id.
    const tree = await (await fetch(lode.url(`/projects/${p.id}/repository/tree?path=docs`))).json();
    path = path.replace(':blob4k', tree.find((e) => e.name === '4k.txt').id);
  }
  result = await autocannon({ url: lode.url(path), connections: 50, duration: argument('duration', 8) });
} finally {
  await lode.stop();
}
const profile = JSON.parse(readFileSync(join(dir, readdirSync(dir)[0]), 'utf8'));
const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map();
let total = 0;
profile.samples.forEach((id, i) => {
  const f = nodes.get(id).callFrame;
  const t = profile.timeDeltas[i] ?? 0;
  total += t;
  const key = `${f.functionName || '(anonymous)'} ${f.url.replace(/.*node_modules\//, '').replace(/.*\/dist\//, 'lode:')}:${f.lineNumber}`;
  self.set(key, (self.get(key) ?? 0) + t);
});
const byPackage = new Map();
for (const [k, v] of self) {
  const m = / ((@[^/]+\/)?[^/:]+)/.exec(k);
  const group = k.startsWith('(')
    ? k.replace(/ :-?\d+$/, '')
    : k.includes(' lode:')
      ? 'lode'
      : m && !m[1].startsWith('node')
        ? m[1]
        : k.split(' ')[0];
  byPackage.set(group, (byPackage.get(group) ?? 0) + v);
}
const top = (map, n) =>
  [...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, v]) => `${((v / total) * 100).toFixed(1).padStart(5)}%  ${k}`)
    .join('\n');
console.log(
  `${Math.round(result.requests.average)} req/s, P50 ${result.latency.p50} ms, P99 ${result.latency.p99} ms; profile ${dir}`,
);
console.log(`\nby package\n${top(byPackage, 15)}\n\nby function\n${top(self, 25)}`);
