import type { NextFunction, Request, Response } from 'express';

/** What an answer to an authenticated request carries: it may hold the caller's data, so no shared or stored copy. */
export const AUTHENTICATED_CACHE_CONTROL = 'private, no-store';

/** The headers `securityHeadersMiddleware` sets, as names and values in turn (what `writeHead` takes). */
export const SECURITY_HEADERS: readonly string[] = ['X-Content-Type-Options', 'nosniff', 'X-Frame-Options', 'DENY'];

/**
 * On every answer (the API, git over HTTP, uploads, health): no content sniffing, no framing. Routes that
 * serve user content (raw blobs, uploads, avatars) add their own type, disposition and sandbox headers.
 */
export function securityHeadersMiddleware(_req: Request, res: Response, next: NextFunction): void {
  for (let i = 0; i < SECURITY_HEADERS.length; i += 2) res.setHeader(SECURITY_HEADERS[i], SECURITY_HEADERS[i + 1]);
  next();
}

/** Marks an answer as one to an authenticated caller (set when the credentials are accepted). */
export function markAuthenticated(res: Response): void {
  if (!res.headersSent) res.setHeader('Cache-Control', AUTHENTICATED_CACHE_CONTROL);
}
