// PERF-14: `npm run projections:rebuild` over many events. The events are appended straight to the
// event store (the issue allows seeding by appending events): user activity days and project
// description changes, each on its real stream with the next versions. A first, untimed rebuild
// brings the read models in line with them (they bypassed the inline projections); the timed one
// must then produce the same tables, checked by a checksum of every read-model table.
// `baseRoot`: another checkout's root (its dist/ built, same migrations), whose rebuild is timed on
// the same database in the same run, for a before/after figure (bench/rebuild-run.mjs --base DIR).
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import pg from 'pg';

const ROOT = new URL('..', import.meta.url).pathname;
const cliOf = (root) => join(root, 'dist/apps/lode/src/cli.js');
const NOT_READ_MODELS = ['events', 'outbox', 'migrations', 'typeorm_metadata'];

function rebuild(env, root = ROOT) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    execFile(
      process.execPath,
      [cliOf(root), 'projections:rebuild'],
      { env: { ...process.env, ...env }, maxBuffer: 1 << 26 },
      (err, _out, stderr) =>
        err ? reject(new Error(stderr.slice(-500))) : resolve((performance.now() - started) / 1000),
    );
  });
}

async function checksums(db) {
  const { rows: tables } = await db.query(
    `select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE' and not (table_name = any($1))
      order by table_name`,
    [NOT_READ_MODELS],
  );
  const sums = {};
  for (const { table_name: t } of tables) {
    const { rows } = await db.query(
      `select count(*)::int as n, md5(coalesce(string_agg(x::text, '|' order by x::text), '')) as sum from "${t}" x`,
    );
    sums[t] = `${rows[0].n}:${rows[0].sum}`;
  }
  return sums;
}

/** Appends `total` events: 60% user activity days, 40% project description changes. */
async function appendEvents(db, total) {
  const activity = Math.round(total * 0.6);
  const updates = total - activity;
  await db.query(
    `insert into events (stream_id, stream_version, type, data)
     select 'user-activity-' || u.id, coalesce(v.version, 0) + g.n, 'UserActivityRecorded',
            jsonb_build_object('userId', u.id, 'on', to_char(date '2000-01-01' + g.n, 'YYYY-MM-DD'), 'at', (date '2000-01-01' + g.n)::timestamptz)
       from (select id, row_number() over (order by id) as r from users) u
       cross join generate_series(1, ceil($1::numeric / (select count(*) from users))::int) g(n)
       left join (select stream_id, max(stream_version) as version from events where stream_id like 'user-activity-%' group by stream_id) v
         on v.stream_id = 'user-activity-' || u.id
      order by g.n, u.id
      limit $1`,
    [activity],
  );
  await db.query(
    `insert into events (stream_id, stream_version, type, data)
     select 'project-' || p.id, v.version + g.n, 'ProjectUpdated',
            jsonb_build_object('projectId', p.id, 'changes', jsonb_build_object('description', 'description ' || g.n), 'at', now())
       from projects p
       cross join generate_series(1, ceil($1::numeric / (select count(*) from projects))::int) g(n)
       join (select stream_id, max(stream_version) as version from events where stream_id like 'project-%' group by stream_id) v
         on v.stream_id = 'project-' || p.id
      order by g.n, p.id
      limit $1`,
    [updates],
  );
}

/** Times one rebuild with the checkout at `root` and compares every read-model table with `live`. */
async function timed(db, env, root, events, live) {
  const seconds = await rebuild(env, root);
  const after = await checksums(db);
  const differing = Object.keys(live).filter((t) => live[t] !== after[t]);
  return {
    events,
    seconds: Number(seconds.toFixed(1)),
    eventsPerSecond: Math.round(events / seconds),
    tables: Object.keys(live).length,
    differing,
  };
}

export async function measureRebuild({ lode, settings, log, baseRoot, events: wanted }) {
  const total = wanted ?? (settings.quick ? 20_000 : 1_000_000);
  const db = new pg.Client({ connectionString: lode.databaseUrl });
  await db.connect();
  try {
    await appendEvents(db, total);
    const { rows } = await db.query(`select count(*)::int as n from events`);
    const events = rows[0].n;
    const env = { DATABASE_URL: lode.databaseUrl, LODE_DATA_DIR: lode.dataDir, LODE_LOG_LEVEL: 'error' };
    log(`  ${events} events; first rebuild (untimed) to take in the appended ones`);
    await rebuild(env);
    const live = await checksums(db);
    const base = baseRoot ? await timed(db, env, baseRoot, events, live) : undefined;
    if (base) log(`  base (${baseRoot}): ${base.seconds} s, ${base.eventsPerSecond} events/s`);
    const head = await timed(db, env, ROOT, events, live);
    return base ? { ...head, base } : head;
  } finally {
    await db.end();
  }
}
