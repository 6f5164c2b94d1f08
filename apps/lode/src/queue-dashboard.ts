import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import {
  JobKinds,
  markAuthenticated,
  parseWorkerName,
  QUEUE_DASHBOARD_PATH,
  QueueHandles,
  RequestContexts,
  sendJson,
  Unauthorized,
  type Actor,
} from '@app/platform';
import { ActorResolver, AuthThrottled, UserBlocked } from '@app/users';
import type { INestApplication } from '@nestjs/common';
import type { Queue } from 'bullmq';
import type { Express, NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * What the dashboard's answers may load: the server's own scripts, styles and API, and nothing from
 * elsewhere. bull-board's page keeps inline styles (its loading spinner) and data as an inline JSON
 * block, which no script policy governs; it runs no inline script.
 */
export const QUEUE_DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * bull-board's page links a stylesheet on Google Fonts for its typefaces. A self-hosted service sends
 * an administrator's browser nowhere else: on a network without internet access the page waits for
 * it, and elsewhere the request tells a third party who opens the dashboard. Every `<link>` to another
 * origin is taken out of the rendered page, which then uses the stylesheet's fallback fonts.
 */
const REMOTE_LINK = /<link\b[^>]*\bhref=["']?(?:https?:)?\/\/[^>]*>[ \t]*\n?/gi;
const withoutRemoteLinks = (html: string) => html.replace(REMOTE_LINK, '');

type RenderCallback = (err: Error | null, html?: string) => void;
type RenderEngine = (path: string, options: object, callback: RenderCallback) => void;

/** The board's view engine, with what it renders passed through `withoutRemoteLinks`. */
function renderWithoutRemoteLinks(board: Express): void {
  const render = (board as Express & { engines: Record<string, RenderEngine> }).engines['.ejs'];
  if (!render) throw new Error('the queue dashboard has no ejs view engine to wrap');
  board.engine('ejs', (path, options, callback) =>
    render(path, options, (err, html) => callback(err, html === undefined ? html : withoutRemoteLinks(html))),
  );
}

/**
 * The queue dashboard (bull-board) at `/-/queues`: every declared queue, its jobs by state, failed
 * jobs' errors, and retrying them. For administrators only, who authenticate as git over HTTP does:
 * HTTP Basic with any user name and a token (with the `api` scope) as the password, checked by the
 * same `ActorResolver.byBasicAuth`. A request without credentials, or with refused ones, is 401 with a
 * Basic challenge, so a browser asks for them; a signed-in user who is no administrator (or whose
 * token lacks `api`) gets the answer of a path that does not exist (Nest's 404, reached by passing the
 * request on), as GitLab hides its admin pages from non-administrators.
 */
export function queueDashboard(app: INestApplication): RequestHandler {
  const handles = app.get(QueueHandles);
  const actors = app.get(ActorResolver, { strict: false });
  const server = new ExpressAdapter().setBasePath(QUEUE_DASHBOARD_PATH);
  const kinds = app.get(JobKinds, { strict: false });
  createBullBoard({
    queues: handles.all().map((queue) => new LodeQueueAdapter(queue, kinds)),
    serverAdapter: server,
    options: { uiConfig: { boardTitle: 'Lode queues' } },
  });
  const board = server.getRouter() as Express;
  renderWithoutRemoteLinks(board);
  return (req: Request, res: Response, next: NextFunction) => {
    administrator(actors, req).then(
      (actor) => {
        if (actor === 'unauthenticated') {
          res.setHeader('WWW-Authenticate', 'Basic realm="Lode queues", charset="UTF-8"');
          sendJson(res, 401, { message: '401 Unauthorized' });
          return;
        }
        if (!actor) return next();
        // The request's log line names the administrator, as the API's guard leaves it.
        (req as Request & { actor?: Actor }).actor = actor;
        const context = RequestContexts.current();
        if (context) context.actor = actor;
        markAuthenticated(res);
        res.setHeader('Content-Security-Policy', QUEUE_DASHBOARD_CSP);
        board(req, res, next);
      },
      (err: unknown) => next(err),
    );
  };
}

/**
 * The administrator the request's Basic credentials belong to; `unauthenticated` without accepted
 * credentials (none, refused, a blocked user's, or too many failures from the address); undefined for
 * a user who is no administrator.
 */
async function administrator(actors: ActorResolver, req: Request): Promise<Actor | 'unauthenticated' | undefined> {
  try {
    const actor = (await actors.byBasicAuth(req.headers.authorization, req.ip))?.actor;
    if (!actor) return 'unauthenticated';
    return actor.isAdmin && actor.scopes.includes('api') ? actor : undefined;
  } catch (err) {
    if (err instanceof Unauthorized || err instanceof UserBlocked || err instanceof AuthThrottled)
      return 'unauthenticated';
    throw err;
  }
}

type BoardWorker = NonNullable<Awaited<ReturnType<BullMQAdapter['getWorkers']>>>[number];

/**
 * The board's adapter, with this process's own running worker of the queue added to the ones the
 * backend lists: the embedded database's queue backend lists no connections, so without it the board
 * would show "No workers" over queues this very process works.
 */
class LodeQueueAdapter extends BullMQAdapter {
  constructor(
    private readonly lodeQueue: Queue,
    private readonly kinds: JobKinds | undefined,
  ) {
    super(lodeQueue);
  }

  override async getWorkers(): Promise<BoardWorker[] | null> {
    const listed = await super.getWorkers().catch(() => null);
    const own = (this.kinds?.workers() ?? []).filter(
      ({ queue, worker }) => queue === this.lodeQueue.name && worker.isRunning(),
    );
    const out = [...(listed ?? [])];
    for (const { worker } of own) {
      const name = worker.opts.name ?? null;
      if (!name || !parseWorkerName(name) || out.some((w) => w.name === name)) continue;
      out.push({ id: `local-${process.pid}`, name, addr: 'this process', age: Math.floor(process.uptime()) });
    }
    return out.length || listed ? out : null;
  }
}
