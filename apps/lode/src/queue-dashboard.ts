import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import {
  markAuthenticated,
  QUEUE_DASHBOARD_PATH,
  QueueHandles,
  RequestContexts,
  Unauthorized,
  type Actor,
} from '@app/platform';
import { ActorResolver, AuthThrottled, UserBlocked } from '@app/users';
import type { INestApplication } from '@nestjs/common';
import type { NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * The queue dashboard (bull-board) at `/-/queues`: every declared queue, its jobs by state, failed
 * jobs' errors, and retrying them. For administrators only, who authenticate as git over HTTP does:
 * HTTP Basic with any user name and a token (with the `api` scope) as the password, checked by the
 * same `ActorResolver.byBasicAuth`. Anyone else, without credentials, with refused ones or as a
 * non-administrator, gets the answer of a path that does not exist (Nest's 404, reached by passing
 * the request on), never a challenge: as GitLab hides its admin pages, nothing shows the dashboard is
 * here. So a browser never prompts; send the header (see README).
 */
export function queueDashboard(app: INestApplication): RequestHandler {
  const handles = app.get(QueueHandles);
  const actors = app.get(ActorResolver, { strict: false });
  const server = new ExpressAdapter().setBasePath(QUEUE_DASHBOARD_PATH);
  createBullBoard({
    queues: handles.all().map((queue) => new BullMQAdapter(queue)),
    serverAdapter: server,
    options: { uiConfig: { boardTitle: 'Lode queues' } },
  });
  const board = server.getRouter() as RequestHandler;
  return (req: Request, res: Response, next: NextFunction) => {
    administrator(actors, req).then(
      (actor) => {
        if (!actor) return next();
        // The request's log line names the administrator, as the API's guard leaves it.
        (req as Request & { actor?: Actor }).actor = actor;
        const context = RequestContexts.current();
        if (context) context.actor = actor;
        markAuthenticated(res);
        board(req, res, next);
      },
      (err: unknown) => next(err),
    );
  };
}

/** The administrator the request's Basic credentials belong to; undefined for anyone else. */
async function administrator(actors: ActorResolver, req: Request): Promise<Actor | undefined> {
  try {
    const actor = (await actors.byBasicAuth(req.headers.authorization, req.ip))?.actor;
    return actor?.isAdmin && actor.scopes.includes('api') ? actor : undefined;
  } catch (err) {
    if (err instanceof Unauthorized || err instanceof UserBlocked || err instanceof AuthThrottled) return undefined;
    throw err;
  }
}
