import { spawn, type ChildProcess } from 'node:child_process';
import Redis from 'ioredis';
import { freePort } from './test-app';

/**
 * A `redis-server` of the test's own, on a free port, without persistence: `restartEmpty()` kills it
 * and starts it again with no data, as a Redis restarted without persistence (or a failover to an
 * empty replica) would come back. Never the shared Redis other test runs use.
 */
export class OwnRedis {
  private child?: ChildProcess;
  port = 0;

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    if (!this.port) this.port = await freePort();
    const child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'],
      {
        stdio: 'ignore',
      },
    );
    this.child = child;
    const until = Date.now() + 10_000;
    for (;;) {
      const probe = new Redis(this.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      probe.on('error', () => undefined);
      try {
        await probe.connect();
        if ((await probe.ping()) === 'PONG') return;
      } catch {
        if (Date.now() > until) throw new Error(`redis-server on port ${this.port} did not start`);
        await new Promise((r) => setTimeout(r, 50));
      } finally {
        probe.disconnect();
      }
    }
  }

  /** Killed at once (SIGKILL, nothing saved), then started again empty on the same port. */
  async restartEmpty(): Promise<void> {
    await this.stop();
    await this.start();
  }

  async stop(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
  }
}
