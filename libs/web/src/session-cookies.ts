import { LodeConfig, type Actor } from '@app/platform';
import { WebSessions } from '@app/users';
import { Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { PAGE_CSP } from './layout';
import { safeReturnTo, signInPage } from './sign-in';

export const SESSION_COOKIE = 'lode_session';

/** The value of one cookie from the `Cookie` header. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

function tokenHeader(req: Request): string | undefined {
  const header = req.headers['private-token'];
  if (typeof header === 'string' && header) return header;
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
  return bearer?.[1];
}

/**
 * The session cookie of the web pages: `HttpOnly`, `SameSite=Strict`, `Secure` when the request came
 * over TLS (directly, or as a trusted proxy says), and as short-lived as its session. Sign-in and
 * sign-out are the pages' only POSTs; both refuse a form sent from another origin (CSRF), on top of
 * what SameSite=Strict already keeps out.
 */
@Injectable()
export class SessionCookies {
  constructor(
    private readonly sessions: WebSessions,
    private readonly config: LodeConfig,
  ) {}

  /**
   * The signed-in user, or undefined; a cookie whose session is over is cleared. Without a cookie, a
   * token in `PRIVATE-TOKEN` or `Authorization: Bearer` (a script or a checker reading the pages as a
   * user; never from the query string, which would leak into logs and Referer) acts as the session would.
   */
  async actorOf(req: Request, res: Response): Promise<Actor | undefined> {
    const secret = cookieValue(req.headers.cookie, SESSION_COOKIE);
    if (!secret) return this.sessions.byHeaderToken(tokenHeader(req), req.ip ?? '');
    const actor = await this.sessions.resolve(secret);
    if (!actor) this.clear(req, res);
    return actor;
  }

  async signIn(req: Request, res: Response): Promise<void> {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const text = (v: unknown) => (typeof v === 'string' ? v : '');
    const returnTo = safeReturnTo(text(body.return_to));
    if (!this.sameOrigin(req)) return this.form(req, res, 403, returnTo, 'origin');
    const result = await this.sessions.signIn(text(body.login), text(body.password), req.ip ?? '');
    if ('refused' in result)
      return this.form(req, res, result.refused === 'throttled' ? 429 : 401, returnTo, result.refused);
    res.setHeader('Set-Cookie', this.cookie(req, result.secret, this.config.webSessionTtl));
    res.setHeader('Cache-Control', 'no-store');
    res.redirect(303, returnTo);
  }

  async signOut(req: Request, res: Response): Promise<void> {
    if (!this.sameOrigin(req)) return this.form(req, res, 403, '/', 'origin');
    const secret = cookieValue(req.headers.cookie, SESSION_COOKIE);
    if (secret) await this.sessions.end(secret);
    this.clear(req, res);
    res.setHeader('Cache-Control', 'no-store');
    res.redirect(303, '/');
  }

  private form(req: Request, res: Response, status: number, returnTo: string, error: string): void {
    res.setHeader('Content-Security-Policy', PAGE_CSP);
    res.setHeader('Cache-Control', 'no-store');
    res.status(status).type('text/html; charset=utf-8');
    res.end(signInPage({ actor: undefined, path: '/users/sign_in' }, returnTo, error).value);
  }

  /**
   * The form came from this site: its `Origin` (or, from an older browser, its `Referer`) is Lode's
   * external URL or the host the request was sent to. A POST with neither is refused.
   */
  private sameOrigin(req: Request): boolean {
    const from = req.headers.origin ?? req.headers.referer;
    if (!from || from === 'null') return false;
    let origin: string;
    try {
      origin = new URL(from).origin;
    } catch {
      return false;
    }
    const own = [new URL(this.config.externalUrl).origin];
    const host = req.headers.host;
    if (host) own.push(`${req.protocol}://${host}`);
    return own.includes(origin);
  }

  private clear(req: Request, res: Response): void {
    res.setHeader('Set-Cookie', this.cookie(req, '', 0));
  }

  private cookie(req: Request, value: string, maxAge: number): string {
    const parts = [`${SESSION_COOKIE}=${value}`, 'Path=/', `Max-Age=${maxAge}`, 'HttpOnly', 'SameSite=Strict'];
    if (req.secure) parts.push('Secure');
    return parts.join('; ');
  }
}
