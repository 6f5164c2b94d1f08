// Issue 22 §5: WEBHOOKS (1,000 mixed writes fanned out to 20 system hooks and 20 project hooks at a
// loopback receiver: every expected delivery counted, write-answer-to-receipt latency) and EVENTS
// (`GET /events?per_page=100` with 1,000,000 rows in the Events API's read model).
import { createServer } from 'node:http';
import { generateKeyPairSync } from 'node:crypto';
import { rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { Agent } from 'node:http';
import pg from 'pg';
import { inParallel, prng } from './dataset.mjs';
import { commitChain } from './git-workloads.mjs';
import { percentile as nearestRank, send } from './open-load.mjs';
import { run } from './repository.mjs';

const percentile = (xs, p) =>
  Math.round(
    nearestRank(
      [...xs].sort((a, b) => a - b),
      p,
    ),
  );
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** An OpenSSH `ssh-ed25519` public key line, made in process (ssh-keygen per key would cost a process each). */
function sshKey() {
  const { publicKey } = generateKeyPairSync('ed25519');
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x, 'base64url');
  const field = (b) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(b.length);
    return [len, b];
  };
  const blob = Buffer.concat([...field(Buffer.from('ssh-ed25519')), ...field(raw)]);
  return `ssh-ed25519 ${blob.toString('base64')} bench@lode`;
}

/**
 * What a delivery is about, from its payload: the write that caused it. A push (system `push`,
 * project hook `push`) and a `repository_update` are named by project and new commit; a member by
 * project and user; a key by its id; a project by its id.
 */
function subjectOf(body) {
  const event = body.event_name ?? body.object_kind;
  switch (event) {
    case 'project_create':
      return `${event}|${body.project_id}`;
    case 'user_add_to_team':
      return `${event}|${body.project_id}:${body.user_id}`;
    case 'key_create':
      return `${event}|${body.id}`;
    case 'push':
      return `${event}|${body.project_id}:${body.after}`;
    case 'repository_update':
      return `${event}|${body.project_id}:${body.changes?.[0]?.after}`;
    default:
      return `${event}|?`;
  }
}

/**
 * The receiver: answers 200 at once, and notes for each delivery the hook (its URL path), the
 * `X-Gitlab-Event-UUID`, what it is about and when it arrived.
 */
