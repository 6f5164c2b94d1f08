import type { IncomingMessage } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { sendJson } from './json-response';

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** JSON (also `application/*+json`), urlencoded forms and multipart: the bodies Lode reads parameters from. */
const READABLE =
  /^(application\/json|application\/[\w.+-]+\+json|application\/x-www-form-urlencoded|multipart\/form-data)$/i;

/**
 * Grape's formatter: a request that carries a body of another type (`application/xml`, `text/plain`...)
 * to a route that exists answers `415 {"error":"The provided content-type '<type>' is not supported."}`,
 * rather than running with its parameters silently unread. `routeExists` decides which requests
 * reach a route (an unknown path stays a 404); a body without a Content-Type is read as JSON would be.
 * GitLab 10.x also took `text/plain` (`content_type :txt`); later GitLab refuses it, as Lode does.
 */
export function mediaTypeGate(routeExists: (req: Request) => boolean) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const type = req.headers['content-type'];
    if (!type || !BODY_METHODS.has(req.method) || !hasBody(req)) return next();
    const mediaType = type.split(';')[0].trim();
    if (READABLE.test(mediaType) || !routeExists(req)) return next();
    // The refused body is not read; the connection is closed after the answer rather than drained.
    res.setHeader('Connection', 'close');
    sendJson(res, 415, { error: `The provided content-type '${mediaType}' is not supported.` });
  };
}

/** Whether the request carries a body (chunked, or a Content-Length other than 0). */
export function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}
