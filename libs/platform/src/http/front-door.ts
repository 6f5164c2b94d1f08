import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { Logs } from '../logging/log-output';
import type { Metrics } from '../metrics/metrics';
import type { RequestRateLimits } from '../throttle/rate-limits';
import { requestIdFor } from './request-context.middleware';
import { answeredStatus, labelRoute, logAnswer, observeAnswer } from './request-log.middleware';
import { SECURITY_HEADERS } from './security-headers';

/**
 * An anonymous read's whole answer, made from memory: the route template it is logged and measured
 * under, its own headers as names and values in turn (never the common ones: the request id and
 * `SECURITY_HEADERS`), and its body. Always a 200.
 */
export interface HotAnswer {
  route: string;
  headers: readonly string[];
  body: Buffer;
  /** Counted once the answer is sent (not when the rate limit refuses it). */
  answered?: { inc(): void };
}

/**
 * One kind of hot read: given an anonymous GET's whole URL, undefined when the URL is not of its
 * kind (decided at once, without I/O); else the answer, or undefined when it is not kept (the
 * route answers then).
 */
export type HotRead = (url: string) => Promise<HotAnswer | undefined> | undefined;

/**
 * Whether a request is anonymous to every part of Lode: no credentials in any header GitLab reads
 * (PRIVATE-TOKEN, Authorization, JOB-TOKEN), no `sudo`, and no body that could carry `private_token`.
 * A hot read's URL pattern admits no query string but its own (`private_token` is never one of them).
 */
export function plainlyAnonymous(req: IncomingMessage): boolean {
  const h = req.headers;
  return (
    h['private-token'] === undefined &&
    h.authorization === undefined &&
    h['job-token'] === undefined &&
    h.sudo === undefined &&
    h['content-length'] === undefined &&
    h['transfer-encoding'] === undefined
  );
}

/** The answer one of `reads` is looking up for `req`, or undefined when none takes it. */
function hotLookup(reads: readonly HotRead[], req: IncomingMessage): Promise<HotAnswer | undefined> | undefined {
  if (req.method !== 'GET' || !plainlyAnonymous(req)) return undefined;
  const url = req.url ?? '';
  for (const read of reads) {
    const found = read(url);
    if (found) return found;
  }
  return undefined;
}

export interface FrontDoorParts {
  reads: readonly HotRead[];
  metrics: Pick<Metrics, 'httpDuration'>;
  /** `DatabaseWatch`: while PostgreSQL does not answer, everything goes to the chain, whose gate answers 503. */
  database: { readonly unreachable: string | undefined };
  /** The client's address as `req.ip` works it out (LODE_TRUSTED_PROXIES), for the log line. */
  clientAddress: (req: IncomingMessage) => string | undefined;
}

/**
 * The HTTP server's request listener in front of the Express application `app`: it answers the hot
 * anonymous reads (`reads`) that are kept in memory itself, and hands every other request to `app`
 * untouched. For a hot read Express's own dispatch (its request and answer objects, the middleware
 * chain) cost more than the answer; this does only what that chain would have done for it: the
 * request id (accepted or made, echoed), the security headers, the database gate (it steps aside),
 * the log line and the duration metric under the route's template, and the answer's head and body
 * in one write. The unauthenticated rate limit is the chain's to count: with it on, `app` keeps these
 * reads (`hotReadsMiddleware`) and this is not installed.
 */
export function frontDoor(app: RequestListener, parts: FrontDoorParts): RequestListener {
  const { reads, metrics, database } = parts;
  const record = (req: IncomingMessage, res: ServerResponse, route: string, requestId: string, started: bigint) => {
    const status = answeredStatus(res);
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    if (!observeAnswer(metrics, 'GET', route, status, seconds)) return;
    logAnswer('GET', route, status, seconds, {
      path: req.url ?? '',
      requestId,
      userId: null,
      remoteIp: parts.clientAddress(req),
    });
  };
  const answer = (req: IncomingMessage, res: ServerResponse, hot: HotAnswer, started: bigint) => {
    const requestId = requestIdFor(req.headers['x-request-id']);
    let recorded = false;
    const recordOnce = () => {
      if (recorded) return;
      recorded = true;
      record(req, res, hot.route, requestId, started);
    };
    res.once('finish', recordOnce);
    res.once('close', recordOnce);
    // One head, set at once: `writeHead` with a list takes no per-header bookkeeping.
    res.writeHead(200, [
      'X-Request-Id',
      requestId,
      ...SECURITY_HEADERS,
      ...hot.headers,
      'Content-Length',
      String(hot.body.length),
    ]);
    res.end(hot.body);
    hot.answered?.inc();
  };
  return (req, res) => {
    if (database.unreachable) return app(req, res);
    const found = hotLookup(reads, req);
    if (!found) return app(req, res);
    const started = process.hrtime.bigint();
    // A client that leaves while the lookup waits (its database fence) is logged as the chain logs
    // it, 499, under the route when the answer was found and `unmatched` when not: the chain's log
    // would hear of it only from a `close` already past.
    let left = false;
    const leaving = () => (left = true);
    res.once('close', leaving);
    found
      .then(
        (hot) => {
          res.off('close', leaving);
          if (left) record(req, res, hot?.route ?? 'unmatched', requestIdFor(req.headers['x-request-id']), started);
          else if (hot) answer(req, res, hot, started);
          else app(req, res);
        },
        // A lookup that failed is the route's to answer.
        () => {
          res.off('close', leaving);
          app(req, res);
        },
      )
      .catch((err: unknown) => {
        // Not expected (the answer's headers were checked when kept): a 500 rather than a process
        // ended by an unhandled rejection.
        Logs.root.error({ err, path: req.url }, 'The front door failed to answer');
        if (res.headersSent) res.destroy();
        else res.writeHead(500, { 'Content-Type': 'application/json' }).end('{"message":"500 Internal Server Error"}');
      });
  };
}

/**
 * The same hot reads inside the Express chain, where the unauthenticated rate limit is on: after the
 * request id, the log, the security headers and the database gate, a kept answer is counted as the
 * guard counts a request (and may be refused with 429), and sent before the Nest pipeline.
 */
export function hotReadsMiddleware(reads: readonly HotRead[], limits: RequestRateLimits): RequestHandler {
  const answer = async (req: Request, res: Response, hot: HotAnswer) => {
    await limits.count({ address: req.ip ?? 'unknown' }, res);
    labelRoute(req, hot.route);
    for (let i = 0; i < hot.headers.length; i += 2) res.setHeader(hot.headers[i], hot.headers[i + 1]);
    res.setHeader('Content-Length', hot.body.length);
    res.statusCode = 200;
    res.end(hot.body);
    hot.answered?.inc();
  };
  return (req: Request, res: Response, next: NextFunction) => {
    // Before any router, `url` is the whole URL.
    const found = hotLookup(reads, req);
    if (!found) return next();
    found.then((hot) => (hot ? answer(req, res, hot) : next())).catch(next);
  };
}
