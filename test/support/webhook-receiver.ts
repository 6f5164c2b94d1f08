import { createServer, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the receiver heard. */
export interface Delivery {
  /** The request's path (and query), what tells a suite's hooks apart. */
  path: string;
  headers: IncomingHttpHeaders;
  /** The body as sent: what a signature is computed over. */
  raw: string;
  /**
   * The body parsed as JSON (GitLab's payloads all are), read field by field in the assertions;
   * undefined when it is not JSON.
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  /** When it arrived (Date.now()). */
  at: number;
}

/**
 * How the receiver answers a delivery: a status (body `ok`), a status with headers and body, or
 * `'never'` (the request is left open: the sender's timeout is what ends it).
 */
export type Answer = number | { status: number; headers?: OutgoingHttpHeaders; body?: string } | 'never';

export interface WebhookReceiver {
  /** `http://127.0.0.1:<port>`: a hook's URL is this and a path. */
  url: string;
  port: number;
  /** Every delivery heard, in order of arrival. */
  received: Delivery[];
  /** The deliveries to `path`. */
  at: (path: string) => Delivery[];
  /**
   * The first delivery of each Idempotency-Key: deliveries are at least once (a retry after a
   * timeout on a loaded machine carries the same key), and a receiver counts each once.
   */
  distinct: () => Delivery[];
  /** Stops listening, ending the requests still open. */
  close: () => Promise<void>;
}

/**
 * An HTTP receiver for webhook and system hook deliveries on 127.0.0.1 (a port of its own, or
 * `port` when a suite chose it beforehand), which records every request and answers it as `answer`
 * says (200 by default).
 */
export async function startWebhookReceiver(
  answer: Answer | ((delivery: Delivery) => Answer) = 200,
  { port: wanted = 0 }: { port?: number } = {},
): Promise<WebhookReceiver> {
  const received: Delivery[] = [];
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk) => (raw += chunk));
    req.on('end', () => {
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        body = undefined;
      }
      const delivery: Delivery = { path: req.url ?? '', headers: req.headers, raw, body, at: Date.now() };
      received.push(delivery);
      const reply = typeof answer === 'function' ? answer(delivery) : answer;
      if (reply === 'never') return;
      if (typeof reply === 'number') return void res.writeHead(reply).end('ok');
      res.writeHead(reply.status, reply.headers).end(reply.body ?? '');
    });
  });
  await new Promise<void>((r) => server.listen(wanted, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    received,
    at: (path) => received.filter((d) => d.path === path),
    distinct: () => {
      const seen = new Set<string>();
      return received.filter((d) => {
        const key = String(d.headers['idempotency-key']);
        if (seen.has(key)) return false;
        seen.add(key);
        return true;
      });
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
