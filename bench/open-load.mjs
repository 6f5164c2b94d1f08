// The open model: requests arrive at a fixed rate, evenly spaced, whether or not earlier ones have
// answered, and each latency runs from the moment its request was due (so a server that falls
// behind is charged for the wait, with no coordinated omission).
//
// Why not autocannon's `overallRate`: it lets each connection send its per-second quota back to
// back and then wait for the next one-second tick, so requests arrive in bursts at the start of
// every second; and it "corrects" latencies with an expected interval of ceil(1 / rate) = 1 ms,
// which fills the histogram with synthetic 1, 2, 3 ... ms samples. Both distort P50/P90/P99.
import { appendFileSync } from 'node:fs';
import http from 'node:http';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export const percentile = (sorted, p) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : NaN;

/** A request not answered within this long counts as an error (so one hung request cannot stall a run). */
const TIMEOUT_MS = 30_000;

/** One HTTP request on `agent`; resolves its status, or 0 for a socket error or a time-out. */
export function send(agent, url, { method = 'GET', headers = {}, body } = {}) {
  return new Promise((resolve) => {
    const req = http.request(url, { method, headers, agent, timeout: TIMEOUT_MS }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks) }));
      res.on('error', () => resolve({ status: 0 }));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', () => resolve({ status: 0 }));
    req.end(body);
  });
}

/**
 * Runs `rate` arrivals a second for `duration` seconds. Each arrival calls `arrive(due, record)`,
 * which sends its request(s) and calls `record(status, ms)` for each; by default one GET of `url`.
 * Answers requests/s completed, P50/P90/P99 in ms (rounded up) of the 2xx answers, the count of
 * non-2xx answers and of socket errors (a counted run wants both at 0).
 */
export async function openLoad(url, { rate, duration, headers = {}, method, body, sockets = 128, arrive } = {}) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: sockets });
  const latencies = [];
  let non2xx = 0;
  let errors = 0;
  const timeline = process.env.LODE_BENCH_TIMELINE ? [] : undefined;
  const record = (status, ms) => {
    timeline?.push(`${Math.round(performance.now() - start - ms)}\t${Math.round(ms)}\t${status}`);
    if (status === 0) errors++;
    else if (status < 200 || status > 299) non2xx++;
    else latencies.push(ms);
  };
  const fire =
    arrive ??
    (async (due) => record((await send(agent, url, { method, headers, body })).status, performance.now() - due));
  const total = Math.round(rate * duration);
  const start = performance.now();
  const inflight = [];
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait >= 1) await sleep(wait);
    inflight.push(fire(due, record, agent));
  }
  await Promise.all(inflight);
  const elapsed = (performance.now() - start) / 1000;
  // LODE_BENCH_TIMELINE=FILE: every answer as `ms after the start it was sent<TAB>ms it took<TAB>status`,
  // under a `# start <epoch ms>` line, to find when in a run the slow ones came.
  if (timeline)
    appendFileSync(
      process.env.LODE_BENCH_TIMELINE,
      `# start ${Math.round(performance.timeOrigin + start)}\n${timeline.join('\n')}\n`,
    );
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const at = (p) => Math.ceil(percentile(latencies, p));
  return {
    rps: Math.round((latencies.length + non2xx) / elapsed),
    p50: at(50),
    p90: at(90),
    p99: at(99),
    non2xx,
    errors,
    requests: latencies.length + non2xx + errors,
  };
}
