// `npm run bench:rebuild`: PERF-14 on its own, with a same-run figure for another checkout.
//
//   node bench/rebuild-run.mjs [--events 1000000] [--size full|quick] [--base DIR]
//
// Starts the built server on a fresh database, seeds the dataset through the API (users, groups,
// projects, members; `full` as `npm run bench` does, the default), appends `--events` events straight to the event store (bench/rebuild.mjs),
// then times `projections:rebuild` of `--base DIR` (a checkout of the commit to compare with, its
// dist/ built: `git archive main | tar -x -C DIR`, node_modules linked, `node scripts/build-if-needed.cjs`)
// and of this checkout, each checked table by table against the live read models.
import { execFileSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { SIZES, seedDataset } from './dataset.mjs';
import { measureRebuild } from './rebuild.mjs';
import { startLode } from './support.mjs';

const args = process.argv.slice(2);
const at = (name) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const events = Number(at('events') ?? 1_000_000);
const baseRoot = at('base');
// The full dataset spreads the appended events over 10,000 users and projects as PERF-14 does in
// `npm run bench`: over the quick one's 300 users, each row takes thousands of updates in the one
// transaction, and every update walks its row's chain of versions (PostgreSQL cannot prune the
// versions of a transaction still open), which measures that and not the replay.
const size = SIZES[at('size') ?? 'full'];
const log = (...m) => console.error(...m);

const commit = (dir) => {
  try {
    return execFileSync('git', ['-C', dir, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    return '(not a git checkout)';
  }
};

const lode = await startLode(18000);
// Interrupted: the server, the database and the data directory go too.
process.once('SIGINT', () => void lode.stop().then(() => process.exit(130)));
try {
  log(`server ready in ${Math.round(lode.readyMs)} ms; seeding the dataset`);
  await seedDataset(lode.call, lode.rootToken, size, (m) => log(`  ${m}`));
  const load = loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
  const started = new Date().toISOString();
  const result = await measureRebuild({ lode, settings: { quick: false }, log, baseRoot, events });
  const line = (name, r) =>
    `${name}: ${r.events} events in ${r.seconds} s: ${r.eventsPerSecond} events/s; ${r.tables} tables, ${
      r.differing.length ? `differing: ${r.differing.join(', ')}` : 'all equal'
    }`;
  console.log(
    `started ${started}, load average at the start ${load}, at the end ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );
  if (result.base) console.log(line(`base ${baseRoot}`, result.base));
  console.log(line(`head ${commit(new URL('..', import.meta.url).pathname)}`, result));
  if (result.differing.length || result.base?.differing.length) process.exitCode = 1;
} finally {
  await lode.stop();
}
