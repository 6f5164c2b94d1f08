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
import type { NextFunction, Request, RequestHandler, Response } from 'express';

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
  const board = server.getRouter() as RequestHandler;
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
