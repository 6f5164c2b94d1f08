import type { ServerResponse } from 'node:http';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { RequestContexts, type Actor } from '../context';
import { Logs } from '../logging/log-output';
import type { Metrics } from '../metrics/metrics';
import { answeredElsewhere } from './answered-elsewhere';

/** Git over smart HTTP is served by middleware, not by a Nest route: its routes by their git suffix. */
const GIT_ROUTE = /\.git\/(info\/refs|git-upload-pack|git-receive-pack|HEAD|objects\/)/;

/** Where the queue dashboard (bull-board, apps/lode's queue-dashboard.ts) is mounted. */
export const QUEUE_DASHBOARD_PATH = '/-/queues';

const ROUTE_LABEL: unique symbol = Symbol('routeLabel');
type Labelled = Request & { [ROUTE_LABEL]?: string };

/**
 * For a handler outside Nest's router (the web pages, libs/web): the route template its answer is
 * counted and logged under; `undefined` takes it back when the handler passes the request on.
 */
export function labelRoute(req: Request, template: string | undefined): void {
  (req as Labelled)[ROUTE_LABEL] = template;
}

/**
 * The route template a request matched (`/api/v4/projects/:id`), never its URL: a metrics label with
 * one value per project or per query string would grow without bound. Unrouted requests (404s) share one value.
 */
export function routeOf(req: Request): string {
  // The dashboard's own router leaves its inner route (`/api/queues/:queueName`) behind: one value for it all.
  const path = (req.originalUrl ?? req.url ?? '').split('?')[0];
  if (path === QUEUE_DASHBOARD_PATH || path.startsWith(`${QUEUE_DASHBOARD_PATH}/`)) return `${QUEUE_DASHBOARD_PATH}/*`;
  const route = (req.route as { path?: unknown } | undefined)?.path;
  if (typeof route === 'string') return route;
  const label = (req as Labelled)[ROUTE_LABEL];
  if (label) return label;
  const git = GIT_ROUTE.exec(req.path);
  if (git) return `/*path.git/${git[1] === 'objects/' ? 'objects/*' : git[1]}`;
  return 'unmatched';
}

/** One answered request, as the request log and `lode_http_request_duration_seconds` take it. */
export interface AnsweredRequest {
  method: string;
  route: string;
  path: string;
  status: number;
  seconds: number;
  requestId: string | undefined;
  userId: number | null;
  /** The client's address, worked out only for a line that is written (a proxy-addr walk). */
  clientAddress: () => string | undefined;
}

/**
 * One `lode_http_request_duration_seconds` observation and, at its level, one log line: what every
 * answer gets, whether the Express chain (`requestLogMiddleware`) or the front door (`frontDoor`) sent it.
 */
export function recordAnswer(metrics: Pick<Metrics, 'httpDuration'>, answered: AnsweredRequest): void {
  const { method, route, status } = answered;
  metrics.httpDuration.observe({ method, route, status: String(status) }, answered.seconds);
  // At LODE_LOG_LEVEL=warn and above a request that did not fail writes no line: none is built
  // (its client address is a proxy-addr walk, its fields an object per request).
  const failed = status >= 500;
  if (!Logs.root.isLevelEnabled(failed ? 'error' : 'info')) return;
  const line = {
    request_id: answered.requestId,
    method,
    route,
    path: answered.path,
    status,
    duration: Math.round(answered.seconds * 1e6) / 1e3,
    user_id: answered.userId,
    remote_ip: answered.clientAddress(),
  };
  const msg = `${method} ${route} ${status}`;
  if (failed) Logs.root.error(line, msg);
  else Logs.root.info(line, msg);
}

/**
 * The status a request ended with for the log: its answer's, or 499 (as nginx logs it) when the
 * client went away before the answer was sent. An answer another process sends (an archive
 * download) is logged when it is handed over.
 */
export function answeredStatus(res: ServerResponse): number {
  return res.writableFinished || answeredElsewhere(res) ? res.statusCode : 499;
}

/**
 * After `requestContextMiddleware`: when the answer is sent (or the client goes away first), one
 * `recordAnswer` with the request id, method, route, status, duration (ms) and the user the request
 * acted as.
 */
export function requestLogMiddleware(metrics: Metrics): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const started = process.hrtime.bigint();
    const context = RequestContexts.current();
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      const actor = (req as Request & { actor?: Actor }).actor ?? context?.actor;
      recordAnswer(metrics, {
        method: req.method,
        route: routeOf(req),
        path: req.originalUrl,
        status: answeredStatus(res),
        seconds: Number(process.hrtime.bigint() - started) / 1e9,
        requestId: context?.requestId,
        userId: actor?.id ?? null,
        clientAddress: () => req.ip,
      });
    };
    res.once('finish', finish);
    res.once('close', finish);
    next();
  };
}