async function countingReceiver() {
  const receipts = [];
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      let subject = 'unparsable|?';
      try {
        subject = subjectOf(JSON.parse(Buffer.concat(chunks).toString()));
      } catch {
        // counted as unexpected
      }
      receipts.push({ hook: req.url, uuid: req.headers['x-gitlab-event-uuid'], subject, at });
      res.writeHead(200).end();
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    receipts,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

/** The writes' kinds, a quarter each, in a seeded order (the same on every run). */
function mixedKinds(n) {
  const kinds = Array.from({ length: n }, (_, i) => ['project', 'member', 'key', 'push'][i % 4]);
  const random = prng(22);
  for (let i = kinds.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [kinds[i], kinds[j]] = [kinds[j], kinds[i]];
  }
  return kinds;
}

async function webhooks(ctx) {
  const { lode } = ctx;
  const quick = ctx.settings.quick;
  const total = quick ? 200 : 1000;
  const rate = 20;
  const systemHooks = 20;
  const hookedProjects = 20;
  const users = 50;
  const stamp = Date.now().toString(36);
  const rx = await countingReceiver();
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const headers = { 'PRIVATE-TOKEN': lode.rootToken, 'Content-Type': 'application/json' };
  const api = async (method, path, body) => {
    const res = await send(agent, lode.url(path), { method, headers, body: body && JSON.stringify(body) });
    if (res.status < 200 || res.status > 299) throw new Error(`${method} ${path}: ${res.status} ${res.body}`);
    return res.status === 204 ? undefined : JSON.parse(res.body);
  };
  const kinds = mixedKinds(total);
  const pushesPerProject = Math.ceil(kinds.filter((k) => k === 'push').length / hookedProjects);
  const chain = await commitChain(pushesPerProject + 1);
  const made = { systemHooks: [] };
  try {
    // Set-up, before any hook exists, so nothing it does is delivered: users to add as members and
    // to own keys, the projects the pushes and member adds go to, each with its first push.
    const root = await api('GET', '/user');
    const people = new Array(users);
    await inParallel(users, 4, async (i) => {
      people[i] = await api('POST', '/users', {
        username: `wh-${stamp}-${i}`,
        email: `wh-${stamp}-${i}@example.com`,
        name: `Webhook ${i}`,
        password: 'bench-password-1',
        skip_confirmation: true,
      });
    });
    const projects = [];
    for (let i = 0; i < hookedProjects; i++)
      projects.push(await api('POST', '/projects', { name: `wh-${stamp}-hooked-${i}`, visibility: 'private' }));
    const pushUrl = (p) => `${lode.origin.replace('://', `://root:${lode.rootToken}@`)}/${p.path_with_namespace}.git`;
    const gitPush = (p, sha) => run('git', ['push', '-q', pushUrl(p), `${sha}:refs/heads/master`], { cwd: chain.dir });
    await inParallel(projects.length, 4, (i) => gitPush(projects[i], chain.ids[0]));
    // One project hook on each project written to (pushes and member adds), pushes on.
    for (const p of projects)
      await api('POST', `/projects/${p.id}/hooks`, { url: `${rx.url}/p/${p.id}`, push_events: true });
    for (let i = 0; i < systemHooks; i++) {
      made.systemHooks.push(
        await api('POST', '/hooks', {
          url: `${rx.url}/s/${i}`,
          push_events: true,
          tag_push_events: true,
          repository_update_events: true,
        }),
      );
    }
    await sleep(1000);
    const stray = rx.receipts.length;

    // The writes: evenly spaced at `rate` a second (open model), each one's expected deliveries
    // noted when its answer came back. Pushes are the stock git client's (`git push` over HTTP),
    // one project's in order (each a fast-forward of its last).
    const expected = new Map(); // `${hook}|${subject}` -> write answer time
    const expect = (hooks, subject, at) => {
      for (const h of hooks) expected.set(`${h}|${subject}`, at);
    };
    const system = made.systemHooks.map((h, i) => `/s/${i}`);
    const writeTimes = [];
    const writeByKind = {};
    const failures = [];
    const lastPush = new Map();
    const steps = new Map(projects.map((p) => [p.id, 0]));
    let member = 0;
    let pushN = 0;
    const begin = performance.now();
    // The machine's 1-minute load average, every 5 s until the deliveries are in (it is shared).
    const loads = [loadavg()[0]];
    const loadTimer = setInterval(() => loads.push(loadavg()[0]), 5000);
    const inflight = [];
    for (let k = 0; k < total; k++) {
      const due = begin + (k * 1000) / rate;
      const wait = due - performance.now();
      if (wait >= 1) await sleep(wait);
      const kind = kinds[k];
      const write = async () => {
        if (kind === 'project') {
          // In root's namespace: 10.x adds root as its master, so `user_add_to_team` comes with `project_create`.
          const p = await api('POST', '/projects', { name: `wh-${stamp}-new-${k}`, visibility: 'private' });
          const at = performance.now();
          expect(system, `project_create|${p.id}`, at);
          expect(system, `user_add_to_team|${p.id}:${root.id}`, at);
          return at;
        }
        if (kind === 'member') {
          const m = member++;
          const project = projects[m % projects.length];
          const user = people[Math.floor(m / projects.length)];
          await api('POST', `/projects/${project.id}/members`, { user_id: user.id, access_level: 30 });
          const at = performance.now();
          expect(system, `user_add_to_team|${project.id}:${user.id}`, at);
          return at;
        }
        if (kind === 'key') {
          const owner = people[k % people.length];
          const key = await api('POST', `/users/${owner.id}/keys`, { title: `key ${k}`, key: sshKey() });
          const at = performance.now();
          expect(system, `key_create|${key.id}`, at);
          return at;
        }
        const project = projects[pushN++ % projects.length];
        const step = steps.get(project.id) + 1;
        steps.set(project.id, step);
        const previous = lastPush.get(project.id) ?? Promise.resolve();
        const done = previous.then(async () => {
          await gitPush(project, chain.ids[step]);
          const at = performance.now();
          const subject = `${project.id}:${chain.ids[step]}`;
          expect([...system, `/p/${project.id}`], `push|${subject}`, at);
          expect(system, `repository_update|${subject}`, at);
          return at;
        });
        lastPush.set(
          project.id,
          done.catch(() => undefined),
        );
        return done;
      };
      inflight.push(
        write().then(
          (at) => {
            writeTimes.push(at - due);
            (writeByKind[kind] ??= []).push(at - due);
          },
          (err) => failures.push(`${kind}: ${err.message.slice(0, 200)}`),
        ),
      );
    }
    await Promise.all(inflight);
    const writesEnd = performance.now();
    const writeSeconds = (writesEnd - begin) / 1000;
    ctx.log(`  ${total} writes in ${writeSeconds.toFixed(1)} s; waiting for ${expected.size} deliveries`);

    // Until every expected delivery is in, or nothing new arrived for 60 s (at most 4 minutes).
    const arrived = () => {
      let n = 0;
      for (const r of rx.receipts) if (expected.has(`${r.hook}|${r.subject}`)) n++;
      return n;
    };
    const drainStart = performance.now();
    let lastCount = -1;
    let lastChange = performance.now();
    while (performance.now() - drainStart < 240_000) {
      const n = arrived();
      if (n >= expected.size) break;
      if (n !== lastCount) [lastCount, lastChange] = [n, performance.now()];
      else if (performance.now() - lastChange > 60_000) break;
      await sleep(250);
    }
    await sleep(2000); // late duplicates
    clearInterval(loadTimer);
    const drainSeconds = (performance.now() - drainStart) / 1000;

    const seen = new Map(); // `${hook}|${subject}` -> receipts
    const uuids = new Map(); // `${hook}|${uuid}` -> count
    let unexpected = 0;
    const unexpectedKinds = {};
    for (const r of rx.receipts.slice(stray)) {
      const key = `${r.hook}|${r.subject}`;
      uuids.set(`${r.hook}|${r.uuid}`, (uuids.get(`${r.hook}|${r.uuid}`) ?? 0) + 1);
      if (!expected.has(key)) {
        unexpected++;
        const name = r.subject.split('|')[0];
        unexpectedKinds[name] = (unexpectedKinds[name] ?? 0) + 1;
        continue;
      }
      seen.set(key, [...(seen.get(key) ?? []), r.at]);
    }
    const latencies = [];
    const byEvent = {};
    let missing = 0;
    let duplicates = 0;
    for (const [key, at] of expected) {
      const times = seen.get(key);
      if (!times) {
        missing++;
        continue;
      }
      if (times.length > 1) duplicates += times.length - 1;
      // A push is recorded before git's client has read the end of its answer, so a delivery can
      // arrive a hair before the write "ends" here: it counts as 0 ms.
      const ms = Math.max(0, Math.min(...times) - at);
      latencies.push(ms);
      const event = `${key.startsWith('/p/') ? 'project ' : ''}${key.split('|')[1]}`;
      (byEvent[event] ??= []).push(ms);
    }
    const sameUuidTwice = [...uuids.values()].filter((n) => n > 1).reduce((s, n) => s + n - 1, 0);
    const lastReceipt = Math.max(...rx.receipts.map((r) => r.at));
    // Deliveries received in each 10 s from the first write: whether they flow while writes arrive.
    const timeline = Array.from({ length: Math.ceil((lastReceipt - begin) / 10_000) }, () => 0);
    for (const r of rx.receipts.slice(stray)) timeline[Math.floor((r.at - begin) / 10_000)]++;
    // Whether deliveries keep up while writes arrive, or wait for them to end.
    const during = rx.receipts.slice(stray).filter((r) => r.at <= writesEnd).length;
    const after = rx.receipts.length - stray - during;
    return {
      writes: total,
      failed: failures.length,
      failures: failures.slice(0, 5),
      writeRate: Number((total / writeSeconds).toFixed(1)),
      writeP50: percentile(writeTimes, 50),
      writeP99: percentile(writeTimes, 99),
      // From when each write was due (open model), so a write that waited for the one before counts the wait.
      writeByKind: Object.fromEntries(
        Object.entries(writeByKind).map(([k, xs]) => [k, { p50: percentile(xs, 50), p99: percentile(xs, 99) }]),
      ),
      expected: expected.size,
      received: latencies.length,
      missing,
      duplicates,
      sameUuidTwice,
      unexpected,
      unexpectedKinds,
      deliveriesPerSecond: Math.round(rx.receipts.length / ((lastReceipt - begin) / 1000)),
      deliveriesPerSecondDuringWrites: Math.round(during / writeSeconds),
      deliveriesPerSecondAfterWrites: after ? Math.round(after / Math.max(0.001, (lastReceipt - writesEnd) / 1000)) : 0,
      receivedAfterWrites: after,
      loadAverage: { atStart: Number(loads[0].toFixed(2)), max: Number(Math.max(...loads).toFixed(2)) },
      drainSeconds: Math.round(drainSeconds),
      timeline,
      p50: percentile(latencies, 50),
      p90: percentile(latencies, 90),
      p99: percentile(latencies, 99),
      max: percentile(latencies, 100),
      byEvent: Object.fromEntries(
        Object.entries(byEvent).map(([e, xs]) => [
          e,
          { n: xs.length, p50: percentile(xs, 50), p99: percentile(xs, 99) },
        ]),
      ),
    };
  } finally {
    // Later workloads must not fan out to a receiver that is gone.
    for (const h of made.systemHooks) await api('DELETE', `/hooks/${h.id}`).catch(() => undefined);
    agent.destroy();
    await rx.close();
    rmSync(chain.dir, { recursive: true, force: true });
  }
}

/**
 * The Events API's read model seeded with `total` rows directly (1,000,000 through the API would take
 * hours): push rows as activity.projection.ts writes them for a branch update (`pushed to`, its
 * push_data), on 40 projects made through the API, half by a non-administrator (the caller measured)
 * and half by root, spread over the last year, with activity_event_counts summed from those rows as
 * the projection keeps them. A quarter of the caller's rows are in private projects the caller is not
 * a member of (left since), which the list must skip. The rows are keyed by positions above any the
 * event store has (10^12 + n), so they are not the projection of stored events: a rebuild would drop
 * them, and this workload deletes them when done.
 */
async function events(ctx) {
  const { lode } = ctx;
  const total = ctx.settings.quick ? 100_000 : 1_000_000;
  const base = 1_000_000_000_000;
  const stamp = Date.now().toString(36);
  const call = (method, path, body, token = lode.rootToken) => lode.call(method, path, token, body);
  const caller = await call('POST', '/users', {
    username: `ev-${stamp}`,
    email: `ev-${stamp}@example.com`,
    name: 'Events caller',
    password: 'bench-password-1',
    skip_confirmation: true,
  });
  const { token } = await call('POST', `/users/${caller.id}/impersonation_tokens`, { name: 'bench', scopes: ['api'] });
  const root = await call('GET', '/user');
  // 10 public, 10 internal, 10 private with the caller a member, 10 private without.
  const projects = [];
  for (let i = 0; i < 40; i++) {
    const visibility = i < 10 ? 'public' : i < 20 ? 'internal' : 'private';
    const p = await call('POST', '/projects', { name: `ev-${stamp}-${i}`, visibility });
    if (i >= 20 && i < 30) await call('POST', `/projects/${p.id}/members`, { user_id: caller.id, access_level: 30 });
    projects.push(p);
  }
  const ids = projects.map((p) => p.id);
  const visibleToCaller = ids.slice(0, 30);
  const db = new pg.Client({ connectionString: lode.databaseUrl });
  await db.connect();
  try {
    const started = performance.now();
    const batch = 100_000;
    for (let from = 0; from < total; from += batch) {
      await db.query(
        `insert into activity_events (position, seq, project_id, author_id, action, action_name, push_data, created_at)
         select $1::bigint + n, 0, ($4::int[])[1 + (n / 2) % 40], case when n % 2 = 0 then $5::int else $6::int end,
                'pushed', 'pushed to',
                jsonb_build_object('commit_count', 1, 'action', 'pushed', 'ref_type', 'branch',
                  'commit_from', md5((n - 1)::text) || substr(md5(n::text), 1, 8),
                  'commit_to', md5(n::text) || substr(md5((n + 1)::text), 1, 8),
                  'ref', 'master', 'commit_title', 'Change ' || n),
                now() - interval '1 year' + (n * (interval '1 year' / $7::int))
           from generate_series($2::int, $3::int) n`,
        [base, from, Math.min(from + batch, total) - 1, ids, caller.id, root.id, total],
      );
    }
    await db.query(
      `insert into activity_event_counts (author_id, project_id, action, events)
       select author_id, project_id, action, count(*) from activity_events where position >= $1
        group by author_id, project_id, action
       on conflict (author_id, project_id, action) do update set events = activity_event_counts.events + excluded.events`,
      [base],
    );
    // What autovacuum would have done by the time a busy table held a million rows.
    await db.query('analyze activity_events, activity_event_counts');
    const seedSeconds = Math.round((performance.now() - started) / 1000);
    const { rows } = await db.query(`select count(*)::int as n from activity_events`);
    ctx.log(`  ${rows[0].n} rows in activity_events (${total} seeded in ${seedSeconds} s)`);

    // The real route with a real token: one request each, checked against the table, before timing.
    const expectedTotal = async (authorId, projectIds) =>
      (
        await db.query(
          `select count(*)::int as n from activity_events where author_id = $1 and ($2::int[] is null or project_id = any($2))`,
          [authorId, projectIds],
        )
      ).rows[0].n;
    const check = async (who, tok, authorId, projectIds) => {
      const res = await fetch(lode.url('/events?per_page=100'), { headers: { 'PRIVATE-TOKEN': tok } });
      const body = await res.json();
      const want = await expectedTotal(authorId, projectIds);
      const total = Number(res.headers.get('x-total'));
      if (res.status !== 200 || body.length !== 100 || total !== want || body[0].author_id !== authorId)
        throw new Error(`${who}: ${res.status}, ${body.length} rows, X-Total ${total} (want ${want})`);
      return total;
    };
    const callerTotal = await check('caller', token, caller.id, visibleToCaller);
    const rootTotal = await check('root', lode.rootToken, root.id, null);

    const measure = (tok) =>
      ctx.median(
        () =>
          ctx.cannon(lode.url('/events?per_page=100'), {
            rate: 50,
            connections: 10,
            headers: { 'PRIVATE-TOKEN': tok },
          }),
        'p90',
      );
    const user = await measure(token);
    const admin = await measure(lode.rootToken);
    // One request at a time (no queueing): what a request costs the server on this machine now.
    const alone = async (tok) => {
      const ms = [];
      for (let i = 0; i < 100; i++) {
        const t = performance.now();
        const res = await fetch(lode.url('/events?per_page=100'), { headers: { 'PRIVATE-TOKEN': tok } });
        await res.arrayBuffer();
        ms.push(performance.now() - t);
      }
      return { p50: percentile(ms, 50), p90: percentile(ms, 90) };
    };
    const userAlone = await alone(token);
    const adminAlone = await alone(lode.rootToken);
    return { rows: rows[0].n, seeded: total, seedSeconds, callerTotal, rootTotal, user, admin, userAlone, adminAlone };
  } finally {
    // Leave the read model as the events made it: the seeded rows out, the counts of these projects recounted.
    await db.query(`delete from activity_events where position >= $1`, [base]);
    await db.query(`delete from activity_event_counts where project_id = any($1)`, [ids]);
    await db.query(
      `insert into activity_event_counts (author_id, project_id, action, events)
       select author_id, project_id, action, count(*) from activity_events where project_id = any($1)
        group by author_id, project_id, action`,
      [ids],
    );
    await db.end();
  }
}

const fmt = (f) => `${f.rps} req/s, P50/P90/P99 ${f.p50}/${f.p90}/${f.p99} ms`;
const clean = (f) => f.non2xx === 0 && f.errors === 0;
const cleanNote = (f) => (clean(f) ? '' : ` (${f.non2xx} non-2xx, ${f.errors} errors)`);

export const HOOK_EVENT_WORKLOADS = [
  {
    id: 'WEBHOOKS',
    ownDataset: true,
    name: '1,000 mixed writes at 20/s (project creates, member adds, SSH keys, git pushes), 20 system hooks and 20 project hooks',
    target: 'every expected delivery exactly once; write answer to receipt P99 <= 500 ms',
    run: webhooks,
    check: (f) => ({
      met: f.failed === 0 && f.missing === 0 && f.duplicates === 0 && f.sameUuidTwice === 0 && f.p99 <= 500,
      detail:
        `${f.writes} writes at ${f.writeRate}/s (answer P50/P99 ${f.writeP50}/${f.writeP99} ms${f.failed ? `, ${f.failed} failed (${f.failures.join('; ')})` : ''}); ` +
        `${f.received} of ${f.expected} expected deliveries, ${f.missing} missing, ${f.duplicates} duplicates, ` +
        `${f.sameUuidTwice} event UUIDs twice to one hook, ${f.unexpected} unexpected; ${f.deliveriesPerSecond} deliveries/s ` +
        `(${f.deliveriesPerSecondDuringWrites}/s while writes arrived, ${f.deliveriesPerSecondAfterWrites}/s for the ${f.receivedAfterWrites} after), ` +
        `load average ${f.loadAverage.atStart} at the first write, at most ${f.loadAverage.max}, ` +
        `drained ${f.drainSeconds} s after the last write; deliveries per 10 s from the first write ${f.timeline.join(' ')}; write answer to receipt P50/P90/P99 ${f.p50}/${f.p90}/${f.p99} ms (max ${f.max})`,
    }),
  },
  {
    id: 'EVENTS',
    ownDataset: true,
    name: 'GET /events?per_page=100 with 1,000,000 rows in the read model, 50 req/s',
    target: 'P90 <= 50 ms',
    run: events,
    check: (f) => ({
      met: f.user.p90 <= 50 && f.admin.p90 <= 50 && clean(f.user) && clean(f.admin),
      detail:
        `${f.rows} rows (${f.seeded} seeded in ${f.seedSeconds} s); non-administrator (X-Total ${f.callerTotal}): ${fmt(f.user)}${cleanNote(f.user)}; ` +
        `administrator (X-Total ${f.rootTotal}): ${fmt(f.admin)}${cleanNote(f.admin)}; one at a time P50/P90: ` +
        `non-administrator ${f.userAlone.p50}/${f.userAlone.p90} ms, administrator ${f.adminAlone.p50}/${f.adminAlone.p90} ms`,
    }),
  },
];
