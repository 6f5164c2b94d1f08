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

/** One answered request's log line, beyond what its duration metric is labelled with. */
export interface AnsweredRequestLine {
  path: string;
  requestId: string | undefined;
  userId: number | null;
  remoteIp: string | undefined;
}

/**
 * One `lode_http_request_duration_seconds` observation, what every answer gets, whether the Express
 * chain (`requestLogMiddleware`) or the front door (`frontDoor`) sent it; answers whether its log
 * line is written at the current level. At LODE_LOG_LEVEL=warn and above a request that did not fail
 * writes none, and its caller builds none (the client address is a proxy-addr walk, the line an
 * object per request).
 */
export function observeAnswer(
  metrics: Pick<Metrics, 'httpDuration'>,
  method: string,
  route: string,
  status: number,
  seconds: number,
): boolean {
  metrics.httpDuration.observe({ method, route, status: String(status) }, seconds);
  return Logs.root.isLevelEnabled(status >= 500 ? 'error' : 'info');
}

/** The request log's line of one answer that `observeAnswer` said is written. */
export function logAnswer(
  method: string,
  route: string,
  status: number,
  seconds: number,
  line: AnsweredRequestLine,
): void {
  const fields = {
    request_id: line.requestId,
    method,
    route,
    path: line.path,
    status,
    duration: Math.round(seconds * 1e6) / 1e3,
    user_id: line.userId,
    remote_ip: line.remoteIp,
  };
  const msg = `${method} ${route} ${status}`;
  if (status >= 500) Logs.root.error(fields, msg);
  else Logs.root.info(fields, msg);
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
 * After `requestContextMiddleware`: when the answer is sent (or the client goes away first), its
 * duration observed and, at its level, its line logged with the request id, method, route, status,
 * duration (ms) and the user the request acted as.
 */
export function requestLogMiddleware(metrics: Metrics): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const started = process.hrtime.bigint();
    const context = RequestContexts.current();
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      const method = req.method;
      const route = routeOf(req);
      const status = answeredStatus(res);
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      if (!observeAnswer(metrics, method, route, status, seconds)) return;
      const actor = (req as Request & { actor?: Actor }).actor ?? context?.actor;
      logAnswer(method, route, status, seconds, {
        path: req.originalUrl,
        requestId: context?.requestId,
        userId: actor?.id ?? null,
        remoteIp: req.ip,
      });
    };
    res.once('finish', finish);
    res.once('close', finish);
    next();
  };
}
