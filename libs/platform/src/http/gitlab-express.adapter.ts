import { StreamableFile } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import type { Express, NextFunction, Request, Response } from 'express';
import { sendJson } from './json-response';

type NotFoundHandler = Parameters<ExpressAdapter['setNotFoundHandler']>[0];
type RouteInfo = NonNullable<Parameters<ExpressAdapter['setNotFoundHandler']>[2]>[number];

/** What an Express 5 router layer offers to ask, without handling, whether a route serves a path. */
interface RouteLayer {
  match(path: string): unknown;
  route?: { _methods(): string[] };
}

/**
 * Nest's Express adapter, answering controller results as bare `application/json` (see sendJson),
 * and a known path asked with a method it does not serve as 405 with `Allow` (OPTIONS: 204 with it).
 */
export class GitlabExpressAdapter extends ExpressAdapter {
  override reply(response: Response, body: unknown, statusCode?: number): unknown {
    if (body instanceof StreamableFile || Buffer.isBuffer(body)) return super.reply(response, body, statusCode);
    if (statusCode) response.status(statusCode);
    if (response.statusCode === 204 || response.statusCode === 304 || body === undefined) {
      response.end();
      return;
    }
    sendJson(response, response.statusCode, body);
  }

  /**
   * The methods the application's routes serve at `path` (HEAD wherever GET is), in the order they
   * were declared; empty for a path no route knows.
   */
  methodsAt(path: string): string[] {
    const stack = ((this.getInstance() as Express & { router?: { stack: RouteLayer[] } }).router?.stack ??
      []) as RouteLayer[];
    const methods = new Set<string>();
    for (const layer of stack)
      if (layer.route && layer.match(path)) for (const m of layer.route._methods()) methods.add(m);
    return [...methods];
  }

  /**
   * Before Nest's 404: a path some route serves, asked with another method, answers Grape's
   * `405 {"error":"405 Not Allowed"}` with `Allow: OPTIONS, GET, HEAD` (its form: OPTIONS first, comma
   * and space), and OPTIONS answers 204 with that header. GitLab's own catch-all route may turn the
   * 405 into a 404 (docs/notes/gitlab-settings-pagination-and-answers.md §3.1, unverified); clients
   * that read `Allow` learn more from this. After Nest's 404 for `/api/v4`, paths outside it are a
   * JSON 404 too, never Express's HTML page.
   */
  override setNotFoundHandler(handler: NotFoundHandler, prefix?: string, excludedRoutes?: RouteInfo[]): unknown {
    this.use((req: Request, res: Response, next: NextFunction) => {
      const methods = this.methodsAt(req.path);
      if (!methods.length) return next();
      const allow = ['OPTIONS', ...methods].join(', ');
      res.setHeader('Allow', allow);
      if (req.method === 'OPTIONS') {
        res.status(204).end();
        return;
      }
      sendJson(res, 405, { error: '405 Not Allowed' });
    });
    const result: unknown = super.setNotFoundHandler(handler, prefix, excludedRoutes);
    this.use(handler);
    return result;
  }
}
