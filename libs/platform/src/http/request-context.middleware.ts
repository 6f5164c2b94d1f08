import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { RequestContexts } from '../context';

const ACCEPTABLE_ID = /^[\w.:-]{1,128}$/;

/** The caller's `X-Request-Id` when it is one Lode can log and echo (word characters, `.:-`, at most 128), else a new one. */
export function requestIdFor(given: string | string[] | undefined): string {
  return typeof given === 'string' && ACCEPTABLE_ID.test(given) ? given : randomUUID();
}

/** Accepts the caller's `X-Request-Id` (or makes one), echoes it, and opens the request's context. */
export function requestContextMiddleware(req: Request, res: Response, next: NextFunction): void {
  const requestId = requestIdFor(req.headers['x-request-id']);
  req.headers['x-request-id'] = requestId;
  res.setHeader('X-Request-Id', requestId);
  // `req.ip` honours `trust proxy` (LODE_TRUSTED_PROXIES, set by http-app.ts): the audit events' ip_address.
  const ip = req.ip;
  RequestContexts.run(ip ? { requestId, ip } : { requestId }, () => next());
}
