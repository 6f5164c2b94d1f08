import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Metrics } from '../metrics/metrics';
import type { RequestRateLimits } from '../throttle/rate-limits';
import { requestIdFor } from './request-context.middleware';
import { answeredStatus, labelRoute, recordAnswer } from './request-log.middleware';
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
  const answer = (req: IncomingMessage, res: ServerResponse, hot: HotAnswer, started: bigint) => {
    const requestId = requestIdFor(req.headers['x-request-id']);
    let recorded = false;
    const record = () => {
      if (recorded) return;
      recorded = true;
      recordAnswer(metrics, {
        method: 'GET',
        route: hot.route,
        path: req.url ?? '',
        status: answeredStatus(res),
        seconds: Number(process.hrtime.bigint() - started) / 1e9,
        requestId,
        userId: null,
        clientAddress: () => parts.clientAddress(req),
      });
    };
    res.once('finish', record);
    res.once('close', record);
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
  };
  return (req, res) => {
    if (database.unreachable) return app(req, res);
    const found = hotLookup(reads, req);
    if (!found) return app(req, res);
    const started = process.hrtime.bigint();
    // A miss, or a lookup that failed (its database fence), is the route's to answer.
    found.then(
      (hot) => (hot ? answer(req, res, hot, started) : app(req, res)),
      () => app(req, res),
    );
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
  };
  return (req: Request, res: Response, next: NextFunction) => {
    // Before any router, `url` is the whole URL.
    const found = hotLookup(reads, req);
    if (!found) return next();
    found.then((hot) => (hot ? answer(req, res, hot) : next())).catch(next);
  };
}
