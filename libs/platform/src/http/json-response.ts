import type { Response } from 'express';

/**
 * Writes JSON with `Content-Type: application/json` exactly: python-gitlab compares the header as a
 * string and refuses `application/json; charset=utf-8`, which Express's `res.json` would send.
 */
export function sendJson(res: Response, status: number, body: unknown): void {
  const payload = body === undefined ? '' : JSON.stringify(body);
  res.status(status);
  res.setHeader('Content-Type', 'application/json');
  res.setHeader('Content-Length', Buffer.byteLength(payload));
  res.end(payload);
}
