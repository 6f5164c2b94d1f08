import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { LodeConfig } from '../config/lode-config';
import { DependencyProbe } from '../dependency-probe';
import { AddressAllowlist } from '../metrics/address-allowlist';
import { Metrics } from '../metrics/metrics';
import { JobKinds } from '../queue/job-processor';
import { EventLoopWatch } from './event-loop-watch';
import { liveness, readiness, type ProbeAnswer } from './health.controller';

/**
 * A worker-only process (`LODE_ROLE=worker`) serves no HTTP, so a supervisor could not ask it how it
 * is. On LODE_WORKER_HEALTH_PORT (0, the default: none) it answers three things, nothing else:
 * `/-/liveness` (the event loop, and every BullMQ worker of the process still running),
 * `/-/readiness` (PostgreSQL and the queue backend, `?all=1` as the API's), and `/-/metrics` to the
 * addresses of LODE_METRICS_ALLOW (no token is read here), so its own counters (webhook deliveries)
 * can be scraped. docker-compose.yml's worker health check asks `/-/liveness`.
 */
@Injectable()
export class WorkerHealthServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('WorkerHealth');
  private readonly allowlist: AddressAllowlist;
  private server?: Server;

  constructor(
    private readonly config: LodeConfig,
    private readonly loop: EventLoopWatch,
    private readonly probe: DependencyProbe,
    private readonly kinds: JobKinds,
    private readonly metrics: Metrics,
  ) {
    this.allowlist = new AddressAllowlist(config.metricsAllow);
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.config.workerHealthPort) return;
    const server = createServer((req, res) => {
      this.answer(req, res).catch((err: unknown) => {
        this.logger.warn(`${req.url}: ${String(err)}`);
        if (!res.headersSent) send(res, { status: 503, body: { status: 'failed', message: 'probe failed' } });
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.config.workerHealthPort, this.config.host, () => resolve());
    });
    this.server = server;
    this.logger.log(`health on http://${this.config.host}:${this.config.workerHealthPort}/-/liveness`);
  }

  /** The port it listens on (LODE_WORKER_HEALTH_PORT), once started. */
  port(): number | undefined {
    const address = this.server?.address();
    return address && typeof address === 'object' ? address.port : undefined;
  }

  private async answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://worker');
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, notFound());
    switch (url.pathname) {
      case '/-/liveness':
        return send(res, liveness(this.loop, this.stoppedWorkers()));
      case '/-/readiness': {
        const all = url.searchParams.get('all');
        return send(res, await readiness(this.probe, all === '1' || all === 'true'));
      }
      case '/-/metrics': {
        if (!this.allowlist.allows(req.socket.remoteAddress)) return send(res, notFound());
        const { contentType, body } = await this.metrics.text();
        res.writeHead(200, { 'Content-Type': contentType, 'Cache-Control': 'no-store' });
        res.end(body);
        return;
      }
      default:
        return send(res, notFound());
    }
  }

  /** The queues whose worker has stopped for good (closed, or its run loop ended), for liveness. */
  private stoppedWorkers(): string | undefined {
    const stopped = this.kinds
      .workers()
      .filter(({ worker }) => !worker.isRunning())
      .map(({ queue }) => queue);
    return stopped.length ? `the workers of ${stopped.join(', ')} are not running` : undefined;
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

const notFound = (): ProbeAnswer => ({ status: 404, body: { message: '404 Not Found' } });

function send(res: ServerResponse, { status, body }: ProbeAnswer): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) });
  res.end(payload);
}
