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

/**
 * After `requestContextMiddleware`: when the answer is sent (or the client goes away first, status
 * 499 as nginx logs it), one `lode_http_request_duration_seconds` observation and one log line with
 * the request id, method, route, status, duration (ms) and the user the request acted as.
 */
export function requestLogMiddleware(metrics: Metrics): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const started = process.hrtime.bigint();
    const context = RequestContexts.current();
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = routeOf(req);
      // An answer another process sends (an archive download) is logged when it is handed over.
      const status = res.writableFinished || answeredElsewhere(res) ? res.statusCode : 499;
      metrics.httpDuration.observe({ method: req.method, route, status: String(status) }, seconds);
      // At LODE_LOG_LEVEL=warn and above a request that did not fail writes no line: none is built
      // (its client address is a proxy-addr walk, its fields an object per request).
      const failed = status >= 500;
      if (!Logs.root.isLevelEnabled(failed ? 'error' : 'info')) return;
      const actor = (req as Request & { actor?: Actor }).actor ?? context?.actor;
      const line = {
        request_id: context?.requestId,
        method: req.method,
        route,
        path: req.originalUrl,
        status,
        duration: Math.round(seconds * 1e6) / 1e3,
        user_id: actor?.id ?? null,
        remote_ip: req.ip,
      };
      const msg = `${req.method} ${route} ${status}`;
      if (failed) Logs.root.error(line, msg);
      else Logs.root.info(line, msg);
    };
    res.once('finish', finish);
    res.once('close', finish);
    next();
  };
}
