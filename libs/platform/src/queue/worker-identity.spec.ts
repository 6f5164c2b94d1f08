import { hostname } from 'node:os';
import { parseWorkerName, workerName, workerOptions } from './worker-identity';

describe('worker identity', () => {
  it("names a worker by this process's pid, start, concurrency and host, and reads it back", () => {
    const name = workerName(16);
    expect(parseWorkerName(name)).toEqual({
      pid: process.pid,
      startedAt: Math.floor(performance.timeOrigin / 1000),
      concurrency: 16,
      hostname: hostname(),
    });
  });

  it("reads the name inside the connection names BullMQ's getWorkers reports", () => {
    const who = { pid: 7, startedAt: 1_700_000_000, concurrency: 2, hostname: 'worker-1' };
    // Redis' CLIENT LIST: `<prefix>:<base64 of the queue>:w:<name>`; PostgreSQL's application_name: `<queue>:w:<name>`.
    expect(parseWorkerName('lode:Z2l0:w:7:1700000000:2:worker-1')).toEqual(who);
    expect(parseWorkerName('git:w:7:1700000000:2:worker-1')).toEqual(who);
    // application_name keeps 63 bytes: a long host name is cut, the numbers before it are whole.
    const cut = `maintenance:w:7:1700000000:2:${'h'.repeat(80)}`.slice(0, 63);
    expect(parseWorkerName(cut)).toMatchObject({ pid: 7, startedAt: 1_700_000_000, concurrency: 2 });
  });

  it('reads nothing from the names of workers that Lode did not name', () => {
    expect(parseWorkerName('lode:Z2l0')).toBeUndefined();
    expect(parseWorkerName('lode:Z2l0:w:some-worker')).toBeUndefined();
    expect(parseWorkerName('')).toBeUndefined();
  });

  it('gives BullMQ the concurrency, the name and the metrics that job_stats counts', () => {
    const options = workerOptions({ concurrency: 2 });
    expect(options).toEqual({ concurrency: 2, name: workerName(2), metrics: { maxDataPoints: expect.any(Number) } });
    expect(options.metrics.maxDataPoints).toBeGreaterThan(0);
  });
});
