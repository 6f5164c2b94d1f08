import { createServer, connect, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of a real service, which a test can stop and start again: stopping drops
 * every connection and refuses new ones, as if the service had gone away. `partition()` instead
 * makes the network silent: connections stay open and new ones are accepted, but nothing passes in
 * either direction (held, as TCP would retransmit it) until `heal()`. `delayMs` makes it slow
 * instead: every byte passes, that much late, in order (a loaded service, not a silent one). Other
 * test runs keep using the real service undisturbed.
 */
export class TcpProxy {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  private silent = false;
  private readonly held: (() => void)[] = [];
  port = 0;
  /** How late each chunk read from now on is passed on (0: at once). Set it while nothing flows: a lower value can overtake chunks still waiting. */
  delayMs = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  async start(): Promise<void> {
    const server = createServer((client) => {
      this.track(client);
      const open = () => {
        const upstream = connect(this.targetPort, this.targetHost);
        this.track(upstream);
        this.forward(client, upstream);
        this.forward(upstream, client);
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
      };
      if (this.silent) this.held.push(open);
      else open();
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as { port: number }).port;
    this.server = server;
  }

  /** The network goes silent: no byte passes, no connection is refused or closed. */
  partition(): void {
    this.silent = true;
  }

  /** What was held passes, and new bytes flow again. */
  heal(): void {
    this.silent = false;
    for (const release of this.held.splice(0)) release();
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private track(s: Socket): void {
    this.sockets.add(s);
    s.on('close', () => this.sockets.delete(s));
    s.on('error', () => undefined);
  }

  private forward(from: Socket, to: Socket): void {
    from.on('data', (chunk: Buffer) => {
      if (!this.silent && this.delayMs > 0) {
        setTimeout(() => to.write(chunk), this.delayMs);
        return;
      }
      if (!this.silent) {
        if (!to.write(chunk)) from.pause();
        return;
      }
      from.pause();
      this.held.push(() => {
        to.write(chunk);
        from.resume();
      });
    });
    to.on('drain', () => {
      if (!this.silent) from.resume();
    });
  }
}
